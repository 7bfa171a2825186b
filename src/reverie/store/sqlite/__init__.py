"""The embedded default store: one SQLite file, WAL, FTS5.

Writes run in ``BEGIN IMMEDIATE`` transactions (the write lock is taken up front, so two writers
queue on ``busy_timeout`` instead of deadlocking on a lock upgrade). ``seq`` comes from an
AUTOINCREMENT key, so it is strictly increasing even across deletes, and is assigned inside the
write transaction from ``sqlite_sequence``. Timestamps are stored as ISO-8601 UTC strings, which
sort as they compare.

The SQL it shares with PostgreSQL is :class:`reverie.store.sql.store.SQLStore`'s; what is
SQLite's own is here: the connection, ``seq``, the contentless FTS5 tables and their BM25
search (which the cold tier's stubs leave and rejoin), and the read-then-write lease claim.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

from reverie.errors import StoreReadOnly
from reverie.models import Episode, Page, Revision, Scope
from reverie.store.failures import store_failure
from reverie.store.migrations import split_statements
from reverie.store.records import is_stub
from reverie.store.sql.database import FETCH_ROWS, Rows
from reverie.store.sql.dialect import Dialect, SQLiteDialect, lease_time
from reverie.store.sql.rows import (
    EPISODE_COLUMNS,
    INSERT_COLUMNS,
    LEAN_REVISION_COLUMNS,
    episode_rows,
    marks,
    scope_token,
)
from reverie.store.sql.store import SQLStore
from reverie.store.sqlite.target import MEMORY, sqlite_target
from reverie.store.sqlite.text import EpisodeText, scoped

__all__ = ["SQLiteBackend", "SQLiteStore"]

T = TypeVar("T")
_EPISODE_MARKS = marks(INSERT_COLUMNS.count(",") + 1)
_DUE = (
    "SELECT s.scope_key FROM scopes s LEFT JOIN checkpoints c ON c.scope_key = s.scope_key"
    " LEFT JOIN leases l ON l.scope_key = s.scope_key"
    " WHERE (l.scope_key IS NULL OR l.expires_at <= ?)"
    " AND EXISTS (SELECT 1 FROM episodes e WHERE e.scope_key = s.scope_key"
    " AND e.seq > coalesce(c.seq, 0) AND e.consolidated_in IS NULL)"
    " AND NOT EXISTS (SELECT 1 FROM pending_plans p"  # a plan awaiting review blocks its scope
    " WHERE p.scope_key = s.scope_key AND p.status = 'pending')"
    " ORDER BY l.expires_at NULLS FIRST, s.scope_key LIMIT ?"
)
"""Scopes with episodes past their checkpoint, no live lease and no plan awaiting review."""


class SQLiteStore(SQLStore):
    """A :class:`reverie.store.base.BrainStore` on one SQLite file (or ``:memory:``); the cold
    tier's bundles are files beside it."""

    def __init__(self, path: str | Path, *, busy_timeout_ms: int = 30_000) -> None:
        """Open ``path``: a file (its folder created if missing), ``:memory:``, or a SQLite
        ``file:`` URI. A file this process may not write, or a ``mode=ro`` URI, opens
        read-only (:mod:`reverie.store.sqlite.target`): reads work, writes raise
        :class:`~reverie.errors.StoreReadOnly`."""
        self.backend: SQLiteBackend = SQLiteBackend(str(path), busy_timeout_ms)
        super().__init__(self.backend)
        self.path = self.backend.path

    # -- raw tables, for copying a brain elsewhere (reverie.store.copy) -------------------------

    def rows(self, table: str, columns: Sequence[str], batch: int = 5000) -> Iterator[Any]:
        """Every row of ``table`` (``columns`` only), read ``batch`` at a time."""
        return self.backend.stream(table, columns, batch)


class SQLiteBackend:
    """SQLite's side of :class:`~reverie.store.sql.database.Backend`: one connection under a
    lock, ``seq`` from ``sqlite_sequence``, contentless FTS5 tables and their BM25 search, the
    read-then-write lease claim under the database's one write lock."""

    def __init__(self, path: str, busy_timeout_ms: int) -> None:
        self.dialect: Dialect = SQLiteDialect()
        self.decode = Rows(self.dialect, cache=True)
        target = sqlite_target(path)
        self.path = target.file
        self.read_only = target.read_only
        self.name = self.path
        self.url = "sqlite:///" + self.path if self.path != MEMORY else "sqlite://:memory:"
        if self.path != MEMORY and not target.uri:
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        try:
            self._conn = sqlite3.connect(
                target.connect,
                isolation_level=None,
                check_same_thread=False,
                timeout=busy_timeout_ms / 1000,
                uri=target.uri,
            )
        except sqlite3.Error as exc:
            raise store_failure(exc).error(self.path) from exc
        self._lock = threading.RLock()
        self._pragmas(busy_timeout_ms)
        self.text = EpisodeText(self.read)

    def _pragmas(self, busy_timeout_ms: int) -> None:
        c = self._conn
        c.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        if self.path != MEMORY and not self.read_only:
            _switch_to_wal(c, busy_timeout_ms)
        c.execute("PRAGMA synchronous = NORMAL")
        c.execute("PRAGMA foreign_keys = ON")

    # -- plumbing ---------------------------------------------------------------------------

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        if self.read_only:
            raise StoreReadOnly(
                f"database {self.name} is open read-only; give reverie write access to it and"
                " its folder (or drop mode=ro) to change it"
            )
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:  # locked past busy_timeout, read-only, damaged
                raise store_failure(exc).error(self.path) from exc
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            else:
                self._conn.execute("COMMIT")

    def read(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Any]:
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    def read_as(
        self, sql: str, params: Sequence[Any], decode: Callable[[Sequence[Any]], T]
    ) -> list[T]:
        with self._lock:
            cursor = self._conn.execute(sql, params)
            out: list[T] = []
            while rows := cursor.fetchmany(FETCH_ROWS):
                out += map(decode, rows)
            return out

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    @contextmanager
    def migration(self) -> Iterator[sqlite3.Connection]:
        """A migration's transaction with foreign keys off, as SQLite's procedure for changing
        a table by rebuilding it asks (the pragma is a no-op inside a transaction, so it is set
        around it); :meth:`run_script` checks every key before the migration commits. The write
        lock keeps other migrators out."""
        with self._lock:
            self._conn.execute("PRAGMA foreign_keys = OFF")
            try:
                with self.write() as c:
                    yield c
            finally:
                self._conn.execute("PRAGMA foreign_keys = ON")

    def after_migrate(self) -> None:
        """Nothing: the connection needs no set-up once the schema is there."""

    def run_script(self, c: sqlite3.Connection, sql: str) -> None:
        for statement in split_statements(sql):
            c.execute(statement)
        broken = c.execute("PRAGMA foreign_key_check").fetchmany(3)
        if broken:
            rows = "; ".join(f"{r[0]} row {r[1]} -> {r[2]}" for r in broken)
            raise sqlite3.IntegrityError(  # the runner names the migration
                f"it would leave rows whose foreign keys point at nothing ({rows}); nothing"
                " was changed: repair or remove those rows, then open the store again"
            )

    def integrity_check(self) -> str:
        return str(self.read("PRAGMA integrity_check")[0][0])

    def stream(self, table: str, columns: Sequence[str], batch: int) -> Iterator[Any]:
        """Every row of ``table`` (``columns`` only), read ``batch`` at a time."""
        names = ", ".join(f'"{name}"' for name in columns)
        with self._lock:
            cursor = self._conn.execute(f'SELECT {names} FROM "{table}"')
            while chunk := cursor.fetchmany(batch):
                yield from chunk

    # -- what only SQLite does: seq, FTS5 ----------------------------------------------------

    def store_episodes(
        self, c: sqlite3.Connection, episodes: Sequence[Episode], at: datetime
    ) -> list[Episode]:
        row = c.execute("SELECT seq FROM sqlite_sequence WHERE name = 'episodes'").fetchone()
        base = row[0] if row else 0
        stored = list(episodes)
        for i, e in enumerate(stored):
            e.seq = base + i + 1  # the caller's object gets its store-assigned seq
        c.executemany(
            f"INSERT INTO episodes ({INSERT_COLUMNS}) VALUES ({_EPISODE_MARKS})",
            episode_rows(stored, self.dialect, at),
        )
        self.index_episodes(c, stored)
        return stored

    def index_episodes(self, c: sqlite3.Connection, episodes: Sequence[Episode]) -> None:
        self.text.index(c, episodes)

    # -- erasure: the contentless index forgets a row only by its values, then a merge ---------

    @contextmanager
    def secure(self) -> Iterator[None]:
        """Deleted content overwritten with zeros while inside (``secure_delete``)."""
        with self._lock:
            self._conn.execute("PRAGMA secure_delete = ON")
            try:
                yield
            finally:
                self._conn.execute("PRAGMA secure_delete = OFF")

    def unindex_episodes(self, c: sqlite3.Connection, seqs: Sequence[int]) -> None:
        """FTS5 ``delete`` with the values indexed, read inside the transaction (an archived
        stub's entry went when it was stubbed)."""
        for where, params in self.dialect.members("seq", list(seqs)):
            rows = c.execute(f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE {where}", params)
            self.text.unindex(c, [e for e in map(self.decode.episode, rows) if not is_stub(e)])

    def unindex_page(self, c: sqlite3.Connection, rid: int) -> None:
        c.execute("DELETE FROM pages_fts WHERE rowid = ?", (rid,))

    def compact_text_index(self, c: sqlite3.Connection) -> None:
        """Merge every segment: a deleted row's terms stay in older segments until then."""
        for table in (*self.text.tables(c), "pages_fts"):
            c.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")

    def residue(self, c: sqlite3.Connection) -> list[str]:
        """None: ``secure_delete`` zeroes what the erasure frees, and its scrub vacuums."""
        return []

    def keeps_wal(self) -> bool:
        return False

    def scrub_free_space(self, tables: Sequence[str] = ()) -> bool:
        """VACUUM (no free page or cell keeps old bytes; the one file holds every table, so
        ``tables`` changes nothing), then the WAL checkpointed and truncated to zero bytes;
        False when a reader kept the WAL from being reset."""
        if self.path == ":memory:":
            return True
        with self._lock:
            self._conn.execute("VACUUM")
            busy = self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        return not busy

    def index_page(
        self, c: sqlite3.Connection, rid: int, scope: Scope, rev: Revision, fresh: bool
    ) -> None:
        if not fresh:
            c.execute("DELETE FROM pages_fts WHERE rowid = ?", (rid,))
        c.execute(
            "INSERT INTO pages_fts(rowid, scope, status, title, body) VALUES (?,?,?,?,?)",
            (rid, scope_token(scope.key), str(rev.status), rev.title, rev.body),
        )

    # -- leases: read, then write, under the database's one write lock -------------------------

    def lock_scope(self, c: sqlite3.Connection, scope: Scope) -> None:
        """Nothing: the write transaction holds the whole database."""

    def ensure_vector_index(self, c: sqlite3.Connection, dim: int) -> None:
        """Nothing: SQLite keeps no vector index (recall's is in memory)."""

    def take_lease(
        self, c: sqlite3.Connection, scope: Scope, owner: str, ttl: float, now: datetime
    ) -> Sequence[Any] | None:
        return _take(c, scope.key, owner, ttl, now)

    def claim_due(
        self, c: sqlite3.Connection, owner: str, ttl: float, now: datetime, limit: int
    ) -> list[Sequence[Any]]:
        due = [r[0] for r in c.execute(_DUE, (self.dialect.lease_ts(now), limit)).fetchall()]
        return [row for key in due if (row := _take(c, key, owner, ttl, now)) is not None]

    # -- pages, as recall reads them ---------------------------------------------------------

    _LEAN_PAGE_SELECT = (
        "SELECT p.rid, r.rowid, p.id, p.scope_key, p.topic_key, p.created_at, p.updated_at, "
        + ", ".join("r." + c for c in LEAN_REVISION_COLUMNS)
        + " FROM pages p JOIN revisions r ON r.page_id = p.id AND r.number = p.current_revision"
    )

    def _lean_pages(self, where: str, params: Sequence[Any]) -> dict[int, Page]:
        """Recall's page read (by ``pages.rid``): every column but the claims, then the claims
        of only the revisions not decoded before (:meth:`Rows.lean_revisions`)."""
        rows = self.read(self._LEAN_PAGE_SELECT + where, params)

        def claims_of(at: Sequence[int]) -> list[str]:
            found: dict[int, str] = {}
            for cond, ids in self.dialect.members("rowid", [rows[i][1] for i in at]):
                found.update(self.read(f"SELECT rowid, claims FROM revisions WHERE {cond}", ids))
            return [found[rows[i][1]] for i in at]

        revisions = self.decode.lean_revisions([r[7:] for r in rows], claims_of)
        return {
            r[0]: self.decode.page_with(r[2:], rev) for r, rev in zip(rows, revisions, strict=True)
        }

    def pages_by_id(self, scope: Scope, page_ids: Sequence[str]) -> dict[str, Page]:
        """The pages of ``scope`` among ``page_ids``, in one read per 500 ids, claims decoded only
        for revisions not decoded before."""
        found: dict[str, Page] = {}
        for where, params in self.dialect.members("p.id", page_ids):
            found.update(
                (p.id, p)
                for p in self._lean_pages(
                    f" WHERE p.scope_key = ? AND {where}", [scope.key, *params]
                ).values()
            )
        return found

    # -- search: FTS5 BM25, scope token inside the MATCH -------------------------------------

    def search_pages(
        self, scope: Scope, terms: Sequence[str], limit: int, statuses: Iterable[str]
    ) -> list[tuple[Page, float]]:
        wanted = list(statuses)
        match = scoped(scope, "{title body}", terms)
        rows = self.read(
            "SELECT f.rowid, -bm25(pages_fts, 0, 0, 2.0, 1.0) AS score FROM pages_fts f"
            " WHERE pages_fts MATCH ? ORDER BY bm25(pages_fts, 0, 0, 2.0, 1.0) LIMIT ?",
            (match, limit * 3),
        )
        scores = {r[0]: r[1] for r in rows}
        top = self._eligible_rids(scope, scores, wanted)[:limit]
        if not top:
            return []
        # Only the pages that make the cut are read, and their claims only when not decoded yet.
        pages = self._lean_pages(f" WHERE p.rid IN ({','.join('?' * len(top))})", top)
        return [(pages[rid], scores[rid]) for rid in top]

    def _eligible_rids(
        self, scope: Scope, scores: dict[int, float], statuses: list[str]
    ) -> list[int]:
        """The page rids in ``scores`` of ``scope`` with one of ``statuses``, best score first."""
        if not scores:
            return []
        rows = self.read(
            f"SELECT rid FROM pages WHERE rid IN ({','.join('?' * len(scores))}) AND scope_key = ?"
            f" AND status IN ({','.join('?' * len(statuses))}) ORDER BY rid",
            [*scores, scope.key, *statuses],
        )
        return sorted((r[0] for r in rows), key=lambda rid: -scores[rid])

    def search_episodes(
        self, scope: Scope, terms: Sequence[str], limit: int, window: int | None
    ) -> list[tuple[Episode, float]]:
        # Rank inside the FTS tables first (reverie.store.sqlite.text), then read only the top
        # rows: joining every match before sorting costs a row lookup per match.
        ranked = self.text.ranked(scope, terms, limit, window)
        if not ranked:
            return []
        rows = self.read(
            f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE seq IN ({marks(len(ranked))})"
            " AND scope_key = ?",
            [*(seq for seq, _ in ranked), scope.key],
        )
        found = {r[0]: self.decode.episode(r) for r in rows}
        return [(found[seq], -rank) for seq, rank in ranked if seq in found]


def _take(
    c: sqlite3.Connection, key: str, owner: str, ttl: float, now: datetime
) -> Sequence[Any] | None:
    """Lease ``key`` to ``owner`` if it is free, expired or already ``owner``'s (the
    compare-and-set, inside the caller's write transaction); the lease row, or None."""
    at, until = lease_time(now), lease_time(now + timedelta(seconds=ttl))
    row = c.execute(
        "SELECT owner, token, acquired_at, expires_at FROM leases WHERE scope_key = ?", (key,)
    ).fetchone()
    if row is None:
        c.execute("INSERT INTO leases VALUES (?, ?, 1, ?, ?, ?)", (key, owner, at, at, until))
        return (key, owner, 1, at, until)
    held_by, token, acquired, expires = row
    if held_by == owner and expires > at:  # renewal by the live holder
        c.execute(
            "UPDATE leases SET heartbeat_at = ?, expires_at = ? WHERE scope_key = ?",
            (at, until, key),
        )
        return (key, owner, token, acquired, until)
    if expires > at:
        return None
    c.execute(
        "UPDATE leases SET owner = ?, token = ?, acquired_at = ?, heartbeat_at = ?,"
        " expires_at = ? WHERE scope_key = ?",
        (owner, token + 1, at, at, until, key),
    )
    return (key, owner, token + 1, at, until)


WAL_RETRY_FIRST_S = 0.005
WAL_RETRY_MOST_S = 0.1


def _switch_to_wal(conn: sqlite3.Connection, busy_timeout_ms: int) -> None:
    """Put the file in WAL mode, waiting out other connections doing the same.

    Switching needs the exclusive lock. When two connections open a file still in rollback mode
    at once, each holds the shared lock the other must drain, and SQLite answers ``locked`` at
    once rather than call the busy handler on a deadlock. Once one has switched, the mode is in
    the file, and the others' retry is a no-op; so waiting up to the busy timeout is enough.
    """
    waited, pause = 0.0, WAL_RETRY_FIRST_S
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or waited * 1000 >= busy_timeout_ms:
                raise
        time.sleep(pause)
        waited += pause
        pause = min(pause * 2, WAL_RETRY_MOST_S)
