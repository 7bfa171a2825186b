"""The store contract implemented once, in SQL both backends run (see :mod:`reverie.store.sql`).

:class:`SQLStore` owns a :class:`~reverie.store.sql.database.Backend` for what differs and calls it
explicitly. What both databases run alike is written here (episodes, pages, revisions, cycles,
stats, migrations) or as functions of the :class:`~reverie.store.sql.database.Database` in the
modules beside it, which :class:`SQLStore` names as its methods (``commit = commit.commit``):
every method's body is one reference away, and nothing calls back through a subclass.

Reads take a scope or an id and filter inside the query. Lists of ids go through
:meth:`~reverie.store.sql.dialect.Dialect.members`, so SQLite reads them in chunks and
PostgreSQL in one statement; results that must come out in an order are put in order here, not
by the chunking.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from reverie.errors import MigrationError, NotFound, StoreDamaged, StoreReadOnly
from reverie.models import Cycle, Episode, Page, Revision, Scope
from reverie.store.base import JournalEntry, StoreStats, Strength
from reverie.store.migrations import load_migrations
from reverie.store.records import Lease
from reverie.store.sql import archive as _archive
from reverie.store.sql import commit as _commit
from reverie.store.sql import cumulative as _stats
from reverie.store.sql import embeddings as _embeddings
from reverie.store.sql import erasure as _erasure
from reverie.store.sql import keys_cache as _keys
from reverie.store.sql import leases as _leases
from reverie.store.sql import plans as _plans
from reverie.store.sql import schedule as _schedule
from reverie.store.sql.database import Database
from reverie.store.sql.rows import CYCLE_COLUMNS, EPISODE_COLUMNS, PAGE_SELECT, REVISION_COLUMNS

__all__ = ["SQLStore"]

_CYCLE_SELECT = f"SELECT {CYCLE_COLUMNS} FROM cycles"
_COST_FIELDS = ("model_calls", "cache_hits", "input_tokens", "output_tokens", "model_latency_s")


class SQLStore(Database):
    """A :class:`reverie.store.base.BrainStore` over one
    :class:`~reverie.store.sql.database.Backend` (:class:`~reverie.store.sqlite.SQLiteStore`,
    :class:`~reverie.store.postgres.PostgresStore` hand it theirs)."""

    # -- written once, in the modules beside this one ------------------------------------------

    append = _commit.append
    commit = _commit.commit
    heartbeat_lease = _leases.heartbeat_lease
    release_lease = _leases.release_lease
    put_plan = _plans.put_plan
    plan = _plans.plan
    plans = _plans.plans
    settle_plan = _plans.settle_plan
    schedule_record = _schedule.schedule_record
    schedule_records = _schedule.schedule_records
    schedule_claim = _schedule.schedule_claim
    schedule_finish = _schedule.schedule_finish
    archive_candidates = _archive.archive_candidates
    archive_commit = _archive.archive_commit
    archive_restore = _archive.archive_restore
    archive_bundles = _archive.archive_bundles
    archive_locations = _archive.archive_locations
    archive_bundles_of_cycle = _archive.archive_bundles_of_cycle
    cache_get = _keys.cache_get
    cache_put = _keys.cache_put
    put_api_key = _keys.put_api_key
    api_key = _keys.api_key
    api_keys = _keys.api_keys
    revoke_api_key = _keys.revoke_api_key
    record_tally = _stats.record_tally
    dream_stats = _stats.dream_stats
    record_recalls = _stats.record_recalls
    recall_stats = _stats.recall_stats
    promotions = _stats.promotions
    meta_get = _embeddings.meta_get
    meta_put = _embeddings.meta_put
    vectors_get = _embeddings.vectors_get
    vectors_put = _embeddings.vectors_put
    vector_rows = _embeddings.vector_rows
    unit_vectors = _embeddings.unit_vectors
    unembedded_episodes = _embeddings.unembedded_episodes
    erasure_episodes = _erasure.erasure_episodes
    pages_citing_any = _erasure.pages_citing_any
    pages_containing = _erasure.pages_containing
    erase = _erasure.erase
    erasure_receipt = _erasure.erasure_receipt
    erasure_receipts = _erasure.erasure_receipts
    finish_erasure = _erasure.finish_erasure
    tombstones = _erasure.tombstones
    record_export = _erasure.record_export
    exports = _erasure.exports

    # -- what the backend does its own way -----------------------------------------------------

    @property
    def name(self) -> str:
        """The database as messages name it."""
        return self.backend.name

    def close(self) -> None:
        self.backend.close()

    def integrity_check(self) -> str:
        return self.backend.integrity_check()

    def scrub_free_space(self, tables: Sequence[str] = ()) -> bool:
        return self.backend.scrub_free_space(tables)

    def search_pages(
        self, scope: Scope, terms: Sequence[str], limit: int, statuses: Iterable[str] = ("active",)
    ) -> list[tuple[Page, float]]:
        wanted = list(statuses)
        if not terms or not self._has_pages(scope, wanted):
            return []
        return self.backend.search_pages(scope, terms, limit, wanted)

    def _has_pages(self, scope: Scope, statuses: Sequence[str]) -> bool:
        """Whether a page of ``scope`` has one of ``statuses``: a probe of the scope's pages,
        asked before the text index, which takes a whole search to find none (FTS5 loads
        every term's matches first, PostgreSQL plans the query). Recall searches the
        superseded pages for every question, and most scopes have none."""
        for where, params in self.dialect.members("status", statuses):
            sql = f"SELECT 1 FROM pages WHERE scope_key = ? AND {where} LIMIT 1"
            if self.read(sql, [scope.key, *params]):
                return True
        return False

    def search_episodes(
        self, scope: Scope, terms: Sequence[str], limit: int, *, window: int | None = None
    ) -> list[tuple[Episode, float]]:
        return self.backend.search_episodes(scope, terms, limit, window) if terms else []

    def pages_by_id(self, scope: Scope, page_ids: Iterable[str]) -> dict[str, Page]:
        """The pages of ``scope`` among ``page_ids``."""
        return self.backend.pages_by_id(scope, list(dict.fromkeys(page_ids)))

    def acquire_lease(self, scope: Scope, owner: str, ttl: float, now: datetime) -> Lease | None:
        with self.write() as c:
            self.ensure_scopes(c, [scope], now)
            row = self.backend.take_lease(c, scope, owner, ttl, now)
        return self.decode.lease(row) if row else None

    def claim_due(self, owner: str, ttl: float, now: datetime, limit: int = 1) -> list[Lease]:
        with self.write() as c:
            rows = self.backend.claim_due(c, owner, ttl, now, limit)
        return [self.decode.lease(r) for r in rows]

    # -- migrations ----------------------------------------------------------------------------
    def migrate(self) -> list[str]:
        """Apply pending migrations in order, each in a transaction of its own; the names
        applied. A read-only store applies none: it only checks that none is pending."""
        if self.read_only:
            return self._check_migrated()
        with self.backend.migration() as c:  # IF NOT EXISTS alone races on PostgreSQL
            c.execute(
                "CREATE TABLE IF NOT EXISTS _migrations"
                f" (name TEXT PRIMARY KEY, applied_at {self.dialect.time_type} NOT NULL)"
            )
        applied = [
            name
            for name, sql in load_migrations(self.dialect.name)
            if self._apply_migration(name, sql)
        ]
        self.backend.after_migrate()
        return applied

    def _check_migrated(self) -> list[str]:
        applied = set(self._applied_migrations())
        missing = [name for name, _ in load_migrations(self.dialect.name) if name not in applied]
        if missing:
            state = (
                f"its schema is out of date (needs {', '.join(missing)})"
                if applied
                else "it holds no Reverie schema (empty, or another program's database)"
            )
            raise StoreReadOnly(
                f"database {self.name} is read-only and {state}; run `reverie init` on it once"
                " with write access, then read it read-only"
            )
        self.backend.after_migrate()
        return []

    def _applied_migrations(self) -> list[str]:
        """The migrations recorded in the database; none when it has no record of them."""
        try:
            return self.migrations()
        except self.dialect.errors as exc:
            if "no such table" in str(exc) or "does not exist" in str(exc):
                return []
            raise

    def _apply_migration(self, name: str, sql: str) -> bool:
        with self.backend.migration() as c:
            if c.execute("SELECT 1 FROM _migrations WHERE name = ?", (name,)).fetchone():
                return False
            try:
                self.backend.run_script(c, sql)
            except self.dialect.errors as exc:
                raise MigrationError(f"migration {name} failed: {exc}") from exc
            c.execute("INSERT INTO _migrations VALUES (?, CURRENT_TIMESTAMP)", (name,))
        return True

    def migrations(self) -> list[str]:
        return [r[0] for r in self.read("SELECT name FROM _migrations ORDER BY name")]

    # -- episodes ---------------------------------------------------------------------------

    def _episodes_where(self, where: str, params: Sequence[Any]) -> list[Episode]:
        sql = f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE {where}"
        return self.read_as(sql, params, self.decode.episode)

    def episode(self, episode_id: str, *, tenant: str) -> Episode:
        found = self._episodes_where("tenant = ? AND id = ?", (tenant, episode_id))
        if not found:
            raise NotFound(f"no episode {episode_id}")
        return found[0]

    def episodes(self, episode_ids: Iterable[str], *, tenant: str) -> list[Episode]:
        found: list[Episode] = []
        for where, params in self.dialect.members("id", list(dict.fromkeys(episode_ids))):
            found += self._episodes_where(f"tenant = ? AND {where}", [tenant, *params])
        return sorted(found, key=lambda e: e.seq or 0)

    def first_stored(self, episode_ids: Iterable[str], *, tenant: str) -> datetime | None:
        firsts = [
            self.dialect.at(row[0])
            for where, params in self.dialect.members("id", list(dict.fromkeys(episode_ids)))
            for row in self.read(
                f"SELECT min(inserted_at) FROM episodes WHERE tenant = ? AND {where}",
                [tenant, *params],
            )
            if row[0] is not None
        ]
        return min(firsts) if firsts else None

    def scan(self, scope: Scope, after_seq: int, limit: int) -> list[Episode]:
        return self._episodes_where(
            "scope_key = ? AND seq > ? AND consolidated_in IS NULL ORDER BY seq LIMIT ?",
            (scope.key, after_seq, limit),
        )

    def recent_episodes(self, scope: Scope, limit: int) -> list[Episode]:
        return self._episodes_where("scope_key = ? ORDER BY seq DESC LIMIT ?", (scope.key, limit))

    def marked(self, cycle_id: str) -> list[int]:
        rows = self.read(
            "SELECT seq FROM episodes WHERE consolidated_in = ? ORDER BY seq", (cycle_id,)
        )
        return [r[0] for r in rows]

    # -- pages ------------------------------------------------------------------------------

    def page(self, page_id: str) -> Page:
        rows = self.read(PAGE_SELECT + " WHERE p.id = ?", (page_id,))
        if not rows:
            raise NotFound(f"no page {page_id}")
        return self.decode.page(rows[0])

    def pages(self, scope: Scope, statuses: Iterable[str] | None = None) -> list[Page]:
        sql, params = PAGE_SELECT + " WHERE p.scope_key = ?", [scope.key]
        if statuses is not None:
            wanted = list(statuses)
            sql += f" AND p.status IN ({','.join('?' * len(wanted))})"
            params += wanted
        return [self.decode.page(r) for r in self.read(sql + " ORDER BY p.rid", params)]

    def _pages_where(self, scope: Scope, column: str, values: Iterable[str]) -> list[Page]:
        pages: list[Page] = []
        for where, params in self.dialect.members(f"p.{column}", list(dict.fromkeys(values))):
            rows = self.read(
                PAGE_SELECT + f" WHERE p.scope_key = ? AND {where}", [scope.key, *params]
            )
            pages += map(self.decode.page, rows)
        return pages

    def pages_by_topic(self, scope: Scope, topic_keys: Iterable[str]) -> dict[str, Page]:
        return {p.topic_key: p for p in self._pages_where(scope, "topic_key", topic_keys)}

    def pages_citing(self, scope: Scope, episode_ids: Iterable[str]) -> dict[str, list[str]]:
        """Per episode of ``episode_ids``: the active pages of ``scope`` whose current revision
        cites it (recall answers an episode's situation with its page's lesson)."""
        rows: list[Any] = []
        for where, params in self.dialect.members("c.episode_id", list(dict.fromkeys(episode_ids))):
            rows += self.read(
                "SELECT c.episode_id, p.id FROM citations c JOIN pages p ON p.id = c.page_id"
                " AND c.revision = p.current_revision WHERE c.tenant = ? AND p.scope_key = ?"
                f" AND p.status = 'active' AND {where}",  # (tenant, episode_id) is indexed
                [scope.tenant, scope.key, *params],
            )
        found: dict[str, list[str]] = {}
        for episode_id, page_id in sorted(rows):
            found.setdefault(episode_id, []).append(page_id)
        return found

    def revisions(self, page_id: str) -> list[Revision]:
        rows = self.read(
            f"SELECT {REVISION_COLUMNS} FROM revisions WHERE page_id = ? ORDER BY number",
            (page_id,),
        )
        if not rows:
            raise NotFound(f"no page {page_id}")
        return [self.decode.revision(r) for r in rows]

    # -- cycles -----------------------------------------------------------------------------

    def checkpoint(self, scope: Scope) -> int:
        rows = self.read("SELECT seq FROM checkpoints WHERE scope_key = ?", (scope.key,))
        return int(rows[0][0]) if rows else 0

    def cycle(self, cycle_id: str) -> Cycle:
        rows = self.read(_CYCLE_SELECT + " WHERE id = ?", (cycle_id,))
        if not rows:
            raise NotFound(f"no cycle {cycle_id}")
        return self.decode.cycle(rows[0])

    def cycles(self, scope: Scope | None = None, limit: int = 50) -> list[Cycle]:
        where, params = (" WHERE scope_key = ?", [scope.key]) if scope else ("", [])
        rows = self.read(_CYCLE_SELECT + where + " ORDER BY n DESC LIMIT ?", [*params, limit])
        return [self.decode.cycle(r) for r in rows]

    def strengths(self, page_ids: Iterable[str]) -> dict[str, Strength]:
        found: dict[str, Strength] = {}
        for where, params in self.dialect.members("o.page_id", list(dict.fromkeys(page_ids))):
            rows = self.read(
                "SELECT o.page_id, sum(o.episodes), count(*), max(o.last_seen) FROM observations o"
                f" JOIN cycles c ON c.id = o.cycle_id WHERE c.undone_at IS NULL AND {where}"
                " GROUP BY o.page_id",
                params,
            )
            for page_id, episodes, cycles, last in rows:
                found[page_id] = Strength(
                    page_id, int(episodes), int(cycles), self.dialect.at(last)
                )
        return found

    def journal(self, scope: Scope, limit: int = 50) -> list[JournalEntry]:
        rows = self.read(
            "SELECT cycle_id, created_at, text FROM journal WHERE scope_key = ?"
            " ORDER BY n DESC LIMIT ?",
            (scope.key, limit),
        )
        return [JournalEntry(scope, r[0], self.dialect.at(r[1]), r[2]) for r in reversed(rows)]

    def scopes(self) -> list[Scope]:
        keys = [r[0] for r in self.read("SELECT scope_key FROM scopes")]
        if not all(isinstance(k, str) for k in keys):
            raise StoreDamaged("a scope row holds no key: the database file is damaged")
        return [self.decode.scope(key) for key in sorted(keys)]

    def pending_scopes(self) -> list[Scope]:
        """Scopes with episodes past their checkpoint that no cycle has consolidated."""
        rows = self.read(
            "SELECT s.scope_key FROM scopes s LEFT JOIN checkpoints c ON c.scope_key = s.scope_key"
            " WHERE EXISTS (SELECT 1 FROM episodes e WHERE e.scope_key = s.scope_key"
            " AND e.seq > COALESCE(c.seq, 0) AND e.consolidated_in IS NULL)"
        )
        return [self.decode.scope(key) for key in sorted(r[0] for r in rows)]

    # -- stats ------------------------------------------------------------------------------

    def stats(self, scope: Scope | None = None) -> StoreStats:
        where, params = ("WHERE scope_key = ?", [scope.key]) if scope else ("", [])
        ep = self.read(f"SELECT count(*), count(consolidated_in) FROM episodes {where}", params)[0]
        pg = self.read(
            f"SELECT count(*), count(CASE WHEN status = 'active' THEN 1 END) FROM pages {where}",
            params,
        )[0]
        rev_where = "WHERE page_id IN (SELECT id FROM pages WHERE scope_key = ?)" if scope else ""
        revs = self.read(f"SELECT count(*) FROM revisions {rev_where}", params)[0][0]
        cyc = self.read(f"SELECT count(*) FROM cycles {where}", params)[0][0]
        return StoreStats(
            episodes=ep[0],
            consolidated=ep[1],
            pages=pg[0],
            active_pages=pg[1],
            revisions=revs,
            cycles=cyc,
            checkpoint=self.checkpoint(scope) if scope else 0,
            **self._model_cost(where, params),
        )

    def _model_cost(self, where: str, params: list[str]) -> dict[str, Any]:
        """Model cost summed over the recorded cycles' reports."""
        sums = ", ".join(
            f"coalesce(sum({self.dialect.json_number('report', f)}), 0)" for f in _COST_FIELDS
        )
        row = self.read(f"SELECT {sums} FROM cycles {where}", params)[0]
        cost: dict[str, Any] = {f: int(v) for f, v in zip(_COST_FIELDS, row, strict=True)}
        cost["model_latency_s"] = round(float(row[-1]), 6)
        return cost
