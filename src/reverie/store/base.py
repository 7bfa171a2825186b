"""The storage contract: a narrow core, the capabilities around it, and the changeset a cycle
commits.

A cycle never writes piecemeal: it computes a :class:`Changeset` (pure data) and hands it to
:meth:`Store.commit`, which applies pages, revisions, citations, episode marks, the checkpoint and
the cycle record in ONE transaction, after checking that nothing it read has changed since
(``expected_revision``, ``expected_checkpoint``). A conflict or a failure leaves the store as it
was. The same changeset shape undoes a cycle.

Collection trusts only ``seq``: a store-assigned, strictly increasing integer.

:class:`Store` is what recall needs. :class:`BrainStore` is what every backend is: the core,
history and stats, leases, plans, vectors, API keys, the response cache, erasure, the cold tier
and the schedule. How one backend does a job the other does another way is a capability checked
with ``isinstance``: :class:`NearestNeighbours` (vector search in the database) and
:class:`BundleBytes` (bundles in the database), both PostgreSQL's. docs/store.md has the table.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from reverie.models import Cycle, Episode, Page, Revision, Scope
from reverie.store.records import (
    ApiKey,
    BundleInfo,
    Changeset,
    CycleTally,
    DreamStats,
    Erased,
    Erasure,
    ExportRecord,
    JournalEntry,
    Lease,
    ModelCost,
    Observation,
    PageWrite,
    PendingPlan,
    PlanStatus,
    Promotion,
    PromotionRecord,
    RecallTally,
    Receipt,
    ScheduleRecord,
    StepHook,
    StoreStats,
    Strength,
    Tombstone,
    VectorRow,
    VectorUnit,
)

__all__ = [
    "BrainStore",
    "BundleBytes",
    "Changeset",
    "CycleTally",
    "DreamStats",
    "History",
    "JournalEntry",
    "Lease",
    "ModelCost",
    "NearestNeighbours",
    "Observation",
    "PageWrite",
    "Promotion",
    "PromotionRecord",
    "RecallTally",
    "ResponseCache",
    "Stats",
    "StepHook",
    "Store",
    "StoreStats",
    "Strength",
]


# -- the core --------------------------------------------------------------------------------


@runtime_checkable
class Store(Protocol):
    """Episodes in, pages out: what a dream cycle and recall need of a store.

    Implementations: :class:`reverie.store.sqlite.SQLiteStore`,
    :class:`reverie.store.postgres.PostgresStore`. Every read takes a scope or an id; no read
    returns another scope's rows for a scope-filtered call. An episode id is its tenant's own
    (two tenants may both store ``b1``), so every read of episodes by id names the tenant.
    """

    url: str

    def migrate(self) -> list[str]:
        """Apply pending migrations in order; return the names applied."""
        ...

    def close(self) -> None: ...

    def append(self, episodes: Sequence[Episode], *, at: datetime | None = None) -> list[Episode]:
        """Store new episodes in one transaction, assigning ``seq``; return the new ones as stored.

        ``at`` is when they were received, read by the caller at its edge (the facade gives its
        ingest clock's time); it is kept as each new episode's ``inserted_at``
        (:meth:`first_stored`). Without it, the newest ``created_at`` of the new ones stands in:
        a store never reads the clock.

        An id that is already stored in the episode's tenant with the same content is skipped
        (appending is idempotent); the same id with other content in that tenant raises
        :class:`reverie.errors.Conflict` and stores nothing. Another tenant's ids are no
        concern: they neither conflict nor show.
        """
        ...

    def episodes(self, episode_ids: Iterable[str], *, tenant: str) -> list[Episode]:
        """The episodes of ``tenant`` with these ids that exist, in ``seq`` order."""
        ...

    def scan(self, scope: Scope, after_seq: int, limit: int) -> list[Episode]:
        """Unconsolidated episodes of ``scope`` past ``after_seq``, by seq, at most ``limit``."""
        ...

    def checkpoint(self, scope: Scope) -> int:
        """The seq up to which ``scope``'s episodes have been considered (0: none)."""
        ...

    def pages(self, scope: Scope, statuses: Iterable[str] | None = None) -> list[Page]:
        """The pages of ``scope`` (with one of ``statuses``), oldest first."""
        ...

    def pages_by_topic(self, scope: Scope, topic_keys: Iterable[str]) -> dict[str, Page]: ...

    # search: scores are positive, higher is better; scope filtered inside the query
    def search_pages(
        self, scope: Scope, terms: Sequence[str], limit: int, statuses: Iterable[str] = ("active",)
    ) -> list[tuple[Page, float]]: ...

    def search_episodes(
        self, scope: Scope, terms: Sequence[str], limit: int, *, window: int | None = None
    ) -> list[tuple[Episode, float]]:
        """The best ``limit`` episodes by BM25; with ``window``, among the newest matches only."""
        ...

    def commit(self, changes: Changeset, on_step: StepHook | None = None) -> None:
        """Apply ``changes`` in one transaction or not at all."""
        ...


@runtime_checkable
class History(Protocol):
    """Reading back what was stored and done: single rows, revisions, cycles, the journal,
    reinforcement and promotions."""

    def episode(self, episode_id: str, *, tenant: str) -> Episode:
        """The episode ``episode_id`` of ``tenant``; :class:`~reverie.errors.NotFound` (the
        same answer whether or not another tenant has one) otherwise."""
        ...

    def first_stored(self, episode_ids: Iterable[str], *, tenant: str) -> datetime | None:
        """When the earliest stored of these episodes of ``tenant`` was appended (the store's
        clock, not the episode's ``created_at``); None when none of them exists."""
        ...

    def recent_episodes(self, scope: Scope, limit: int) -> list[Episode]: ...

    def marked(self, cycle_id: str) -> list[int]:
        """The ``seq`` of every episode that ``cycle_id`` consolidated, ascending."""
        ...

    def page(self, page_id: str) -> Page: ...

    def pages_by_id(self, scope: Scope, page_ids: Iterable[str]) -> dict[str, Page]:
        """The pages of ``scope`` among ``page_ids``, read in bulk."""
        ...

    def pages_citing(self, scope: Scope, episode_ids: Iterable[str]) -> dict[str, list[str]]:
        """Per episode: the active pages of ``scope`` whose current revision cites it."""
        ...

    def revisions(self, page_id: str) -> list[Revision]: ...

    def cycle(self, cycle_id: str) -> Cycle: ...

    def cycles(self, scope: Scope | None = None, limit: int = 50) -> list[Cycle]: ...

    def scopes(self) -> list[Scope]: ...

    def pending_scopes(self) -> list[Scope]:
        """Scopes with unconsolidated episodes past their checkpoint."""
        ...

    def journal(self, scope: Scope, limit: int = 50) -> list[JournalEntry]:
        """The newest ``limit`` journal entries of ``scope``, oldest first."""
        ...

    def strengths(self, page_ids: Iterable[str]) -> dict[str, Strength]:
        """Reinforcement of these pages over the cycles not undone; pages never observed are
        absent."""
        ...

    def promotions(self, scope: Scope) -> list[PromotionRecord]:
        """Promotions out of ``scope``, or into it when ``scope`` is an org brain."""
        ...


@runtime_checkable
class Stats(Protocol):
    """Counts and health: what the store holds, what dreaming has cost, how often recall
    found something, whether it is sound."""

    def stats(self, scope: Scope | None = None) -> StoreStats: ...

    def dream_stats(self, scope: Scope | None = None) -> list[DreamStats]:
        """Cumulative stats per scope (one scope, or every scope that has dreamed)."""
        ...

    def record_tally(self, tally: CycleTally) -> None:
        """Add a failed cycle's tally to its scope's stats, in a small transaction of its own
        (a committed cycle's tally lands in its commit)."""
        ...

    def record_recalls(self, tallies: Sequence[RecallTally]) -> None:
        """Add recall counts to their scopes' hours, in one small transaction; a tally of a
        scope the store does not hold is dropped."""
        ...

    def recall_stats(self, scope: Scope, since: datetime | None = None) -> list[RecallTally]:
        """The recall use of ``scope`` per hour (from ``since``), oldest first."""
        ...

    def integrity_check(self) -> str:
        """``"ok"`` when the database is sound, else the first problem found."""
        ...

    def migrations(self) -> list[str]:
        """The names of the migrations applied, in order."""
        ...


@runtime_checkable
class ResponseCache(Protocol):
    """Model answers by a hash of their input (:mod:`reverie.llm.cache`): not cycle state,
    written outside any cycle transaction. ``value`` holds ``model``, ``response`` (the JSON
    answer), ``input_tokens``, ``output_tokens``."""

    def cache_get(self, key: str) -> dict[str, Any] | None:
        """The cached answer under ``key`` (with its ``created_at``), or None."""
        ...

    def cache_put(self, key: str, value: dict[str, Any]) -> None:
        """Store (or replace) the answer under ``key``."""
        ...


@runtime_checkable
class BrainStore(Store, History, Stats, ResponseCache, Protocol):
    """Everything both backends do: the core, history and stats, leases, plans held for review,
    vectors, API keys, the response cache, erasure, the cold tier and the schedule. The engine,
    the dream cycle, workers and the edges hold one; only :class:`NearestNeighbours` and
    :class:`BundleBytes` are optional, asked for with ``isinstance``."""

    # -- leases: at most one worker dreams a scope at a time (reverie.store.sql.leases); a commit to
    # a scope whose live lease another owner than ``lease_owner`` holds is refused

    lease_owner: str | None

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

    # -- plans held for review (reverie.store.sql.plans)

    def put_plan(self, plan: PendingPlan) -> None:
        """Store a new pending plan; :class:`~reverie.errors.PlanPending` if its scope already
        has one."""
        ...

    def plan(self, plan_id: str) -> PendingPlan:
        """The plan ``plan_id``; :class:`~reverie.errors.NotFound` if there is none."""
        ...

    def plans(
        self, scope: Scope | None = None, status: PlanStatus | None = None, limit: int = 50
    ) -> list[PendingPlan]:
        """The newest ``limit`` plans (of ``scope``, with ``status``), newest first."""
        ...

    def settle_plan(
        self, plan_id: str, status: PlanStatus, at: datetime, reason: str | None = None
    ) -> PendingPlan:
        """Move a pending plan to ``status`` (rejected or stale); :class:`Conflict` if it is no
        longer pending."""
        ...

    # -- vectors by content hash and the units recall finds by them (reverie.store.sql.embeddings),
    # and the settings a database records about itself (migration 0015), such as the embedder
    # that made its vectors: text values, a write replaces the key's value

    def meta_get(self, key: str) -> str | None:
        """The value recorded under ``key``, or None."""
        ...

    def meta_put(self, key: str, value: str) -> None:
        """Record ``value`` under ``key`` (replacing what was there)."""
        ...

    def vectors_get(self, model: str, hashes: Sequence[str]) -> dict[str, bytes]:
        """The cached vectors of ``model`` for those of ``hashes`` that have one."""
        ...

    def vectors_put(
        self, model: str, vectors: dict[str, bytes], units: Sequence[VectorUnit]
    ) -> None:
        """Cache ``vectors`` (hash → blob) and record ``units``: idempotent, one transaction."""
        ...

    def vector_rows(
        self,
        scope: Scope,
        model: str,
        after: int,
        *,
        kind: str | None = None,
        newest: int | None = None,
    ) -> list[VectorRow]:
        """Units of ``scope`` for ``model`` with ``n > after``, with vectors, ``n`` ascending;
        only those of ``kind`` when given, only the last ``newest`` of them when given."""
        ...

    def unit_vectors(
        self, scope: Scope, model: str, kind: str, refs: Sequence[str]
    ) -> dict[str, bytes]:
        """The vectors of those units of ``kind`` among ``refs`` that are embedded (by ref)."""
        ...

    def unembedded_episodes(self, scope: Scope, model: str, limit: int) -> list[Episode]:
        """Episodes of ``scope`` past the newest one embedded for ``model``, by seq."""
        ...

    # -- API keys, as salted hashes (reverie.keys)

    def put_api_key(self, key: ApiKey) -> None: ...

    def api_key(self, key_id: str) -> ApiKey:
        """The key with this id (revoked or not); :class:`NotFound` otherwise."""
        ...

    def api_keys(self) -> list[ApiKey]: ...

    def revoke_api_key(self, key_id: str, at: datetime) -> ApiKey:
        """Mark the key revoked (idempotent: the first revocation time stays)."""
        ...

    # -- erasure (reverie.store.sql.erasure, docs/privacy.md): what a request reaches, the one
    # transaction that removes it, receipts and tombstones, exports, the physical scrub

    def erasure_episodes(
        self,
        scopes: Sequence[Scope],
        *,
        before: datetime | None = None,
        containing: str | None = None,
    ) -> list[Episode]:
        """Episodes of ``scopes``, those created before ``before``, those with ``containing``
        in a free-form field (any case, metadata included); by seq."""
        ...

    def pages_citing_any(self, episode_ids: Iterable[str], *, tenant: str) -> list[str]:
        """Pages of any scope with any revision citing one of ``tenant``'s ``episode_ids``."""
        ...

    def pages_containing(self, scopes: Sequence[Scope], text: str) -> list[str]:
        """Pages of ``scopes`` that may hold ``text`` (a superset; the caller checks)."""
        ...

    def erase(
        self, erasure: Erasure, *, apply: bool = True, on_step: StepHook | None = None
    ) -> Erased:
        """Apply ``erasure`` in one transaction, all or nothing (``apply=False``: run it and
        roll back); the rows removed or rewritten per store area, and the tables that keep
        old row versions of them in the files (recorded in the receipt)."""
        ...

    def erasure_receipt(self, erasure_id: str) -> Receipt:
        """A stored receipt with its tombstones; :class:`~reverie.errors.NotFound` if none."""
        ...

    def erasure_receipts(self, *, unfinished: bool = False, limit: int = 50) -> list[Receipt]:
        """The newest receipts (only those with file work still due), newest first."""
        ...

    def finish_erasure(self, erasure_id: str, at: datetime) -> None:
        """Record that the file work due after ``erasure_id``'s commit is done."""
        ...

    def tombstones(self, page_ids: Iterable[str]) -> list[Tombstone]: ...

    def scrub_free_space(self, tables: Sequence[str] = ()) -> bool:
        """Overwrite what deleted rows left in the files (on PostgreSQL, ``VACUUM FULL`` of
        ``tables``, an :class:`~reverie.store.records.Erased`'s residue); False if it could
        not finish now."""
        ...

    def record_export(self, path: str, kind: str, scopes: Sequence[Scope], at: datetime) -> None:
        """Remember that ``scopes`` were exported to ``path`` (``markdown`` or ``training``)."""
        ...

    def exports(self, scopes: Sequence[Scope]) -> list[ExportRecord]: ...

    # -- the cold tier's index and the hot-store stubs (reverie.store.sql.archive). Where a
    # bundle's bytes live is the backend's: files beside SQLite's database file (its ``path``),
    # the database itself where the store is a BundleBytes (PostgreSQL, whose clients share no
    # folder)

    def archive_candidates(self, scope: Scope, before: datetime, limit: int) -> list[Episode]:
        """Consolidated (by a cycle not undone), not yet archived episodes of ``scope`` created
        before ``before``, by seq."""
        ...

    def archive_commit(self, bundle: BundleInfo, episodes: Sequence[Episode]) -> None:
        """Index ``bundle`` and turn ``episodes`` (the originals) into stubs, all or nothing."""
        ...

    def archive_restore(
        self, bundle: BundleInfo, episodes: Sequence[Episode], now: datetime
    ) -> int:
        """Put the bundle's ``episodes`` back into the hot store; the number restored."""
        ...

    def archive_bundles(self, scope: Scope | None = None) -> list[BundleInfo]: ...

    def archive_locations(self, episode_ids: Iterable[str], *, tenant: str) -> dict[str, str]:
        """``{episode id: bundle hash}`` for those of ``tenant``'s ``episode_ids`` that are
        archived."""
        ...

    def archive_bundles_of_cycle(self, cycle_id: str) -> list[str]:
        """The bundles holding episodes that ``cycle_id`` consolidated."""
        ...

    # -- the scheduler's memory, one row per scope (reverie.store.sql.schedule): every scheduler
    # on one database (``reverie serve``'s, ``reverie daemon``'s, on any number of machines)
    # agrees on what is due, and leases keep two of them off one scope. ``reverie worker``
    # needs none of it: it claims whatever is pending (claim_due)

    def schedule_record(self, scope: Scope, now: datetime) -> ScheduleRecord:
        """The scope's record, created (first seen ``now``) when missing."""
        ...

    def schedule_records(self, now: datetime) -> list[ScheduleRecord]:
        """Every scope's record (created when missing), by scope key."""
        ...

    def schedule_claim(
        self, record: ScheduleRecord, owner: str, now: datetime, *, skip: bool = False
    ) -> bool:
        """Mark a run of ``owner`` starting ``now`` (``skip``: record a missed slot as skipped
        instead). False when the record changed since it was read (compare-and-set)."""
        ...

    def schedule_finish(
        self,
        scope: Scope,
        owner: str,
        *,
        ok: bool,
        status: str,
        cycle_id: str | None,
        message: str,
    ) -> bool:
        """End ``owner``'s run; False when the run is no longer ``owner``'s."""
        ...


# -- optional capabilities: what one backend has and the other has not --------------------------


@runtime_checkable
class NearestNeighbours(Protocol):
    """A store that answers vector queries itself, so recall asks it instead of loading the
    scope's vectors into memory. Queries are packed unit vectors; scores are cosine
    similarities, as in the in-memory index.

    PostgreSQL only: pgvector's HNSW index answers them in the server. SQLite has no vector
    index to ask (no extension is loaded), so recall keeps the scope's vectors in an in-memory
    matrix instead (:mod:`reverie.recall.vectors`), which gives the same scores."""

    def vector_search(
        self,
        scope: Scope,
        model: str,
        query: bytes,
        k: int,
        kind: str,
        *,
        newest: int | None = None,
    ) -> list[tuple[str, str, float]]:
        """The ``k`` units of ``kind`` nearest ``query``: ``(kind, ref, cosine)``, best first;
        with ``newest``, among the scope's last ``newest`` units of that kind embedded."""
        ...

    def vector_cosines(
        self, scope: Scope, model: str, query: bytes, refs: Sequence[str], hashes: Sequence[str]
    ) -> tuple[dict[str, float], dict[str, float]]:
        """Cosine with ``query`` of the scope's episode units named in ``refs`` (by ref) and
        of the embedded texts whose content hash is in ``hashes`` (by hash)."""
        ...


@runtime_checkable
class BundleBytes(Protocol):
    """A store that keeps the bundles' bytes in the database, content-addressed
    (``sha256:<hex>`` of the bytes), so that every client of a server reads the same cold tier.
    Deleting a bundle's index row (an erasure) deletes its bytes in the same transaction."""

    def bundle_put(self, bundle_hash: str, data: bytes) -> None:
        """Store ``data`` under ``bundle_hash``, in a transaction of its own (before the index
        names it); storing the same bundle again changes nothing."""
        ...

    def bundle_get(self, bundle_hash: str) -> bytes | None:
        """The bytes stored under ``bundle_hash``, or None."""
        ...
