"""The storage contract every backend implements, and the changeset a cycle commits.

A cycle never writes piecemeal: it computes a :class:`Changeset` (pure data) and hands it to
:meth:`Store.commit`, which applies pages, revisions, citations, episode marks, the checkpoint and
the cycle record in ONE transaction, after checking that nothing it read has changed since
(``expected_revision``, ``expected_checkpoint``). A conflict or a failure leaves the store as it
was. The same changeset shape undoes a cycle.

Collection trusts only ``seq``: a store-assigned, strictly increasing integer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from reverie.models import Cycle, Episode, Page, Revision, Scope, now_utc

__all__ = [
    "Changeset",
    "CycleTally",
    "DreamStats",
    "JournalEntry",
    "Lease",
    "Observation",
    "PageWrite",
    "Promotion",
    "PromotionRecord",
    "StepHook",
    "Store",
    "StoreStats",
    "Strength",
]

StepHook = Callable[[str], None]
"""Called with a step name between the writes of a commit (fault injection, progress)."""


@dataclass(frozen=True)
class PageWrite:
    """A new revision for a page; ``expected_revision`` is the number read (None: new page)."""

    scope: Scope
    topic_key: str
    revision: Revision
    expected_revision: int | None


@dataclass(frozen=True)
class Observation:
    """A cycle re-observed a page's pattern: ``episodes`` new ones, the latest at ``last_seen``."""

    page_id: str
    episodes: int
    last_seen: datetime


@dataclass(frozen=True)
class Strength:
    """A page's reinforcement over the cycles not undone (issue 5, see reverie.dream.decay)."""

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
    """The right to dream one scope until ``expires_at`` (issue 8, :mod:`reverie.store.leases`).

    ``token`` grows by one with every new holder (a fencing token).
    """

    scope: Scope
    owner: str
    token: int
    acquired_at: datetime
    expires_at: datetime


@dataclass(frozen=True)
class CycleTally:
    """What one dream cycle adds to its scope's cumulative stats (:class:`DreamStats`).

    A committed cycle's tally lands in the cycle's transaction; a failed one (an exception, or
    every group rejected so nothing was committed) is recorded by a separate small write after
    the failure (:meth:`Store.record_tally`), since the failed cycle has no transaction to join.
    """

    scope: Scope
    at: datetime
    failed: bool = False
    model_calls: int = 0
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    duration_s: float = 0.0
    episodes: int = 0
    error: str | None = None


@dataclass(frozen=True)
class DreamStats:
    """Cumulative dream statistics of one scope, kept apart from its checkpoint (issue 5)."""

    scope: Scope
    cycles_completed: int = 0
    cycles_failed: int = 0
    model_calls: int = 0
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    duration_s: float = 0.0
    episodes: int = 0
    last_completed_at: datetime | None = None
    last_failed_at: datetime | None = None
    last_error: str | None = None


@dataclass(frozen=True)
class Promotion:
    """An org copy of a reinforced page (issue 6, :mod:`reverie.dream.promote`).

    ``write`` is the org page's new revision (scope ``tenant/_org``); the source page, its scope
    and the revision copied are the attribution.
    """

    write: PageWrite
    source_page_id: str
    source_scope: Scope
    source_revision: int
    cycles: int


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
class Changeset:
    """Everything one cycle (or one undo, edit or import) changes, applied atomically by
    :meth:`Store.commit`.

    ``at`` is when the change happens, by the caller's clock: the store stamps the checkpoint,
    an undo and a journal entry without a cycle with it, and fences leases against it (a
    cycle's own ``finished_at`` first), so no store code reads a clock of its own.
    """

    scope: Scope
    expected_checkpoint: int
    checkpoint: int
    page_writes: Sequence[PageWrite] = ()
    marks: Sequence[str] = ()
    mark_cycle: str | None = None
    unmark_cycle: str | None = None
    cycle: Cycle | None = None
    undone_cycle: str | None = None
    # reinforcement rows, the journal entry, and episodes recorded with the change (a
    # person's edit is stored as an episode so the claims it adds can cite it)
    observations: Sequence[Observation] = ()
    journal: str | None = None
    episodes: Sequence[Episode] = ()
    # the cycle's addition to the cumulative stats (dream cycles only, not undo/import)
    tally: CycleTally | None = None
    # org copies of reinforced pages: the only writes that leave ``scope``
    promotions: Sequence[Promotion] = ()
    # the reviewed plan this changeset applies; commit() marks it applied in the same
    # transaction (reverie.store.plans)
    plan_id: str | None = None
    at: datetime = field(default_factory=now_utc)

    @property
    def landed_at(self) -> datetime:
        """When the change lands: the cycle's finish when it records one, else ``at``."""
        if self.cycle is not None and self.cycle.finished_at is not None:
            return self.cycle.finished_at
        return self.at


@dataclass(frozen=True)
class StoreStats:
    episodes: int
    consolidated: int
    pages: int
    active_pages: int
    revisions: int
    cycles: int
    checkpoint: int
    # model cost over the recorded cycles (issue 4)
    model_calls: int = 0
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    model_latency_s: float = 0.0


class Store(Protocol):
    """Episodes, pages, revisions, citations, cycles and checkpoints for many scopes.

    Implementations: :class:`reverie.store.sqlite.SQLiteStore`. Every read takes a scope or an id;
    no read returns another scope's rows for a scope-filtered call.
    """

    url: str

    def migrate(self) -> list[str]:
        """Apply pending migrations in order; return the names applied."""
        ...

    def close(self) -> None: ...

    # episodes
    def append(self, episodes: Sequence[Episode]) -> list[Episode]:
        """Store new episodes in one transaction, assigning ``seq``; return the new ones as stored.

        An id that is already stored with the same content is skipped (appending is idempotent);
        the same id with other content raises :class:`reverie.errors.Conflict` and stores nothing.
        """
        ...

    def episode(self, episode_id: str) -> Episode: ...

    def episodes(self, episode_ids: Iterable[str]) -> list[Episode]:
        """The episodes with these ids that exist, in ``seq`` order."""
        ...

    def first_stored(self, episode_ids: Iterable[str]) -> datetime | None:
        """When the earliest stored of these episodes was appended (the store's clock, not the
        episode's ``created_at``); None when none of them exists."""
        ...

    def scan(self, scope: Scope, after_seq: int, limit: int) -> list[Episode]:
        """Unconsolidated episodes of ``scope`` past ``after_seq``, by seq, at most ``limit``."""
        ...

    def recent_episodes(self, scope: Scope, limit: int) -> list[Episode]: ...

    def marked(self, cycle_id: str) -> list[int]:
        """The ``seq`` of every episode that ``cycle_id`` consolidated, ascending."""
        ...

    # pages
    def page(self, page_id: str) -> Page: ...

    def pages(self, scope: Scope, statuses: Iterable[str] | None = None) -> list[Page]: ...

    def pages_by_topic(self, scope: Scope, topic_keys: Iterable[str]) -> dict[str, Page]: ...

    def revisions(self, page_id: str) -> list[Revision]: ...

    # search: scores are positive, higher is better; scope filtered inside the query
    def search_pages(
        self, scope: Scope, terms: Sequence[str], limit: int, statuses: Iterable[str] = ("active",)
    ) -> list[tuple[Page, float]]: ...

    def search_episodes(
        self, scope: Scope, terms: Sequence[str], limit: int, *, window: int | None = None
    ) -> list[tuple[Episode, float]]:
        """The best ``limit`` episodes by BM25; with ``window``, among the newest matches only."""
        ...

    # cycles
    def checkpoint(self, scope: Scope) -> int: ...

    def commit(self, changes: Changeset, on_step: StepHook | None = None) -> None:
        """Apply ``changes`` in one transaction or not at all."""
        ...

    def cycle(self, cycle_id: str) -> Cycle: ...

    def cycles(self, scope: Scope | None = None, limit: int = 50) -> list[Cycle]: ...

    def cycles_after(self, cycle_id: str) -> list[Cycle]:
        """Cycles of the same scope recorded after ``cycle_id``, oldest first."""
        ...

    def scopes(self) -> list[Scope]: ...

    def pending_scopes(self) -> list[Scope]:
        """Scopes with unconsolidated episodes past their checkpoint."""
        ...

    def integrity_check(self) -> str:
        """``"ok"`` when the database is sound, else the first problem found."""
        ...

    def stats(self, scope: Scope | None = None) -> StoreStats: ...

    # model response cache (issue 4): not cycle state, written outside any cycle transaction
    def cache_get(self, key: str) -> dict[str, Any] | None:
        """The cached answer under ``key`` (``model``, ``response``, ``input_tokens``,
        ``output_tokens``, ``created_at``), or None."""
        ...

    def cache_put(self, key: str, value: dict[str, Any]) -> None:
        """Store (or replace) the answer under ``key``."""
        ...

    # memory over time (issue 5): reinforcement and the journal, written by commit()
    def strengths(self, page_ids: Iterable[str]) -> dict[str, Strength]:
        """Reinforcement of these pages over the cycles not undone; pages never observed are
        absent."""
        ...

    def journal(self, scope: Scope, limit: int = 50) -> list[JournalEntry]:
        """The newest ``limit`` journal entries of ``scope``, oldest first."""
        ...

    # cumulative stats (issue 5): completed cycles are counted by commit(), failed ones here
    def record_tally(self, tally: CycleTally) -> None:
        """Add a failed cycle's tally to its scope's stats, in a small transaction of its own."""
        ...

    def dream_stats(self, scope: Scope | None = None) -> list[DreamStats]:
        """Cumulative stats per scope (one scope, or every scope that has dreamed)."""
        ...

    # org promotion (issue 6): written by commit() from Changeset.promotions
    def promotions(self, scope: Scope) -> list[PromotionRecord]:
        """Promotions out of ``scope``, or into it when ``scope`` is an org brain."""
        ...

    # leases (issue 8): at most one worker dreams a scope at a time; see reverie.store.leases
    def acquire_lease(self, scope: Scope, owner: str, ttl: float, now: datetime) -> Lease | None:
        """Lease ``scope`` to ``owner`` for ``ttl`` seconds if it is free, expired or already
        ``owner``'s; None when another owner holds it."""
        ...

    def claim_due(self, owner: str, ttl: float, now: datetime, limit: int = 1) -> list[Lease]:
        """Lease up to ``limit`` scopes that have pending episodes and no live lease."""
        ...

    def heartbeat_lease(self, lease: Lease, ttl: float, now: datetime) -> Lease:
        """Extend a held lease to ``now + ttl``; :class:`reverie.errors.LeaseLost` if another
        owner took it over."""
        ...

    def release_lease(self, lease: Lease) -> bool:
        """Give the lease back (False: it was no longer ours)."""
        ...

    def leases(self) -> list[Lease]: ...
