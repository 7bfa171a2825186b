"""The scale-out store: PostgreSQL + pgvector, for many workers on many machines.

It passes the same contract suite as :class:`reverie.store.sqlite.SQLiteStore` (one suite,
parametrized over both) and keeps the same invariants with PostgreSQL's tools:

- **seq commits in order within a scope.** A sequence hands out values at ``nextval`` time, but
  transactions commit in any order, so a reader could see seq 11 before seq 10 commits and a
  checkpoint could pass 10 for good. Every append therefore takes a transaction-scoped advisory
  lock per scope (sorted, so two batches never deadlock) *before* drawing its seqs; the next
  appender of that scope draws only after the previous one committed. Scopes never wait on each
  other, and collection stays by seq, per scope, as on SQLite.
- **One commit per scope at a time.** :meth:`commit` takes a second per-scope advisory lock, then
  checks the checkpoint and page revisions it was built on (compare-and-set), so two cycles of
  one scope can never both land, whatever their isolation level.
- **Search.** Full text is a ``tsvector`` (``english``) with a GIN index, ranked by ``ts_rank``:
  positive, higher is better, title weighted twice the body as in SQLite's BM25 weights, and the
  scope filter is in the query. Vectors are pgvector values with HNSW indexes
  (:mod:`reverie.store.postgres_more`).

Timestamps are ``timestamptz`` read back in UTC; JSON is ``jsonb``. Requires the ``postgres``
extra (``psycopg``, ``pgvector``), imported only when a PostgreSQL URL is opened.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any

from reverie.errors import Conflict, MigrationError, MissingExtra, NotFound, StoreError
from reverie.models import (
    Claim,
    Cycle,
    CycleReport,
    CycleStatus,
    Episode,
    Outcome,
    Page,
    PageKind,
    PageStatus,
    Revision,
    Scope,
    meta_fields,
    now_utc,
    revision_meta,
)
from reverie.store.base import Changeset, PageWrite, StepHook, StoreStats
from reverie.store.cumulative import PostgresCumulativeMixin  # issue 5/6: stats, org
from reverie.store.keys_cache import PostgresKeysCacheMixin  # model response cache, API keys
from reverie.store.migrations import load_migrations
from reverie.store.plans import PostgresPlansMixin  # issue 4 (8): review mode
from reverie.store.postgres_more import PostgresExtrasMixin
from reverie.store.sqlite import SQLiteStore

if TYPE_CHECKING:
    import psycopg

__all__ = ["APPEND_LOCK", "COMMIT_LOCK", "PostgresStore", "scope_lock_key"]

APPEND_LOCK = 0x5245_0001
"""First key of the advisory lock that orders appends within a scope."""
COMMIT_LOCK = 0x5245_0002
"""First key of the advisory lock that serialises commits within a scope."""

EPISODE_COLUMNS = (
    "seq, id, scope_key, session_id, created_at, situation, action, outcome, outcome_details,"
    " error, lesson, importance, category, tools, entities, metadata, consolidated_in"
)
_E_COLUMNS = ", ".join("e." + c.strip() for c in EPISODE_COLUMNS.split(","))
_INSERT_COLUMNS = EPISODE_COLUMNS + ", fingerprint, inserted_at"
_REVISION_COLUMNS = (
    "page_id, number, hash, title, kind, claims, confidence, status, valid_from, valid_until,"
    " superseded_by, cycle_id, author, reason, created_at, meta"
)
_PAGE_SELECT = (
    "SELECT p.id, p.scope_key, p.topic_key, p.created_at, p.updated_at, "
    + ", ".join("r." + c.strip() for c in _REVISION_COLUMNS.split(","))
    + " FROM pages p JOIN revisions r ON r.page_id = p.id AND r.number = p.current_revision"
)
_PAGE_VECTOR = (
    "setweight(to_tsvector('english', %s), 'A') || setweight(to_tsvector('english', %s), 'B')"
)
_RANK_WEIGHTS = "'{0.1, 0.2, 0.5, 1.0}'"  # D, C, B (body), A (title): title = 2 × body
_CYCLE_SELECT = (
    "SELECT id, scope_key, status, started_at, finished_at, checkpoint_before, checkpoint_after,"
    " report, undone_at FROM cycles"
)


def scope_lock_key(scope_key: str) -> int:
    """A stable signed 32-bit key for a scope's advisory locks (collisions only serialise)."""
    return int.from_bytes(hashlib.sha1(scope_key.encode()).digest()[:4], "big", signed=True)


def _connect(url: str) -> psycopg.Connection[Any]:
    try:
        import psycopg
    except ImportError:  # pragma: no cover - depends on the environment
        raise MissingExtra("psycopg", "postgres") from None
    try:
        conn = psycopg.connect(url, autocommit=True)
    except psycopg.Error as exc:
        raise StoreError(f"cannot connect to PostgreSQL at {_safe(url)}: {exc}") from exc
    conn.execute("SET TIME ZONE 'UTC'")
    return conn


def _safe(url: str) -> str:
    """``url`` without a password."""
    head, sep, tail = url.rpartition("@")
    if not sep or ":" not in head.split("//", 1)[-1]:
        return url
    scheme, _, userinfo = head.partition("//")
    return f"{scheme}//{userinfo.split(':', 1)[0]}:***@{tail}"


def _tsquery(count: int) -> str:
    """A tsquery that matches any of ``count`` terms, each parsed safely by plainto_tsquery."""
    return "(" + " || ".join(["plainto_tsquery('english', %s)"] * count) + ")"


class PostgresStore(
    PostgresExtrasMixin,
    PostgresKeysCacheMixin,  # model response cache, API keys
    PostgresPlansMixin,
    PostgresCumulativeMixin,
):
    """A :class:`reverie.store.base.Store` on a PostgreSQL database with pgvector.

    ``lease_owner`` names the worker this store commits for: a commit to a scope whose live
    lease another owner holds is refused (see :mod:`reverie.store.leases`).
    """

    def __init__(self, url: str, *, lease_owner: str | None = None) -> None:
        self.url = url
        self.lease_owner = lease_owner
        self._conn = _connect(url)
        self._lock = threading.RLock()
        self._scopes: dict[str, Scope] = {}
        self._vector_ready = False

    # -- plumbing ---------------------------------------------------------------------------

    @contextmanager
    def _write(self) -> Iterator[psycopg.Cursor[Any]]:
        with self._lock, self._conn.transaction(), self._conn.cursor() as cur:
            yield cur

    def _read(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Any]:
        with self._lock, self._conn.cursor() as cur:
            cur.execute(sql, params)
            return cur.fetchall()

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def migrate(self) -> list[str]:
        applied: list[str] = []
        with self._write() as c:
            c.execute(
                "CREATE TABLE IF NOT EXISTS _migrations"
                " (name TEXT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL)"
            )
        for name, sql in load_migrations("postgres"):
            applied += self._apply_migration(name, sql)
        self._register_vector()
        return applied

    def _apply_migration(self, name: str, sql: str) -> list[str]:
        import psycopg

        with self._write() as c:
            c.execute("SELECT pg_advisory_xact_lock(%s)", (APPEND_LOCK - 1,))  # one migrator
            c.execute("SELECT 1 FROM _migrations WHERE name = %s", (name,))
            if c.fetchone():
                return []
            try:
                c.execute(sql.encode())
            except psycopg.Error as exc:
                raise MigrationError(f"migration {name} failed: {exc}") from exc
            c.execute("INSERT INTO _migrations VALUES (%s, %s)", (name, now_utc()))
        return [name]

    def _register_vector(self) -> None:
        from pgvector.psycopg import register_vector

        with self._lock:
            register_vector(self._conn)
            self._vector_ready = True

    def migrations(self) -> list[str]:
        return [r[0] for r in self._read("SELECT name FROM _migrations ORDER BY name")]

    def _scope(self, key: str) -> Scope:
        scope = self._scopes.get(key)
        if scope is None:
            scope = Scope.parse(key)
            self._scopes[key] = scope
        return scope

    @staticmethod
    def _lock_scopes(c: psycopg.Cursor[Any], namespace: int, keys: Iterable[str]) -> None:
        """Lock every scope in one round trip, in ascending key order (no deadlock)."""
        ordered = sorted({scope_lock_key(k) for k in keys})
        c.execute(
            "SELECT count(pg_advisory_xact_lock(%s, k)) FROM unnest(%s::int[]) AS k",
            (namespace, ordered),
        )

    # -- episodes ---------------------------------------------------------------------------

    def append(self, episodes: Sequence[Episode]) -> list[Episode]:
        unique = SQLiteStore._dedupe_batch(episodes)
        if not unique:
            return []
        with self._write() as c:
            existing = self._existing(c, unique)
            return self._insert_episodes(c, [e for e in unique if e.id not in existing])

    def _existing(self, c: psycopg.Cursor[Any], episodes: Sequence[Episode]) -> set[str]:
        wanted = {e.id: e for e in episodes}
        c.execute("SELECT id, fingerprint FROM episodes WHERE id = ANY(%s)", (list(wanted),))
        rows = c.fetchall()
        conflicts = [r[0] for r in rows if r[1] != wanted[r[0]].fingerprint()]
        if conflicts:
            raise Conflict(
                f"episode ids already stored with different content: {', '.join(conflicts[:10])}"
            )
        return {r[0] for r in rows}

    def _insert_episodes(
        self, c: psycopg.Cursor[Any], episodes: Sequence[Episode]
    ) -> list[Episode]:
        if not episodes:
            return []
        scopes = {e.scope for e in episodes}
        self._ensure_scopes(c, scopes)
        self._lock_scopes(c, APPEND_LOCK, (s.key for s in scopes))  # before drawing any seq
        c.execute(
            "SELECT nextval(pg_get_serial_sequence('episodes', 'seq'))"
            " FROM generate_series(1, %s) ORDER BY 1",
            (len(episodes),),
        )
        seqs = [r[0] for r in c.fetchall()]
        stored = [e.model_copy() for e in episodes]
        inserted_at = now_utc()
        for e, seq in zip(stored, seqs, strict=True):
            e.seq = seq
        with c.copy(f"COPY episodes ({_INSERT_COLUMNS}) FROM STDIN") as copy:
            for e in stored:
                copy.write_row(self._episode_row(e, inserted_at))
        return stored

    def _ensure_scopes(self, c: psycopg.Cursor[Any], scopes: Iterable[Scope]) -> None:
        ordered = sorted(set(scopes), key=str)
        c.execute(
            "INSERT INTO scopes SELECT k, t, a, u, %s FROM unnest(%s::text[], %s::text[],"
            " %s::text[], %s::text[]) AS s(k, t, a, u) ON CONFLICT DO NOTHING",
            (
                now_utc(),
                [s.key for s in ordered],
                [s.tenant for s in ordered],
                [s.agent for s in ordered],
                [s.user for s in ordered],
            ),
        )

    @staticmethod
    def _episode_row(e: Episode, inserted_at: datetime) -> tuple[Any, ...]:
        return (
            e.seq,
            e.id,
            e.scope.key,
            e.session_id,
            e.created_at,
            e.situation,
            e.action,
            str(e.outcome),
            e.outcome_details,
            e.error,
            e.lesson,
            e.importance,
            e.category,
            json.dumps(e.tools),
            json.dumps(e.entities),
            json.dumps(e.metadata, sort_keys=True) if e.metadata else "{}",
            e.consolidated_in,
            e.fingerprint(),
            inserted_at,
        )

    def _episode_from_row(self, r: Sequence[Any]) -> Episode:
        return Episode.model_construct(
            seq=r[0],
            id=r[1],
            scope=self._scope(r[2]),
            session_id=r[3],
            created_at=r[4],
            situation=r[5],
            action=r[6],
            outcome=Outcome(r[7]),
            outcome_details=r[8],
            error=r[9],
            lesson=r[10],
            importance=r[11],
            category=r[12],
            tools=r[13],
            entities=r[14],
            metadata=r[15],
            consolidated_in=r[16],
        )

    def _episodes_where(self, where: str, params: Sequence[Any]) -> list[Episode]:
        rows = self._read(f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE {where}", params)
        return [self._episode_from_row(r) for r in rows]

    def episode(self, episode_id: str) -> Episode:
        found = self._episodes_where("id = %s", (episode_id,))
        if not found:
            raise NotFound(f"no episode {episode_id}")
        return found[0]

    def episodes(self, episode_ids: Iterable[str]) -> list[Episode]:
        ids = list(dict.fromkeys(episode_ids))
        return self._episodes_where("id = ANY(%s) ORDER BY seq", (ids,)) if ids else []

    def first_stored(self, episode_ids: Iterable[str]) -> datetime | None:
        ids = list(dict.fromkeys(episode_ids))
        if not ids:
            return None
        first: datetime | None = self._read(
            "SELECT min(inserted_at) FROM episodes WHERE id = ANY(%s)", (ids,)
        )[0][0]
        return first

    def scan(self, scope: Scope, after_seq: int, limit: int) -> list[Episode]:
        return self._episodes_where(
            "scope_key = %s AND seq > %s AND consolidated_in IS NULL ORDER BY seq LIMIT %s",
            (scope.key, after_seq, limit),
        )

    def recent_episodes(self, scope: Scope, limit: int) -> list[Episode]:
        return self._episodes_where("scope_key = %s ORDER BY seq DESC LIMIT %s", (scope.key, limit))

    def marked(self, cycle_id: str) -> list[int]:
        rows = self._read(
            "SELECT seq FROM episodes WHERE consolidated_in = %s ORDER BY seq", (cycle_id,)
        )
        return [r[0] for r in rows]

    # -- pages ------------------------------------------------------------------------------

    def _page_from_row(self, r: Sequence[Any]) -> Page:
        return Page.model_construct(
            id=r[0],
            scope=self._scope(r[1]),
            topic_key=r[2],
            created_at=r[3],
            updated_at=r[4],
            revision=self._revision_from_row(r[5:]),
        )

    @staticmethod
    def _revision_from_row(r: Sequence[Any]) -> Revision:
        claims = tuple(Claim.from_stored(c) for c in r[5])
        return Revision.model_construct(
            page_id=r[0],
            number=r[1],
            hash=r[2],
            title=r[3],
            kind=PageKind(r[4]),
            claims=claims,
            confidence=r[6],
            status=PageStatus(r[7]),
            valid_from=r[8],
            valid_until=r[9],
            superseded_by=r[10],
            cycle_id=r[11],
            author=r[12],
            reason=r[13],
            created_at=r[14],
            **meta_fields(r[15]),
        )

    def page(self, page_id: str) -> Page:
        rows = self._read(_PAGE_SELECT + " WHERE p.id = %s", (page_id,))
        if not rows:
            raise NotFound(f"no page {page_id}")
        return self._page_from_row(rows[0])

    def pages(self, scope: Scope, statuses: Iterable[str] | None = None) -> list[Page]:
        sql, params = _PAGE_SELECT + " WHERE p.scope_key = %s", [scope.key]
        if statuses is not None:
            sql += " AND p.status = ANY(%s)"
            params.append(list(statuses))  # type: ignore[arg-type]
        return [self._page_from_row(r) for r in self._read(sql + " ORDER BY p.rid", params)]

    def pages_by_topic(self, scope: Scope, topic_keys: Iterable[str]) -> dict[str, Page]:
        keys = list(dict.fromkeys(topic_keys))
        rows = self._read(
            _PAGE_SELECT + " WHERE p.scope_key = %s AND p.topic_key = ANY(%s)", (scope.key, keys)
        )
        return {p.topic_key: p for p in map(self._page_from_row, rows)}

    def pages_citing(self, scope: Scope, episode_ids: Iterable[str]) -> dict[str, list[str]]:
        """Per episode of ``episode_ids``: the active pages of ``scope`` whose current revision
        cites it (recall answers an episode's situation with its page's lesson)."""
        rows = self._read(
            "SELECT c.episode_id, p.id FROM citations c JOIN pages p ON p.id = c.page_id"
            " AND c.revision = p.current_revision WHERE p.scope_key = %s"
            " AND p.status = 'active' AND c.episode_id = ANY(%s) ORDER BY c.episode_id, p.id",
            (scope.key, list(dict.fromkeys(episode_ids))),
        )
        found: dict[str, list[str]] = {}
        for episode_id, page_id in rows:
            found.setdefault(episode_id, []).append(page_id)
        return found

    def pages_by_id(self, scope: Scope, page_ids: Iterable[str]) -> dict[str, Page]:
        """Issue 3: the pages of ``scope`` among ``page_ids``, in one read."""
        ids = list(dict.fromkeys(page_ids))
        rows = self._read(
            _PAGE_SELECT + " WHERE p.scope_key = %s AND p.id = ANY(%s)", (scope.key, ids)
        )
        return {p.id: p for p in map(self._page_from_row, rows)}

    def revisions(self, page_id: str) -> list[Revision]:
        rows = self._read(
            f"SELECT {_REVISION_COLUMNS} FROM revisions WHERE page_id = %s ORDER BY number",
            (page_id,),
        )
        if not rows:
            raise NotFound(f"no page {page_id}")
        return [self._revision_from_row(r) for r in rows]

    # -- search: ts_rank is positive, higher is better; the scope filter is in the query -------

    def search_pages(
        self, scope: Scope, terms: Sequence[str], limit: int, statuses: Iterable[str] = ("active",)
    ) -> list[tuple[Page, float]]:
        if not terms:
            return []
        query = _tsquery(len(terms))
        rows = self._read(
            f"SELECT * FROM (SELECT ts_rank({_RANK_WEIGHTS}, p.search, q.q) AS score,"
            f" {_PAGE_SELECT.removeprefix('SELECT ')}, (SELECT {query} AS q) q"
            " WHERE p.scope_key = %s AND p.status = ANY(%s) AND p.search @@ q.q) found"
            " WHERE score > 0 ORDER BY score DESC, id LIMIT %s",
            (*terms, scope.key, list(statuses), limit),
        )
        return [(self._page_from_row(r[1:]), float(r[0])) for r in rows]

    def search_episodes(
        self, scope: Scope, terms: Sequence[str], limit: int, *, window: int | None = None
    ) -> list[tuple[Episode, float]]:
        if not terms:
            return []
        # With a window only the newest `window` matches are ranked, as on SQLite.
        newest = " ORDER BY e.seq DESC LIMIT %s" if window is not None else ""
        rows = self._read(
            "SELECT * FROM (SELECT ts_rank(m.search, m.q) AS score, m.* FROM"
            f" (SELECT e.search, q.q, {_E_COLUMNS}"
            f" FROM episodes e, (SELECT {_tsquery(len(terms))} AS q) q"
            f" WHERE e.scope_key = %s AND e.search @@ q.q{newest}) m) ranked"
            " WHERE score > 0 ORDER BY score DESC, seq DESC LIMIT %s",
            (*terms, scope.key, *([window] if window is not None else []), limit),
        )
        return [(self._episode_from_row(r[3:]), float(r[0])) for r in rows]

    # -- cycles -----------------------------------------------------------------------------

    def checkpoint(self, scope: Scope) -> int:
        rows = self._read("SELECT seq FROM checkpoints WHERE scope_key = %s", (scope.key,))
        return int(rows[0][0]) if rows else 0

    def commit(self, changes: Changeset, on_step: StepHook | None = None) -> None:
        import psycopg

        step = on_step or (lambda _name: None)
        try:
            with self._write() as c:
                self._ensure_scopes(c, [changes.scope])
                self._lock_scopes(c, COMMIT_LOCK, [changes.scope.key])
                self._check_lease(c, changes)
                self._check_checkpoint(c, changes)
                if changes.episodes:  # issue 5: e.g. a person's edit, recorded as evidence
                    existing = self._existing(c, changes.episodes)
                    fresh = [e for e in changes.episodes if e.id not in existing]
                    self._insert_episodes(c, fresh)
                step("checkpoint-checked")
                for write in changes.page_writes:
                    self._write_page(c, write)
                step("pages-written")
                self._apply_marks(c, changes)
                step("episodes-marked")
                c.execute(
                    "INSERT INTO checkpoints VALUES (%s, %s, %s) ON CONFLICT (scope_key)"
                    " DO UPDATE SET seq = excluded.seq, updated_at = excluded.updated_at",
                    (changes.scope.key, changes.checkpoint, now_utc()),
                )
                self._record_cycle(c, changes)
                self._record_memory(c, changes)
                self._settle_applied(c, changes)  # issue 4 (8): a reviewed plan, applied
                self._record_dream(c, changes)  # issue 5/6: stats, org promotion
                step("cycle-recorded")
        except psycopg.errors.UniqueViolation as exc:
            raise Conflict(f"a concurrent change got there first: {exc}") from exc

    @staticmethod
    def _check_checkpoint(c: psycopg.Cursor[Any], changes: Changeset) -> None:
        c.execute("SELECT seq FROM checkpoints WHERE scope_key = %s", (changes.scope.key,))
        row = c.fetchone()
        current = row[0] if row else 0
        if current != changes.expected_checkpoint:
            raise Conflict(
                f"scope {changes.scope.key} moved on (checkpoint {current}, expected"
                f" {changes.expected_checkpoint}); another cycle ran — dream again"
            )

    def _write_page(self, c: psycopg.Cursor[Any], w: PageWrite) -> None:
        rev = w.revision
        c.execute(
            "SELECT current_revision, scope_key FROM pages WHERE id = %s FOR UPDATE",
            (rev.page_id,),
        )
        row = c.fetchone()
        current = row[0] if row else None
        if current != w.expected_revision or (row and row[1] != w.scope.key):
            raise Conflict(f"page {rev.page_id} changed since it was read (revision {current})")
        when = rev.created_at
        if row is None:
            c.execute(
                "INSERT INTO pages (id, scope_key, topic_key, current_revision, status,"
                " created_at, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                (rev.page_id, w.scope.key, w.topic_key, rev.number, str(rev.status), when, when),
            )
        self._insert_revision(c, rev)
        c.execute(
            f"UPDATE pages SET current_revision = %s, status = %s, updated_at = %s,"
            f" search = {_PAGE_VECTOR} WHERE id = %s",
            (rev.number, str(rev.status), when, rev.title, rev.body, rev.page_id),
        )

    @staticmethod
    def _insert_revision(c: psycopg.Cursor[Any], rev: Revision) -> None:
        claims = json.dumps([cl.stored() for cl in rev.claims], ensure_ascii=False)
        c.execute(
            f"INSERT INTO revisions ({_REVISION_COLUMNS})"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
            (
                rev.page_id,
                rev.number,
                rev.hash,
                rev.title,
                str(rev.kind),
                claims,
                rev.confidence,
                str(rev.status),
                rev.valid_from,
                rev.valid_until,
                rev.superseded_by,
                rev.cycle_id,
                rev.author,
                rev.reason,
                rev.created_at,
                revision_meta(rev),
            ),
        )
        c.executemany(
            "INSERT INTO citations VALUES (%s, %s, %s)",
            [(rev.page_id, rev.number, e) for e in rev.citations],
        )

    @staticmethod
    def _apply_marks(c: psycopg.Cursor[Any], changes: Changeset) -> None:
        if changes.unmark_cycle:
            c.execute(
                "UPDATE episodes SET consolidated_in = NULL WHERE consolidated_in = %s",
                (changes.unmark_cycle,),
            )
        if not changes.marks:
            return
        wanted = list(dict.fromkeys(changes.marks))
        c.execute(
            "UPDATE episodes SET consolidated_in = %s WHERE id = ANY(%s) AND scope_key = %s"
            " AND consolidated_in IS NULL",
            (changes.mark_cycle, wanted, changes.scope.key),
        )
        if c.rowcount != len(changes.marks):
            raise Conflict(
                f"{len(changes.marks) - c.rowcount} episode(s) were already consolidated by"
                " another cycle; nothing was applied — dream again"
            )

    @staticmethod
    def _record_cycle(c: psycopg.Cursor[Any], changes: Changeset) -> None:
        if changes.undone_cycle:
            c.execute(
                "UPDATE cycles SET undone_at = %s WHERE id = %s AND undone_at IS NULL",
                (now_utc(), changes.undone_cycle),
            )
            if c.rowcount != 1:
                raise Conflict(f"cycle {changes.undone_cycle} was already undone")
        cy = changes.cycle
        if cy is not None:
            c.execute(
                "INSERT INTO cycles (id, scope_key, status, started_at, finished_at,"
                " checkpoint_before, checkpoint_after, report, undone_at)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, NULL)",
                (
                    cy.id,
                    cy.scope.key,
                    str(cy.status),
                    cy.started_at,
                    cy.finished_at,
                    cy.checkpoint_before,
                    cy.checkpoint_after,
                    cy.report.model_dump_json(),
                ),
            )

    def _cycle_from_row(self, r: Sequence[Any]) -> Cycle:
        return Cycle(
            id=r[0],
            scope=self._scope(r[1]),
            status=CycleStatus(r[2]),
            started_at=r[3],
            finished_at=r[4],
            checkpoint_before=r[5],
            checkpoint_after=r[6],
            report=CycleReport.model_validate(r[7]),
            undone_at=r[8],
        )

    def cycle(self, cycle_id: str) -> Cycle:
        rows = self._read(_CYCLE_SELECT + " WHERE id = %s", (cycle_id,))
        if not rows:
            raise NotFound(f"no cycle {cycle_id}")
        return self._cycle_from_row(rows[0])

    def cycles(self, scope: Scope | None = None, limit: int = 50) -> list[Cycle]:
        if scope is None:
            rows = self._read(_CYCLE_SELECT + " ORDER BY n DESC LIMIT %s", (limit,))
        else:
            rows = self._read(
                _CYCLE_SELECT + " WHERE scope_key = %s ORDER BY n DESC LIMIT %s",
                (scope.key, limit),
            )
        return [self._cycle_from_row(r) for r in rows]

    def cycles_after(self, cycle_id: str) -> list[Cycle]:
        rows = self._read(
            _CYCLE_SELECT + " WHERE scope_key = (SELECT scope_key FROM cycles WHERE id = %s)"
            " AND n > (SELECT n FROM cycles WHERE id = %s) ORDER BY n",
            (cycle_id, cycle_id),
        )
        return [self._cycle_from_row(r) for r in rows]

    def scopes(self) -> list[Scope]:
        rows = self._read("SELECT scope_key FROM scopes ORDER BY scope_key")
        return [self._scope(r[0]) for r in rows]

    def pending_scopes(self) -> list[Scope]:
        rows = self._read(
            "SELECT s.scope_key FROM scopes s LEFT JOIN checkpoints c ON c.scope_key = s.scope_key"
            " WHERE EXISTS (SELECT 1 FROM episodes e WHERE e.scope_key = s.scope_key"
            " AND e.seq > COALESCE(c.seq, 0) AND e.consolidated_in IS NULL)"
            ' ORDER BY s.scope_key COLLATE "C"'
        )
        return [self._scope(r[0]) for r in rows]

    def stats(self, scope: Scope | None = None) -> StoreStats:
        where, params = ("WHERE scope_key = %s", [scope.key]) if scope else ("", [])
        ep = self._read(f"SELECT count(*), count(consolidated_in) FROM episodes {where}", params)[0]
        pg = self._read(
            f"SELECT count(*), count(*) FILTER (WHERE status = 'active') FROM pages {where}",
            params,
        )[0]
        rev_where = "WHERE page_id IN (SELECT id FROM pages WHERE scope_key = %s)" if scope else ""
        revs = self._read(f"SELECT count(*) FROM revisions {rev_where}", params)[0][0]
        cyc = self._read(f"SELECT count(*) FROM cycles {where}", params)[0][0]
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

    _COST_FIELDS = ("model_calls", "cache_hits", "input_tokens", "output_tokens", "model_latency_s")

    def _model_cost(self, where: str, params: list[str]) -> dict[str, Any]:
        sums = ", ".join(
            f"coalesce(sum((report ->> '{f}')::double precision), 0)" for f in self._COST_FIELDS
        )
        row = self._read(f"SELECT {sums} FROM cycles {where}", params)[0]
        cost: dict[str, Any] = {f: int(v) for f, v in zip(self._COST_FIELDS, row, strict=True)}
        cost["model_latency_s"] = round(float(row[-1]), 6)
        return cost

    def integrity_check(self) -> str:
        """``"ok"``, or the first broken link: a page whose current revision is missing, or a
        checkpoint past the last seq ever assigned."""
        broken = self._read(
            "SELECT p.id FROM pages p LEFT JOIN revisions r ON r.page_id = p.id"
            " AND r.number = p.current_revision WHERE r.page_id IS NULL LIMIT 1"
        )
        if broken:
            return f"page {broken[0][0]} has no current revision"
        ahead = self._read(
            "SELECT c.scope_key FROM checkpoints c WHERE c.seq >"
            " (SELECT coalesce(max(seq), 0) FROM episodes) LIMIT 1"
        )
        return f"checkpoint of {ahead[0][0]} is past every episode" if ahead else "ok"
