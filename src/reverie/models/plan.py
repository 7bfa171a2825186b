"""Plans: the closed set of operations a distiller may propose, and their validation.

A distiller sees one :class:`Evidence` group (episodes plus the pages they touch) and returns a
:class:`Plan`. :func:`validate_plan` is pure and checks the *whole* plan before anything changes:
citations must come from the evidence supplied, targets must be pages that were shown, the page
must not have changed since it was read, and no page may be the target of two operations.
An invalid plan is rejected as a whole; its group stays eligible.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from reverie.hashing import content_hash, short_id
from reverie.models import Claim, Episode, Page, PageKind, PageSupport, Scope

__all__ = [
    "CreatePage",
    "Distiller",
    "Evidence",
    "MergePages",
    "Operation",
    "Plan",
    "RetirePage",
    "RevisePage",
    "SplitPart",
    "SupersedePage",
    "page_id_for",
    "validate_plan",
]


def page_id_for(scope: Scope, topic_key: str) -> str:
    """Deterministic page id from the scope and the topic key, never from a title alone."""
    return short_id("pg", scope.key, topic_key)


class SplitPart(BaseModel):
    """A problem found on a page that holds unrelated ones: the page it becomes (its topic) and
    the page's episodes that move there (:mod:`reverie.dream.split`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    topic_key: str = Field(min_length=1, max_length=512)
    episode_ids: tuple[str, ...] = Field(min_length=1)


class Evidence(BaseModel):
    """One group of new episodes and every page they touch, as shown to a distiller.

    ``history`` holds, per page shown, the episodes that page already cites, so an extractive
    distiller can re-derive its tallies; they are evidence too and may be cited. ``split``
    names the problems the topic's page gives up to pages of their own, when it has grown to
    hold unrelated ones.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    scope: Scope
    topic_key: str
    episodes: tuple[Episode, ...]
    pages: tuple[Page, ...] = ()
    history: dict[str, tuple[Episode, ...]] = Field(default_factory=dict)
    now: datetime
    split: tuple[SplitPart, ...] = ()

    @property
    def group_id(self) -> str:
        return content_hash(sorted(e.id for e in self.episodes))

    def citable_ids(self) -> set[str]:
        ids = {e.id for e in self.episodes}
        for eps in self.history.values():
            ids.update(e.id for e in eps)
        for page in self.pages:
            ids.update(page.citations)
        return ids


class _Op(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _Content(_Op):
    title: str = Field(min_length=1, max_length=200)
    kind: PageKind
    confidence: float = Field(ge=0.0, le=1.0)
    claims: tuple[Claim, ...] = Field(min_length=1, max_length=200)
    valid_from: datetime | None = None
    support: PageSupport | None = None
    pins: tuple[Literal["title", "kind"], ...] = ()


class CreatePage(_Content):
    op: Literal["create"] = "create"
    topic_key: str = Field(min_length=1, max_length=512)


class RevisePage(_Content):
    op: Literal["revise"] = "revise"
    page_id: str
    expected_hash: str


class MergePages(_Content):
    """Rewrite ``page_id`` to absorb ``sources``; each source is superseded by it."""

    op: Literal["merge"] = "merge"
    page_id: str
    expected_hash: str
    sources: dict[str, str] = Field(description="source page id -> expected revision hash")


class SupersedePage(_Op):
    op: Literal["supersede"] = "supersede"
    page_id: str
    expected_hash: str
    reason: str = Field(min_length=1, max_length=1000)
    by: str | None = None
    valid_until: datetime | None = None


class RetirePage(_Op):
    op: Literal["retire"] = "retire"
    page_id: str
    expected_hash: str
    reason: str = Field(min_length=1, max_length=1000)


Operation = Annotated[
    CreatePage | RevisePage | MergePages | SupersedePage | RetirePage, Field(discriminator="op")
]


class Plan(BaseModel):
    """What a distiller proposes for one evidence group."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    operations: tuple[Operation, ...] = ()
    distiller: str = "unknown"


class Distiller(Protocol):
    """Evidence in, plan out. One call per group; must not touch the store."""

    name: str

    def distill(self, evidence: Evidence) -> Plan:
        """Return a plan for ``evidence``. Raise nothing for ordinary input; a plan may be empty."""
        ...


def _targets(op: Operation) -> list[str]:
    if isinstance(op, CreatePage):
        return []
    if isinstance(op, MergePages):
        return [op.page_id, *op.sources]
    return [op.page_id]


def _check_claims(op: Operation, citable: set[str], shown: set[str]) -> list[str]:
    if not isinstance(op, _Content):
        return []
    problems = []
    for claim in op.claims:
        unknown = sorted(set(claim.episode_ids) - citable)
        if unknown:
            problems.append(f"{op.op}: claim cites episodes not in the evidence: {unknown[:5]}")
        bad_pages = sorted(set(claim.page_ids) - shown)
        if bad_pages:
            problems.append(f"{op.op}: claim cites pages not shown: {bad_pages[:5]}")
    return problems


def _check_target(op: Operation, pages: dict[str, Page]) -> list[str]:
    problems = []
    expected: dict[str, str] = {}
    if isinstance(op, MergePages):
        if not op.sources:
            problems.append("merge: names no source pages")
        if op.page_id in op.sources:
            problems.append("merge: a page cannot be its own source")
        expected.update(op.sources)
    if not isinstance(op, CreatePage):
        expected[op.page_id] = op.expected_hash
    for page_id, want in expected.items():
        page = pages.get(page_id)
        if page is None:
            problems.append(f"{op.op}: page {page_id} was not supplied")
        elif page.revision.hash != want:
            problems.append(f"{op.op}: page {page_id} changed since it was read")
    return problems


def validate_plan(plan: Plan, evidence: Evidence) -> list[str]:
    """Every reason ``plan`` must be rejected for ``evidence``; empty when it is valid."""
    pages = {p.id: p for p in evidence.pages}
    citable = evidence.citable_ids()
    problems: list[str] = []
    seen: set[str] = set()
    for op in plan.operations:
        if isinstance(op, CreatePage):
            new_id = page_id_for(evidence.scope, op.topic_key)
            if new_id in pages:
                problems.append(f"create: topic {op.topic_key!r} already has page {new_id}")
            targets = [new_id]
        else:
            targets = _targets(op)
        for target in targets:
            if target in seen:
                problems.append(f"{op.op}: page {target} is the target of two operations")
            seen.add(target)
        problems += _check_target(op, pages)
        problems += _check_claims(op, citable, set(pages))
        problems += _check_newer(op, pages, evidence)
    return problems


def _check_newer(op: Operation, pages: dict[str, Page], evidence: Evidence) -> list[str]:
    """Time decides "current" — only newer evidence may supersede a page, and its
    validity cannot end before it began. Decided here, by timestamps, whatever a model says."""
    page = pages.get(op.page_id) if isinstance(op, SupersedePage) else None
    if page is None or page.revision.valid_from is None or not isinstance(op, SupersedePage):
        return []
    began = page.revision.valid_from
    newest = max((e.created_at for e in evidence.episodes), default=None)
    if newest is not None and newest < began:
        return [
            f"supersede: the evidence (newest {newest.isoformat()}) is older than page"
            f" {op.page_id} (valid from {began.isoformat()}); newer evidence wins"
        ]
    if op.valid_until is not None and op.valid_until < began:
        return [f"supersede: valid_until is before page {op.page_id} became valid"]
    return []
