"""The records Reverie stores and returns (pydantic v2).

An :class:`Episode` is raw, immutable evidence; a :class:`Page` is distilled knowledge whose every
change is a content-hashed :class:`Revision`; a :class:`Claim` is one cited line of a page. Input
errors surface as :class:`reverie.errors.InvalidInput` naming the field and the reason.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from enum import StrEnum
from functools import cached_property, lru_cache
from typing import Annotated, Any, Self, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from reverie.errors import InvalidInput, InvalidScope
from reverie.hashing import canonical_json, content_hash
from reverie.limits import (
    MAX_ENTITY,
    MAX_METADATA_BYTES,
    MAX_METADATA_DEPTH,
    MAX_TEXT,
    MAX_TOOL,
    json_depth,
)

__all__ = [
    "CONTENT_FIELDS",
    "ORG_AGENT",
    "PINNABLE",
    "Citation",
    "Claim",
    "ClaimRole",
    "Cycle",
    "CycleReport",
    "CycleStatus",
    "Episode",
    "Insight",
    "Lineage",
    "Outcome",
    "Page",
    "PageChange",
    "PageKind",
    "PageStatus",
    "PageSupport",
    "Recall",
    "RecallItem",
    "Recommendation",
    "Revision",
    "Scope",
    "ScopeLike",
    "check_metadata",
    "meta_fields",
    "parse_model",
    "recall_weight",
    "revision_content",
    "revision_hash",
    "revision_meta",
    "utc",
]

M = TypeVar("M", bound=BaseModel)
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:@-]{0,127}$")
ORG_AGENT = "_org"
"""Agent name of a tenant's org brain; no real agent can take it (names start alphanumeric)."""


def utc(value: datetime) -> datetime:
    """Return ``value`` as an aware UTC datetime (naive values are taken to be UTC)."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def now_utc() -> datetime:
    return datetime.now(UTC)


def _first_error(exc: ValidationError) -> InvalidInput:
    err = exc.errors()[0]
    field = ".".join(str(p) for p in err["loc"]) or "input"
    return InvalidInput(field, str(err["msg"]).removeprefix("Value error, "))


def parse_model(cls: type[M], data: Any) -> M:
    """Validate ``data`` as ``cls``; raise :class:`InvalidInput` naming the first bad field."""
    if isinstance(data, cls):
        return data
    if not isinstance(data, dict):
        raise InvalidInput("input", f"expected an object, got {type(data).__name__}")
    try:
        return cls.model_validate(data)
    except ValidationError as exc:
        raise _first_error(exc) from None


class Scope(BaseModel):
    """Who owns a memory: ``tenant/agent`` or ``tenant/agent/user``. A brain is one scope."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tenant: str
    agent: str
    user: str | None = None

    @field_validator("tenant", "agent", "user")
    @classmethod
    def _check_name(cls, value: str | None, info: ValidationInfo) -> str | None:
        if info.field_name == "agent" and value == ORG_AGENT:  # the tenant's org brain
            return value
        if value is not None and not _NAME.match(value):
            raise ValueError(
                "must be 1-128 characters of letters, digits, '_', '.', ':', '@' or '-',"
                " starting with a letter or digit"
            )
        return value

    @cached_property
    def key(self) -> str:
        return "/".join(filter(None, (self.tenant, self.agent, self.user)))

    def __hash__(self) -> int:  # equal scopes have equal keys; the key is computed once
        return hash(self.key)

    # the org (tenant) brain, written only by promotion (reverie.dream.promote)
    @model_validator(mode="after")
    def _org_has_no_user(self) -> Scope:
        if self.agent == ORG_AGENT and self.user is not None:
            raise ValueError(f"the org brain {self.tenant}/{ORG_AGENT} has no users")
        return self

    @property
    def is_org(self) -> bool:
        return self.agent == ORG_AGENT

    @property
    def org(self) -> Scope:
        """The org brain of this scope's tenant (``tenant/_org``)."""
        return Scope(tenant=self.tenant, agent=ORG_AGENT)

    def __str__(self) -> str:
        return self.key

    @classmethod
    def parse(cls, value: ScopeLike) -> Scope:
        """Accept a :class:`Scope`, ``"tenant/agent[/user]"`` or a mapping."""
        if isinstance(value, Scope):
            return value
        if isinstance(value, str):
            parts = value.strip().split("/")
            if len(parts) not in (2, 3) or not all(parts):
                raise InvalidScope(f"{value!r} is not 'tenant/agent' or 'tenant/agent/user'")
            value = dict(zip(("tenant", "agent", "user"), parts, strict=False))
        try:
            return cls.model_validate(value)
        except ValidationError as exc:
            raise InvalidScope(str(_first_error(exc))) from None


ScopeLike = Scope | str | dict[str, Any]


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
        if not _NAME.match(value):
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
        """Every text must be valid UTF-8: one check on the happy path, a search on failure."""
        texts = [self.session_id, self.situation, self.action, self.outcome_details, self.error]
        texts += [self.lesson, self.category, *self.tools, *self.entities]
        if "\x1f".join(filter(None, texts)).isascii():
            return
        for name in _TEXT_FIELDS:
            for text in _as_list(getattr(self, name)):
                try:
                    _check_utf8(text or "")
                except ValueError as exc:
                    raise ValueError(f"{name}: {exc}") from None

    @classmethod
    def parse(cls, data: Any) -> Episode:
        return parse_model(cls, data)

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


_UNFINGERPRINTED = {"seq", "consolidated_in", "metadata"}
"""What an episode's fingerprint leaves out: what the store assigns, and the metadata, which is
hashed in its canonical form instead."""


class PageKind(StrEnum):
    LESSON = "lesson"
    FACT = "fact"
    PROCEDURE = "procedure"
    PREFERENCE = "preference"
    WARNING = "warning"
    NOTE = "note"


class PageStatus(StrEnum):
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    RETIRED = "retired"


class ClaimRole(StrEnum):
    """What a claim is to its page; recall ranks the actionable roles first."""

    LESSON = "lesson"  # a stated lesson, synthesised across its paraphrases
    FIX = "fix"  # drawn from failure then fix: what worked when the problem struck
    WARNING = "warning"  # a "don't": what failed and must not be repeated
    FACT = "fact"  # a value
    ANECDOTE = "anecdote"  # one failure or example, as it happened
    ALSO = "also"  # the weakest lessons folded into one cited line
    EVIDENCE = (
        "evidence"  # the rest of the page's evidence, cited so nothing is lost; never recalled
    )

    @property
    def recall_weight(self) -> float:
        """How much a claim of this role is worth to recall: the actionable ones in full, an
        anecdote or an "also seen" line less, the evidence line nothing."""
        return _ROLE_WEIGHTS.get(self, 1.0)


_ROLE_WEIGHTS = {ClaimRole.ANECDOTE: 0.6, ClaimRole.ALSO: 0.6, ClaimRole.EVIDENCE: 0.0}
TEACHING_ROLES = frozenset({ClaimRole.LESSON, ClaimRole.WARNING, ClaimRole.FIX})
"""The roles of what a page teaches: a problem's identity (its lessons, warnings and fix)."""
ACTIONABLE_ROLES = TEACHING_ROLES | {ClaimRole.FACT}
"""The roles a page answers with: what it teaches, and values."""
THIN_FIX = 0.6
"""A fix seen to work once is worth this much of one that worked again."""


def recall_weight(role: str | ClaimRole | None, support: int | None) -> float:
    """What a claim is worth to recall: by its role, and a fix seen to work only once less."""
    if role is None:
        return 1.0
    weight = ClaimRole(role).recall_weight
    if role == ClaimRole.FIX and (support or 0) <= 1:
        weight *= THIN_FIX
    return weight


class Claim(BaseModel):
    """One line of knowledge and the evidence it came from.

    ``support`` is how many episodes back it and ``first_seen``/``last_seen`` their span;
    ``pinned`` marks a claim a person wrote, which no cycle drops, rewrites or counts as an
    outcome. The optional fields are left out of the stored and hashed form while unset, so a
    revision written before they existed keeps its bytes.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str = Field(min_length=1, max_length=4000)
    episode_ids: tuple[str, ...] = Field(min_length=1)
    page_ids: tuple[str, ...] = ()
    role: ClaimRole | None = None
    support: int | None = Field(default=None, ge=0)
    first_seen: datetime | None = None
    last_seen: datetime | None = None
    pinned: bool = False

    def stored(self) -> dict[str, Any]:
        """The JSON form kept in the store and hashed: optional fields only when set."""
        out: dict[str, Any] = {
            "text": self.text,
            "episode_ids": list(self.episode_ids),
            "page_ids": list(self.page_ids),
        }
        if self.role is not None:
            out["role"] = str(self.role)
        if self.support is not None:
            out["support"] = self.support
        if self.first_seen is not None:
            out["first_seen"] = self.first_seen.isoformat()
        if self.last_seen is not None:
            out["last_seen"] = self.last_seen.isoformat()
        if self.pinned:
            out["pinned"] = True
        return out

    @classmethod
    def from_stored(cls, data: dict[str, Any]) -> Claim:
        """The inverse of :meth:`stored`, without validation (rows the store wrote)."""
        role, first, last = data.get("role"), data.get("first_seen"), data.get("last_seen")
        return cls.model_construct(
            text=data["text"],
            episode_ids=tuple(data["episode_ids"]),
            page_ids=tuple(data.get("page_ids", ())),
            role=ClaimRole(role) if role else None,
            support=data.get("support"),
            first_seen=_parse_time(first),
            last_seen=_parse_time(last),
            pinned=bool(data.get("pinned", False)),
        )


def _parse_time(value: Any) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    return datetime.fromisoformat(str(value))


def _time(value: Any) -> datetime:
    return value if isinstance(value, datetime) else datetime.fromisoformat(str(value))


class PageSupport(BaseModel):
    """A page's tallies: page metadata shown in its header, never claims in the recall budget.

    ``error_classes`` counts the short error classes seen (``"HTTP 429"``, ``"TimeoutError"``);
    ``distilled_at`` is ``episodes`` when a model last wrote the page (model distillers only).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    episodes: int = Field(ge=0)
    successes: int = Field(default=0, ge=0)
    failures: int = Field(default=0, ge=0)
    error_classes: dict[str, int] = Field(default_factory=dict)
    first_seen: datetime | None = None
    last_seen: datetime | None = None
    distilled_at: int | None = Field(default=None, ge=0)
    superseded: dict[str, datetime] = Field(default_factory=dict)
    """Values a lesson of the page once stated and a newer one replaced, with when the newer
    value was first taught: recall leaves out older evidence that still names them."""

    def __hash__(self) -> int:  # a frozen model with a dict field: hash its stored form
        return hash(json.dumps(self.stored(), sort_keys=True))

    @property
    def success_rate(self) -> float | None:
        decided = self.successes + self.failures
        return round(self.successes / decided, 3) if decided else None

    def stored(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "episodes": self.episodes,
            "successes": self.successes,
            "failures": self.failures,
            "success_rate": self.success_rate,
            "error_classes": dict(sorted(self.error_classes.items())),
            "first_seen": self.first_seen.isoformat() if self.first_seen else None,
            "last_seen": self.last_seen.isoformat() if self.last_seen else None,
        }
        if self.distilled_at is not None:
            out["distilled_at"] = self.distilled_at
        if self.superseded:
            out["superseded"] = {v: t.isoformat() for v, t in sorted(self.superseded.items())}
        return out

    @classmethod
    def from_stored(cls, data: dict[str, Any] | None) -> PageSupport | None:
        if not data:
            return None
        return cls(
            episodes=data["episodes"],
            successes=data.get("successes", 0),
            failures=data.get("failures", 0),
            error_classes=data.get("error_classes") or {},
            first_seen=_parse_time(data.get("first_seen")),
            last_seen=_parse_time(data.get("last_seen")),
            distilled_at=data.get("distilled_at"),
            superseded={v: _time(t) for v, t in (data.get("superseded") or {}).items()},
        )

    def header(self) -> str:
        """One line for a page's header: ``12 episodes · 75% success · HTTP 429 ×3``."""
        parts = [f"{self.episodes} episode{'s' if self.episodes != 1 else ''}"]
        if (rate := self.success_rate) is not None:
            parts.append(f"{round(rate * 100)}% success")
        top = sorted(self.error_classes.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
        parts += [f"{name} ×{n}" for name, n in top]
        if self.first_seen and self.last_seen:
            first, last = self.first_seen.date(), self.last_seen.date()
            parts.append(str(first) if first == last else f"{first} to {last}")
        return " · ".join(parts)


class Citation(BaseModel):
    """What one page revision cites: the episodes (and pages) its claims came from."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    page_id: str
    revision: int
    episode_ids: tuple[str, ...]
    page_ids: tuple[str, ...] = ()


class Revision(BaseModel):
    """An immutable version of a page. ``hash`` covers everything a reader sees."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    page_id: str
    number: int
    hash: str
    title: str
    kind: PageKind
    claims: tuple[Claim, ...]
    confidence: float
    status: PageStatus
    valid_from: datetime | None = None
    valid_until: datetime | None = None
    superseded_by: str | None = None
    cycle_id: str | None = None
    author: str = "cycle"
    reason: str | None = None
    created_at: datetime
    support: PageSupport | None = None
    pins: tuple[str, ...] = ()

    @property
    def body(self) -> str:
        return render_body(self.claims)

    def content_fields(self) -> dict[str, Any]:
        """The page content this revision holds (:data:`CONTENT_FIELDS`), by name: the keywords
        of :func:`revision_content` and of a new revision that carries it on."""
        return {name: getattr(self, name) for name in CONTENT_FIELDS}

    def content(self) -> dict[str, Any]:
        """What this revision's hash covers (:func:`revision_content`)."""
        return revision_content(**self.content_fields())

    @property
    def citations(self) -> list[str]:
        return sorted({e for c in self.claims for e in c.episode_ids})

    @property
    def citation(self) -> Citation:
        pages = sorted({p for c in self.claims for p in c.page_ids})
        return Citation(
            page_id=self.page_id,
            revision=self.number,
            episode_ids=tuple(self.citations),
            page_ids=tuple(pages),
        )


def render_body(claims: tuple[Claim, ...] | list[Claim]) -> str:
    """Markdown body: one bullet per claim, its citations in brackets."""
    return "\n".join(f"- {c.text} [{', '.join(c.episode_ids)}]" for c in claims)


def revision_hash(**content: Any) -> str:
    """Content hash of what a reader sees of a revision (not who wrote it, nor when): the
    sha256 of :func:`revision_content` of the same fields."""
    return content_hash(revision_content(**content))


CONTENT_FIELDS = (
    "title",
    "kind",
    "claims",
    "confidence",
    "status",
    "valid_from",
    "valid_until",
    "superseded_by",
    "support",
    "pins",
)
"""A revision's page content: what its hash covers, and what a new revision carries on."""


def revision_content(  # noqa: PLR0913 (keyword-only: the fields of a revision)
    *,
    title: str,
    kind: PageKind,
    claims: tuple[Claim, ...] | list[Claim],
    confidence: float,
    status: PageStatus,
    valid_from: datetime | None,
    valid_until: datetime | None,
    superseded_by: str | None,
    support: PageSupport | None = None,
    pins: tuple[str, ...] = (),
) -> dict[str, Any]:
    """What a revision's hash covers. ``support`` and ``pins`` are present only when set, so a
    revision without them hashes as it always did."""
    content: dict[str, Any] = {
        "title": title,
        "kind": str(kind),
        "claims": [c.stored() for c in claims],
        "confidence": round(confidence, 4),
        "status": str(status),
        "valid_from": valid_from.isoformat() if valid_from else None,
        "valid_until": valid_until.isoformat() if valid_until else None,
        "superseded_by": superseded_by,
    }
    if support is not None:
        content["support"] = support.stored()
    if pins:
        content["pins"] = sorted(pins)
    return content


PINNABLE = ("title", "kind")
"""Page fields a person can pin; a pinned field is kept by every later cycle."""


def revision_meta(rev: Revision) -> str | None:
    """The JSON kept in a revision row's ``meta`` column: tallies and pins, or NULL."""
    meta: dict[str, Any] = {}
    if rev.support is not None:
        meta["support"] = rev.support.stored()
    if rev.pins:
        meta["pins"] = sorted(rev.pins)
    return json.dumps(meta, sort_keys=True) if meta else None


def meta_fields(meta: str | dict[str, Any] | None) -> dict[str, Any]:
    """``support`` and ``pins`` for :class:`Revision` from a ``meta`` column value."""
    if not meta:
        return {"support": None, "pins": ()}
    data = json.loads(meta) if isinstance(meta, str) else meta
    return {
        "support": PageSupport.from_stored(data.get("support")),
        "pins": tuple(data.get("pins", ())),
    }


class Page(BaseModel):
    """A page as it stands now: its current revision plus identity and bookkeeping."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    scope: Scope
    topic_key: str
    revision: Revision
    created_at: datetime
    updated_at: datetime

    @property
    def title(self) -> str:
        return self.revision.title

    @property
    def kind(self) -> PageKind:
        return self.revision.kind

    @property
    def status(self) -> PageStatus:
        return self.revision.status

    @property
    def confidence(self) -> float:
        return self.revision.confidence

    @property
    def body(self) -> str:
        return self.revision.body

    @property
    def citations(self) -> list[str]:
        return self.revision.citations

    def to_markdown(self) -> str:
        r = self.revision
        meta = f"{r.kind} · {r.status} · confidence {r.confidence:.2f} · rev {r.number}"
        if r.support is not None:
            meta += f" · {r.support.header()}"
        head = f"# {r.title}\n\n*{meta}*"
        return f"{head}\n\n{r.body}\n"


class CycleStatus(StrEnum):
    COMMITTED = "committed"
    EMPTY = "empty"
    DRY_RUN = "dry_run"
    PENDING = "pending"  # review mode: held for review as a plan, nothing changed
    FAILED = "failed"
    UNDONE = "undone"


class PageChange(BaseModel):
    """One page a cycle created or changed, with the revision numbers around it."""

    model_config = ConfigDict(extra="forbid")

    page_id: str
    title: str
    action: str
    revision_before: int | None
    revision_after: int
    episodes: int = 0


class Insight(BaseModel):
    """One group of a cycle scored (see :mod:`reverie.dream.score`)."""

    model_config = ConfigDict(extra="forbid")

    topic_key: str
    pattern: str
    importance: float
    novelty: float
    confidence: float
    frequency: int
    score: float
    closest_page: str | None = None
    deferred: bool = False


class Recommendation(BaseModel):
    """Advisory tuning advice in a report (see :mod:`reverie.dream.recommend`)."""

    model_config = ConfigDict(extra="forbid")

    kind: str
    subject: str = ""
    message: str


class CycleReport(BaseModel):
    """What one dream cycle did (or would do, for a dry run)."""

    model_config = ConfigDict(extra="forbid")

    cycle_id: str
    scope: Scope
    status: CycleStatus
    started_at: datetime
    finished_at: datetime | None = None
    checkpoint_before: int = 0
    checkpoint_after: int = 0
    scanned: int = 0
    collected: int = 0
    deferred: int = 0
    groups: int = 0
    created: int = 0
    revised: int = 0
    merged: int = 0
    superseded: int = 0
    retired: int = 0
    unchanged: int = 0
    episodes_marked: int = 0
    rejected: list[str] = Field(default_factory=list)
    fallbacks: list[str] = Field(default_factory=list)
    """Groups whose model plan was replaced by the extractive one (reverie.dream.fallback)."""
    changes: list[PageChange] = Field(default_factory=list)
    timings: dict[str, float] = Field(default_factory=dict)
    message: str = ""
    # model cost: calls made, answers served from the response cache, provider tokens
    model_calls: int = 0
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    model_latency_s: float = 0.0
    deferred_groups: list[str] = Field(default_factory=list)
    # volumes, scored insights, advice, and per-tool outcomes of the scanned episodes
    clustered: int = 0
    groups_deferred: int = 0
    bytes_in: int = 0
    bytes_out: int = 0
    compression_ratio: float = 0.0
    insights: list[Insight] = Field(default_factory=list)
    recommendations: list[Recommendation] = Field(default_factory=list)
    tool_stats: dict[str, list[int]] = Field(default_factory=dict)
    # org promotion: pages copied to (or updated in) the tenant's org brain by this cycle
    promoted: list[str] = Field(default_factory=list)


class Cycle(BaseModel):
    """A stored cycle: its report, and whether (and by what) it was undone."""

    model_config = ConfigDict(extra="forbid")

    id: str
    scope: Scope
    status: CycleStatus
    started_at: datetime
    finished_at: datetime | None
    checkpoint_before: int
    checkpoint_after: int
    report: CycleReport
    undone_at: datetime | None = None

    @classmethod
    def of(cls, report: CycleReport) -> Cycle:
        """The record of a cycle about to be committed: what its report says, not undone."""
        return cls(
            id=report.cycle_id,
            scope=report.scope,
            status=report.status,
            started_at=report.started_at,
            finished_at=report.finished_at,
            checkpoint_before=report.checkpoint_before,
            checkpoint_after=report.checkpoint_after,
            report=report,
        )


class RecallItem(BaseModel):
    """One unit packed into a recall: a page claim or an episode excerpt."""

    model_config = ConfigDict(extra="forbid")

    kind: str  # "page" | "episode"
    id: str
    title: str
    text: str
    score: float
    tokens: int
    citations: list[str]
    created_at: datetime | None = None
    status: str | None = None
    page_kind: str | None = None
    role: str | None = None
    """A page claim's role (lesson, fix, anecdote, ...), when it has one."""
    support: int | None = None
    """How many episodes back a page claim, when its page counts them."""


class Recall(BaseModel):
    """What recall returns: ``text`` goes into a prompt, ``items`` explain it.

    ``text`` is Reverie's header, then the items as quoted lines between ``<reverie-memory>``
    and ``</reverie-memory>`` that stored text cannot close (:mod:`reverie.recall.render`);
    ``items`` hold the raw stored text, unescaped.
    """

    model_config = ConfigDict(extra="forbid")

    query: str
    scope: Scope
    budget_tokens: int
    used_tokens: int
    items: list[RecallItem]
    text: str
    warning: str | None = None

    def __bool__(self) -> bool:
        return bool(self.items)


class Lineage(BaseModel):
    """``why PAGE``: every revision of a page and the raw episodes its claims cite."""

    model_config = ConfigDict(extra="forbid")

    page: Page
    revisions: list[Revision]
    episodes: list[Episode]
    cited_pages: list[str] = Field(default_factory=list)
