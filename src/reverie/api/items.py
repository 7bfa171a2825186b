"""What the conventional verbs return: a memory, an event in its history, what a deletion did.

A *memory* is a page (distilled, cited knowledge) or, before any cycle has distilled it, an
episode (raw evidence). Both come out as one :class:`MemoryItem`, told apart by ``kind``: a
page's kind (lesson, fact, procedure, preference, warning, note) or ``"episode"``.

``score`` (search only) is recall's score of the item's best unit divided by
:data:`SCORE_CEILING`, the most recall can give (a page claim's preference over evidence times
its lexical plus semantic relevance), and clipped to [0, 1]: the order is recall's order, and
1.0 means "as relevant as recall can say".
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from reverie.models import Episode, Page, PageStatus, RecallItem, Revision
from reverie.recall.hybrid import SEMANTIC_WEIGHT
from reverie.recall.units import PAGE_PREFERENCE

__all__ = [
    "SCORE_CEILING",
    "Deletion",
    "MemoryEvent",
    "MemoryItem",
    "Retirement",
    "episode_memory",
    "history_of_episode",
    "history_of_page",
    "page_memory",
    "search_memories",
]

SCORE_CEILING = PAGE_PREFERENCE * (1 + SEMANTIC_WEIGHT)
"""The highest score recall gives a unit: a page claim, fully relevant lexically and by vector."""


class MemoryItem(BaseModel):
    """One memory: a page, or an episode not yet distilled into one."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(description="A page id (pg_…) or an episode id.")
    memory: str = Field(description="The text: a page's claims, or an episode's situation etc.")
    kind: str = Field(description="The page's kind (lesson, fact, …), or 'episode'.")
    title: str = Field(description="The page's title, or the episode's category.")
    score: float | None = Field(
        default=None, ge=0.0, le=1.0, description="Relevance in [0, 1] (search only)."
    )
    metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime
    updated_at: datetime | None = None
    citations: list[str] = Field(
        default_factory=list, description="The episode ids the memory stands on."
    )
    scope: str = Field(description="tenant/agent[/user].")
    user_id: str | None = None
    agent_id: str
    run_id: str | None = Field(default=None, description="An episode's session (run).")
    status: str = Field(description="A page's status, or an episode's outcome.")


class MemoryEvent(BaseModel):
    """One change in a memory's history: a page revision, or an episode being recorded."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    event: str = Field(description="ADD, UPDATE, SUPERSEDE, RETIRE or RESTORE.")
    revision: int | None = None
    old_memory: str | None = None
    new_memory: str
    status: str
    author: str = Field(description="cycle, human, restore, api, … or 'agent' for an episode.")
    reason: str | None = None
    cycle_id: str | None = Field(default=None, description="Undo this event: reverie undo CYCLE.")
    created_at: datetime


class Deletion(BaseModel):
    """What ``delete`` erased: the erasure receipt's id and what it reached."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    kind: Literal["page", "episode"] = Field(description="What the id named.")
    erasure_id: str = Field(description="The receipt: ``erasure(erasure_id)``, with tombstones.")
    episodes: list[str] = Field(default_factory=list, description="The episode ids erased.")
    pages_deleted: list[str] = Field(
        default_factory=list, description="Pages left with no claim, deleted whole."
    )
    pages_rederived: list[str] = Field(
        default_factory=list, description="Pages rewritten without the erased evidence."
    )


class Retirement(BaseModel):
    """What ``retire`` did, and how to take it back."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    status: str = Field(description="'retired': the page stays readable in why and history.")
    revision: int
    cycle_id: str = Field(description="``undo(cycle_id)`` brings the page back.")


def _identity(scope_key: str) -> dict[str, Any]:
    parts = scope_key.split("/")
    return {
        "scope": scope_key,
        "agent_id": parts[1],
        "user_id": parts[2] if len(parts) > 2 else None,
    }


def page_memory(page: Page, score: float | None = None, memory: str | None = None) -> MemoryItem:
    """``page`` as a memory; ``memory`` (search: the claims that matched) defaults to all. Either
    way it is the claims' own text, one per line, so ``search`` and ``get_all`` read alike."""
    r = page.revision
    meta: dict[str, Any] = {"confidence": round(r.confidence, 4), "revision": r.number}
    if r.valid_from is not None or r.valid_until is not None:
        meta["valid_from"], meta["valid_until"] = r.valid_from, r.valid_until
    return MemoryItem(
        id=page.id,
        memory=memory if memory is not None else "\n".join(c.text for c in r.claims),
        kind=str(r.kind),
        title=r.title,
        score=score,
        metadata=meta,
        created_at=page.created_at,
        updated_at=page.updated_at,
        citations=r.citations,
        status=str(r.status),
        **_identity(page.scope.key),
    )


def episode_memory(episode: Episode, score: float | None = None) -> MemoryItem:
    return MemoryItem(
        id=episode.id,
        memory=episode.text,
        kind="episode",
        title=episode.category or "episode",
        score=score,
        metadata=dict(episode.metadata),
        created_at=episode.created_at,
        citations=[episode.id],
        run_id=episode.session_id,
        status=str(episode.outcome),
        **_identity(episode.scope.key),
    )


def _scaled(score: float) -> float:
    return round(min(max(score / SCORE_CEILING, 0.0), 1.0), 6)


def search_memories(
    units: Sequence[RecallItem], pages: dict[str, Page], episodes: dict[str, Episode]
) -> list[MemoryItem]:
    """Recall's units grouped by the page or episode they came from, best first; a page's
    memory is the claims recall found relevant, in recall's order."""
    best: dict[str, float] = {}
    texts: dict[str, list[str]] = {}
    for unit in units:
        best[unit.id] = max(best.get(unit.id, 0.0), unit.score)
        texts.setdefault(unit.id, []).append(unit.text)
    found: list[MemoryItem] = []
    for ident in sorted(best, key=lambda i: -best[i]):
        if ident in pages:
            found.append(page_memory(pages[ident], _scaled(best[ident]), "\n".join(texts[ident])))
        elif ident in episodes:
            found.append(episode_memory(episodes[ident], _scaled(best[ident])))
    return found


def _event(before: Revision | None, rev: Revision) -> str:
    if before is None:
        return "ADD"
    if rev.author == "restore":
        return "RESTORE"
    if rev.status is PageStatus.RETIRED and before.status is not PageStatus.RETIRED:
        return "RETIRE"
    if rev.status is PageStatus.SUPERSEDED and before.status is not PageStatus.SUPERSEDED:
        return "SUPERSEDE"
    return "UPDATE"


def history_of_page(revisions: Sequence[Revision]) -> list[MemoryEvent]:
    """One event per revision, oldest first."""
    events: list[MemoryEvent] = []
    before: Revision | None = None
    for rev in revisions:
        events.append(
            MemoryEvent(
                id=rev.page_id,
                event=_event(before, rev),
                revision=rev.number,
                old_memory=before.body if before is not None else None,
                new_memory=rev.body,
                status=str(rev.status),
                author=rev.author,
                reason=rev.reason,
                cycle_id=rev.cycle_id,
                created_at=rev.created_at,
            )
        )
        before = rev
    return events


def history_of_episode(episode: Episode) -> list[MemoryEvent]:
    """An episode never changes: its history is the one event that recorded it."""
    return [
        MemoryEvent(
            id=episode.id,
            event="ADD",
            new_memory=episode.text,
            status=str(episode.outcome),
            author="agent",
            created_at=episode.created_at,
        )
    ]
