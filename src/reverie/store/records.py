"""What the store's reads hand back: plain records, no behaviour.

Re-exported by :mod:`reverie.store.base`, which is where callers import them from.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from reverie.models import Scope

__all__ = [
    "DreamStats",
    "JournalEntry",
    "Lease",
    "ModelCost",
    "PromotionRecord",
    "StoreStats",
    "Strength",
]


@dataclass(frozen=True, kw_only=True)
class ModelCost:
    """What model calls cost: calls made, answers served from the response cache, tokens.

    The base of every record that counts model cost (:class:`StoreStats`, :class:`DreamStats`,
    :class:`~reverie.store.base.CycleTally`); keyword-only, so it adds the same four fields to
    each without touching their positional ones.
    """

    model_calls: int = 0
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True)
class Strength:
    """A page's reinforcement over the cycles not undone (see :mod:`reverie.dream.decay`)."""

    page_id: str
    episodes: int
    cycles: int
    last_seen: datetime


@dataclass(frozen=True)
class JournalEntry:
    """One entry of the dream journal: what a cycle, undo, restore or import did, and why."""

    scope: Scope
    cycle_id: str | None
    created_at: datetime
    text: str


@dataclass(frozen=True)
class Lease:
    """The right to dream one scope until ``expires_at`` (:mod:`reverie.store.leases`).

    ``token`` grows by one with every new holder (a fencing token).
    """

    scope: Scope
    owner: str
    token: int
    acquired_at: datetime
    expires_at: datetime


@dataclass(frozen=True)
class DreamStats(ModelCost):
    """Cumulative dream statistics of one scope, kept apart from its checkpoint."""

    scope: Scope
    cycles_completed: int = 0
    cycles_failed: int = 0
    duration_s: float = 0.0
    episodes: int = 0
    last_completed_at: datetime | None = None
    last_failed_at: datetime | None = None
    last_error: str | None = None


@dataclass(frozen=True)
class PromotionRecord:
    """A stored promotion: which org page copies which agent page, and as of which revision."""

    org_page_id: str
    source_page_id: str
    source_scope: Scope
    source_revision: int
    promoted_at: datetime
    updated_at: datetime
    cycle_id: str


@dataclass(frozen=True)
class StoreStats(ModelCost):
    """Counts of what a brain (or the whole store) holds, and the model cost of its cycles."""

    episodes: int
    consolidated: int
    pages: int
    active_pages: int
    revisions: int
    cycles: int
    checkpoint: int
    model_latency_s: float = 0.0
