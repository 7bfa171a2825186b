"""An :class:`Episode` is one immutable record of experience: raw evidence, never rewritten.

Its texts are valid UTF-8 without NUL characters (PostgreSQL's text cannot hold one, so no store
takes one) within :mod:`reverie.limits`, and its metadata plain JSON within them
(:func:`check_metadata`). One sent without an ``id`` gets one derived from its scope and content,
and one sent without ``importance`` gets one derived from its outcome (:func:`derive_importance`).
Its fingerprint covers what the caller sent, not what the store assigns, and hashes the metadata
in canonical form, so the same content always gives the same hash.
"""

from __future__ import annotations

import json
from datetime import datetime
from enum import StrEnum
from functools import lru_cache
from typing import Annotated, Any, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
    model_validator,
)

from reverie.hashing import canonical_json, content_hash
from reverie.limits import (
    MAX_ENTITY,
    MAX_METADATA_BYTES,
    MAX_METADATA_DEPTH,
    MAX_TEXT,
    MAX_TOOL,
    NUL_REASON,
    has_nul,
    json_depth,
)
from reverie.models.base import now_utc, parse_model, utc
from reverie.models.scope import NAME, Scope

__all__ = ["AGENT_EDIT", "HUMAN_EDIT", "Episode", "Outcome", "check_metadata", "derive_importance"]

HUMAN_EDIT = "human-edit"
"""``Episode.metadata["reverie"]`` of the episodes a Markdown import stores for a person's lines."""
AGENT_EDIT = "agent-edit"
"""``Episode.metadata["reverie"]`` of the episodes an agent's note stores for its new lines."""


@lru_cache(maxsize=4096)
def _scope_from_text(text: str) -> Scope:
    """Scopes are immutable, so the few distinct strings a process sees are parsed once."""
    return Scope.parse(text)


class Outcome(StrEnum):
    SUCCESS = "success"
    FAILURE = "failure"
    PARTIAL = "partial"
    TIMEOUT = "timeout"
    UNKNOWN = "unknown"


_BASE_IMPORTANCE = {
    Outcome.SUCCESS: 3,
    Outcome.UNKNOWN: 3,
    Outcome.PARTIAL: 5,
    Outcome.FAILURE: 6,
    Outcome.TIMEOUT: 6,
}


def derive_importance(outcome: Outcome, error: str | None) -> int:
    """Importance when the caller gave none: failures matter more, an error message more still."""
    return min(10, _BASE_IMPORTANCE[outcome] + (1 if error else 0))


_TEXT_FIELDS = (
    "session_id", "situation", "action", "outcome_details", "error", "lesson", "category",
    "tools", "entities",
)  # fmt: skip


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _check_utf8(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("contains a lone surrogate, which is not valid UTF-8 text") from None


def _check_text(text: str) -> None:
    """Text every store holds as it was sent: valid UTF-8 and no NUL character."""
    if "\x00" in text:
        raise ValueError(NUL_REASON)
    _check_utf8(text)


def _clean_list(values: list[str]) -> list[str]:
    if not values:
        return values
    seen: dict[str, None] = {}
    for value in values:
        cleaned = value.strip()
        if cleaned:
            seen.setdefault(cleaned, None)
    return list(seen)


_Tool = Annotated[str, StringConstraints(max_length=MAX_TOOL)]
_Entity = Annotated[str, StringConstraints(max_length=MAX_ENTITY)]


def check_metadata(value: dict[str, Any]) -> None:
    """Plain JSON within :mod:`reverie.limits`: depth first, since encoding a value nested
    past the interpreter's recursion limit would itself fail."""
    if json_depth(value, MAX_METADATA_DEPTH) > MAX_METADATA_DEPTH:
        raise ValueError(f"is nested more than {MAX_METADATA_DEPTH} levels deep")
    if has_nul(value):
        raise ValueError(NUL_REASON)
    try:
        encoded = json.dumps(value, allow_nan=False, ensure_ascii=False, separators=(",", ":"))
        _check_utf8(encoded)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"must be plain JSON (objects, arrays, strings, numbers): {exc}") from None
    size = len(encoded.encode("utf-8"))
    if size > MAX_METADATA_BYTES:
        raise ValueError(f"is {size:,} bytes as JSON; at most {MAX_METADATA_BYTES:,} are accepted")


class Episode(BaseModel):
    """One immutable record of experience.

    ``seq`` is assigned by the store on append and is the only order collection trusts;
    ``created_at`` is when it happened (a client clock, used for "time decides current").

    An episode sent without an ``id`` gets one derived from its scope and content
    (:meth:`content_id`), so sending the same episode twice stores it once. One sent without
    ``created_at`` is dated on arrival (``dated`` is then false): that date is the server's, not
    the client's, so it takes no part in the derived id nor in telling a retry from a conflict
    (:meth:`same_as`).
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=False)

    id: str = Field(default="", max_length=128)
    seq: int | None = None
    scope: Scope
    session_id: str | None = Field(default=None, max_length=MAX_TOOL)
    created_at: datetime = Field(default_factory=now_utc)
    situation: str = Field(default="", max_length=MAX_TEXT)
    action: str = Field(default="", max_length=MAX_TEXT)
    outcome: Outcome = Outcome.UNKNOWN
    outcome_details: str | None = Field(default=None, max_length=MAX_TEXT)
    error: str | None = Field(default=None, max_length=MAX_TEXT)
    lesson: str | None = Field(default=None, max_length=MAX_TEXT)
    importance: int | None = Field(default=None, ge=1, le=10)
    category: str | None = Field(default=None, max_length=MAX_TOOL)
    tools: list[_Tool] = Field(default_factory=list, max_length=256)
    entities: list[_Entity] = Field(default_factory=list, max_length=1024)
    metadata: dict[str, Any] = Field(default_factory=dict)
    consolidated_in: str | None = None

    @field_validator("scope", mode="before")
    @classmethod
    def _scope(cls, value: Any) -> Any:
        return _scope_from_text(value) if isinstance(value, str) else value

    @field_validator("scope")
    @classmethod
    def _not_org(cls, value: Scope) -> Scope:  # the org brain has no episodes
        if value.is_org:
            raise ValueError("the org brain is written only by promotion; it takes no episodes")
        return value

    @field_validator("created_at")
    @classmethod
    def _aware(cls, value: datetime) -> datetime:
        return utc(value)

    @field_validator("tools", "entities")
    @classmethod
    def _clean(cls, values: list[str]) -> list[str]:
        return _clean_list(values)

    @field_validator("metadata")
    @classmethod
    def _json_metadata(cls, value: dict[str, Any]) -> dict[str, Any]:
        if value:
            check_metadata(value)
        return value

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        if not NAME.match(value):
            raise ValueError("must be letters, digits, '_', '.', ':', '@' or '-' (max 128)")
        return value

    @model_validator(mode="after")
    def _complete(self) -> Self:
        if not (self.situation.strip() or self.action.strip()):
            raise ValueError("an episode needs a situation or an action")
        self._check_texts()
        if self.importance is None:
            self.importance = derive_importance(self.outcome, self.error)
        if "id" not in self.model_fields_set:
            self.id = self.content_id()
        return self

    @property
    def records_edit(self) -> bool:
        """Whether this episode records an edit of notes or pages (a person's, or an agent's
        note): the evidence behind a pinned revision, never an outcome nor an answer itself;
        the page it made says what holds now."""
        return self.metadata.get("reverie") in (HUMAN_EDIT, AGENT_EDIT)

    @property
    def dated(self) -> bool:
        """Whether ``created_at`` came with the episode rather than from the ingest clock."""
        return "created_at" in self.model_fields_set

    def dated_on_arrival(self, when: datetime) -> None:
        """Date an episode that came without ``created_at`` by the ingest clock. The value is
        written past pydantic's ``__setattr__`` so that the field stays unsent (``dated``)."""
        if not self.dated:
            self.__dict__["created_at"] = utc(when)

    def content_id(self) -> str:
        """The id an episode sent without one gets: a hash of its scope and of everything it
        was sent with but its metadata's key order and a date it did not bring."""
        unsent = {*_UNFINGERPRINTED, "id"} | (set() if self.dated else {"created_at"})
        fields = self.__pydantic_serializer__.to_json(self, exclude=unsent)
        digest = content_hash(fields + b"\x1f" + canonical_json(self.metadata).encode())
        return "ep_" + digest.partition(":")[2][:32]

    def same_as(self, fingerprint: str, created_at: datetime) -> bool:
        """Whether a stored episode with ``fingerprint``, dated ``created_at``, is this one: the
        same content, where a date this one did not bring is taken to be the stored one."""
        if self.fingerprint() == fingerprint:
            return True
        if self.dated:
            return False
        return self.model_copy(update={"created_at": created_at}).fingerprint() == fingerprint

    def _check_texts(self) -> None:
        """Every text must be valid UTF-8 without NUL: one check on the happy path, a search
        on failure."""
        texts = [self.session_id, self.situation, self.action, self.outcome_details, self.error]
        texts += [self.lesson, self.category, *self.tools, *self.entities]
        joined = "\x1f".join(filter(None, texts))
        if joined.isascii() and "\x00" not in joined:
            return
        for name in _TEXT_FIELDS:
            for text in _as_list(getattr(self, name)):
                try:
                    _check_text(text or "")
                except ValueError as exc:
                    raise ValueError(f"{name}: {exc}") from None

    @classmethod
    def parse(cls, data: Any) -> Episode:
        return parse_model(cls, data)

    @classmethod
    def stored(cls, **fields: Any) -> Episode:
        """An episode read back from a store: every field given, each valid already, so nothing
        is validated. All such episodes share one set of set fields (every field is set), so a
        cycle holding a whole scan pays for the values alone."""
        in_order = tuple(fields) == _FIELDS  # as the store's decoder passes them
        return _trusted(fields if in_order else {name: fields[name] for name in _FIELDS})

    def view(self, **blanked: Any) -> Episode:
        """A shallow copy with ``blanked`` fields replaced (the cycle's view of an episode: the
        stored one is untouched), as ``model_copy`` makes it. It shares this episode's values,
        and a stored episode's shared set of set fields."""
        fields_set = self.__pydantic_fields_set__
        if fields_set is not _EVERY_FIELD:  # an episode of its own, parsed: a set of its own
            fields_set = {*fields_set, *blanked}
        return _trusted({**self.__dict__, **blanked}, fields_set)

    @property
    def text(self) -> str:
        """The searchable text of the episode, in reading order."""
        parts = [self.situation, self.action, self.outcome_details or "", self.error or ""]
        parts.append(self.lesson or "")
        return "\n".join(filter(None, parts))

    def fingerprint(self) -> str:
        """Hash of the caller-supplied content (not seq or marks): detects a reused id.

        Fields serialise in declaration order; metadata is canonicalised (sorted keys), so the
        same content always gives the same hash whatever order its metadata keys came in.
        """
        fields = self.__pydantic_serializer__.to_json(self, exclude=_UNFINGERPRINTED)
        metadata = canonical_json(self.metadata).encode() if self.metadata else b"{}"
        return content_hash(fields + b"\x1f" + metadata)


_FIELDS = tuple(Episode.model_fields)
_EVERY_FIELD = set(_FIELDS)
"""The set fields of every stored episode. Shared, so never changed: assigning a field adds
its name, which is in it already."""


def _trusted(values: dict[str, Any], fields_set: set[str] = _EVERY_FIELD) -> Episode:
    """An episode of ``values`` as pydantic's ``model_construct`` makes one (an episode has no
    private attributes, no extra fields and no post-init), without its per-field walk."""
    ep = Episode.__new__(Episode)
    object.__setattr__(ep, "__dict__", values)
    object.__setattr__(ep, "__pydantic_fields_set__", fields_set)
    object.__setattr__(ep, "__pydantic_extra__", None)
    object.__setattr__(ep, "__pydantic_private__", None)
    return ep


_UNFINGERPRINTED = {"seq", "consolidated_in", "metadata"}
"""What an episode's fingerprint leaves out: what the store assigns, and the metadata, which is
hashed in its canonical form instead."""
