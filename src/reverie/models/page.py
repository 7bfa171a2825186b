"""Pages: distilled knowledge whose every change is a content-hashed :class:`Revision`.

A :class:`Page` is its current revision plus identity; a revision is immutable, and its ``hash``
covers everything a reader sees of it (:data:`CONTENT_FIELDS`, :func:`revision_content`), not
who wrote it nor when. A :class:`Claim` is one cited line of a page; its :class:`ClaimRole`
decides what it is worth to recall (:func:`recall_weight`). A page's tallies
(:class:`PageSupport`) are metadata in its header, never claims. Optional fields are left out of
the stored and hashed forms while unset, so a revision written before they existed keeps its hash.
"""

from __future__ import annotations

import json
from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from reverie.hashing import content_hash
from reverie.models.scope import Scope

__all__ = [
    "ACTIONABLE_ROLES",
    "CONTENT_FIELDS",
    "PINNABLE",
    "TEACHING_ROLES",
    "THIN_FIX",
    "Claim",
    "ClaimRole",
    "Page",
    "PageKind",
    "PageStatus",
    "PageSupport",
    "Revision",
    "meta_fields",
    "recall_weight",
    "render_body",
    "revision_content",
    "revision_hash",
    "revision_meta",
]


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
    PROCEDURE = "procedure"  # the steps runs of one kind of request took when they succeeded
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
TEACHING_ROLES = frozenset(
    {ClaimRole.LESSON, ClaimRole.WARNING, ClaimRole.FIX, ClaimRole.PROCEDURE}
)
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
