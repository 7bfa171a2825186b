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
  (:mod:`reverie.store.postgres.knn`).
- **Leases** are claimed with ``SELECT … FOR NO KEY UPDATE SKIP LOCKED`` on the scope rows, so
  concurrent workers never wait for each other and never claim the same scope; the
  ``ON CONFLICT … WHERE`` of the upsert is the compare-and-set that decides.

The SQL it shares with SQLite is :class:`reverie.store.sql.store.SQLStore`'s, written with ``?``
placeholders; :class:`Cursor` and :meth:`PostgresBackend.read` turn them into psycopg's ``%s``.

Timestamps are ``timestamptz`` read back in UTC; JSON is ``jsonb``. Requires the ``postgres``
extra (``psycopg``, ``pgvector``), imported only when a PostgreSQL URL is opened.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from datetime import datetime, timedelta
from functools import lru_cache
from typing import TYPE_CHECKING, Any, TypeVar

from reverie.errors import MissingExtra, StoreError
from reverie.models import Episode, Page, Revision, Scope
from reverie.store.postgres import blobs as _blobs
from reverie.store.postgres import knn as _knn
from reverie.store.sql.database import FETCH_ROWS, Rows
from reverie.store.sql.dialect import Dialect, PostgresDialect
from reverie.store.sql.leases import LEASE_COLUMNS
from reverie.store.sql.rows import (
    EPISODE_COLUMNS,
    INSERT_COLUMNS,
    LEAN_REVISION_COLUMNS,
    PAGE_SELECT,
    episode_rows,
    prefixed,
)
from reverie.store.sql.store import SQLStore

if TYPE_CHECKING:
    import psycopg

__all__ = [
    "APPEND_LOCK",
    "COMMIT_LOCK",
    "Cursor",
    "PostgresBackend",
    "PostgresStore",
    "pg_placeholders",
    "safe_url",
    "scope_lock_key",
]

T = TypeVar("T")
APPEND_LOCK = 0x5245_0001
"""First key of the advisory lock that orders appends within a scope."""
COMMIT_LOCK = 0x5245_0002
"""First key of the advisory lock that serialises commits within a scope."""

_E_COLUMNS = prefixed("e", EPISODE_COLUMNS)
PAGE_VECTOR = (
    "setweight(to_tsvector('english', %s), 'A') || setweight(to_tsvector('english', %s), 'B')"
)
"""A page's search vector from its title and body: the title weighs as ``A``, the body ``B``."""
_RANK_WEIGHTS = "'{0.1, 0.2, 0.5, 1.0}'"  # D, C, B (body), A (title): title = 2 × body
_LEAN_PAGE_SELECT = (
    "SELECT p.id, p.scope_key, p.topic_key, p.created_at, p.updated_at, "
    + ", ".join("r.meta::text" if c == "meta" else f"r.{c}" for c in LEAN_REVISION_COLUMNS)
    + " FROM pages p JOIN revisions r ON r.page_id = p.id AND r.number = p.current_revision"
)
""":data:`PAGE_SELECT` but the claims, every value hashable (the metadata as JSON text): the
columns that name a decoded revision in recall's page reads."""
_LEASE_UPSERT = (
    " ON CONFLICT (scope_key) DO UPDATE SET owner = excluded.owner,"
    " token = CASE WHEN l.owner = excluded.owner AND l.expires_at > excluded.acquired_at"
    " THEN l.token ELSE l.token + 1 END,"
    " acquired_at = CASE WHEN l.owner = excluded.owner AND l.expires_at > excluded.acquired_at"
    " THEN l.acquired_at ELSE excluded.acquired_at END,"
    " heartbeat_at = excluded.heartbeat_at, expires_at = excluded.expires_at"
    " WHERE l.owner = excluded.owner OR l.expires_at <= excluded.acquired_at"
    f" RETURNING {LEASE_COLUMNS}"
)


_DUE_FROM = (
    " FROM scopes s LEFT JOIN checkpoints c ON c.scope_key = s.scope_key"
    " LEFT JOIN leases l ON l.scope_key = s.scope_key"
    " WHERE (l.scope_key IS NULL OR l.expires_at <= %(now)s)"
    " AND EXISTS (SELECT 1 FROM episodes e WHERE e.scope_key = s.scope_key"
    " AND e.seq > coalesce(c.seq, 0) AND e.consolidated_in IS NULL)"
    " AND NOT EXISTS (SELECT 1 FROM pending_plans p"  # a plan awaiting review blocks the scope
    " WHERE p.scope_key = s.scope_key AND p.status = 'pending')"
)
"""Scopes with episodes past their checkpoint, no live lease and no plan awaiting review."""
_CANDIDATES = (
    f"SELECT s.scope_key{_DUE_FROM} AND s.scope_key <> ALL(%(tried)s::text[])"
    " ORDER BY l.expires_at NULLS FIRST, s.scope_key LIMIT %(limit)s"
    " FOR NO KEY UPDATE OF s SKIP LOCKED"
)
_TAKE = (
    f"WITH due AS (SELECT s.scope_key{_DUE_FROM} AND s.scope_key = ANY(%(keys)s::text[]))"
    " INSERT INTO leases AS l SELECT scope_key, %(owner)s, 1, %(now)s, %(now)s, %(expires)s"
    f" FROM due{_LEASE_UPSERT}"
)
_NOT_STUB = " AND NOT (e.situation = '' AND e.action = '')"
"""An archived episode's stub keeps its category, which its search vector still holds: SQLite
drops the stub's full-text entry, and PostgreSQL's search passes it over the same way."""
_CLAIM_ROUNDS = 4
"""Rounds of candidates one claim tries before it reports nothing due."""


@lru_cache(maxsize=1024)
def pg_placeholders(sql: str) -> str:
    """``sql`` with the shared ``?`` placeholders as psycopg's ``%s``."""
    return sql.replace("?", "%s") if "?" in sql else sql


class Cursor:
    """A psycopg cursor that takes the shared SQL: ``execute`` translates placeholders and
    returns the cursor, as SQLite's connection does, so results chain (``.fetchone()``)."""

    def __init__(self, cur: psycopg.Cursor[Any]) -> None:
        self.cur = cur

    def execute(self, sql: str, params: Any = ()) -> Cursor:
        self.cur.execute(pg_placeholders(sql), params)
        return self

    def executemany(self, sql: str, rows: Sequence[Any]) -> Cursor:
        self.cur.executemany(pg_placeholders(sql), rows)
        return self

    def fetchone(self) -> Any:
        return self.cur.fetchone()

    def fetchall(self) -> list[Any]:
        return self.cur.fetchall()

    @property
    def rowcount(self) -> int:
        return self.cur.rowcount

    def copy(self, statement: str) -> Any:
        return self.cur.copy(statement)

    def script(self, sql: str) -> None:
        """Run a whole SQL file at once: no parameters, no placeholders."""
        self.cur.execute(sql.encode())


def scope_lock_key(scope_key: str) -> int:
    """A stable signed 32-bit key for a scope's advisory locks (collisions only serialise)."""
    return int.from_bytes(hashlib.sha1(scope_key.encode()).digest()[:4], "big", signed=True)


def _connect(url: str) -> psycopg.Connection[Any]:
    try:
        import psycopg  # noqa: PLC0415 (extra: postgres)
    except ImportError:  # pragma: no cover - depends on the environment
        raise MissingExtra("psycopg", "postgres") from None
    try:
        conn = psycopg.connect(url, autocommit=True)
    except psycopg.Error as exc:
        raise StoreError(f"cannot connect to PostgreSQL at {safe_url(url)}: {exc}") from exc
    conn.execute("SET TIME ZONE 'UTC'")
    return conn


def safe_url(url: str) -> str:
    """``url`` without a password."""
    head, sep, tail = url.rpartition("@")
    if not sep or ":" not in head.split("//", 1)[-1]:
        return url
    scheme, _, userinfo = head.partition("//")
    return f"{scheme}//{userinfo.split(':', 1)[0]}:***@{tail}"


def _tsquery(count: int) -> str:
    """A tsquery that matches any of ``count`` terms, each parsed safely by plainto_tsquery."""
    return "(" + " || ".join(["plainto_tsquery('english', %s)"] * count) + ")"


class PostgresStore(SQLStore):
    """A :class:`reverie.store.base.BrainStore` on a PostgreSQL database with pgvector, which
    answers nearest-neighbour queries itself (:class:`~reverie.store.base.NearestNeighbours`),
    keeps the cold tier's bundles' bytes in the database (:mod:`.archive`,
    :class:`~reverie.store.base.BundleBytes`).

    ``lease_owner`` names the worker this store commits for: a commit to a scope whose live
    lease another owner holds is refused (see :mod:`reverie.store.sql.leases`).
    """

    def __init__(
        self, url: str, *, lease_owner: str | None = None, backend: PostgresBackend | None = None
    ) -> None:
        self.backend: PostgresBackend = backend or PostgresBackend(url)
        super().__init__(self.backend)
        self.lease_owner = lease_owner

    vector_search = _knn.vector_search
    vector_cosines = _knn.vector_cosines
    bundle_put = _blobs.bundle_put
    bundle_get = _blobs.bundle_get

    def stream(self, sql: str) -> Iterator[Any]:
        """The rows of ``sql``, read through a server-side cursor (a table at a time)."""
        return self.backend.stream(sql)

    def rebuild_page_search(self, c: Cursor) -> None:
        """Recompute every page's search vector (after pages were copied in by rows)."""
        pages = [self.decode.page(r) for r in c.execute(PAGE_SELECT).fetchall()]
        c.executemany(
            f"UPDATE pages SET search = {PAGE_VECTOR} WHERE id = %s",
            [(p.title, p.body, p.id) for p in pages],
        )


class PostgresBackend:
    """PostgreSQL's side of :class:`~reverie.store.sql.database.Backend` (module docstring)."""

    read_only = False

    def __init__(self, url: str) -> None:
        self.dialect: Dialect = PostgresDialect()
        self.decode = Rows(self.dialect)
        self.url = self.name = url
        self._lock = threading.RLock()
        self._conn = _connect(url)

    # -- plumbing ---------------------------------------------------------------------------

    @contextmanager
    def write(self) -> Iterator[Cursor]:
        with self._lock, self._conn.transaction(), self._conn.cursor() as cur:
            yield Cursor(cur)

    def read(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Any]:
        with self._lock, self._conn.cursor() as cur:
            cur.execute(pg_placeholders(sql), params)
            return cur.fetchall()

    def read_as(
        self, sql: str, params: Sequence[Any], decode: Callable[[Sequence[Any]], T]
    ) -> list[T]:
        with self._lock, self._conn.cursor() as cur:
            cur.execute(pg_placeholders(sql), params)
            out: list[T] = []
            while rows := cur.fetchmany(FETCH_ROWS):
                out += map(decode, rows)
            return out

    def stream(self, sql: str) -> Iterator[Any]:
        """The rows of ``sql``, read through a server-side cursor (a table at a time)."""
        with self._lock, self._conn.transaction(), self._conn.cursor(name="reverie_stream") as cur:
            cur.execute(sql)
            yield from cur

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    @contextmanager
    def migration(self) -> Iterator[Cursor]:
        with self.write() as c:
            c.execute("SELECT pg_advisory_xact_lock(%s)", (APPEND_LOCK - 1,))  # one migrator
            yield c

    def run_script(self, c: Cursor, sql: str) -> None:
        c.script(sql)

    def after_migrate(self) -> None:
        """Teach the connection pgvector's type (the extension exists once migrated)."""
        from pgvector.psycopg import register_vector  # noqa: PLC0415 (extra: postgres)

        with self._lock:
            register_vector(self._conn)

    @staticmethod
    def _lock_scopes(c: Cursor, namespace: int, keys: Iterable[str]) -> None:
        """Lock every scope in one round trip, in ascending key order (no deadlock)."""
        ordered = sorted({scope_lock_key(k) for k in keys})
        c.execute(
            "SELECT count(pg_advisory_xact_lock(%s, k)) FROM unnest(%s::int[]) AS k",
            (namespace, ordered),
        )

    # -- what only PostgreSQL does: ordered seq, tsvector, HNSW, advisory locks ----------------

    def store_episodes(self, c: Cursor, episodes: Sequence[Episode], at: datetime) -> list[Episode]:
        keys = {e.scope.key for e in episodes}
        self._lock_scopes(c, APPEND_LOCK, keys)  # before drawing any seq
        seqs = c.execute(
            "SELECT nextval(pg_get_serial_sequence('episodes', 'seq'))"
            " FROM generate_series(1, %s) ORDER BY 1",
            (len(episodes),),
        ).fetchall()
        stored = [e.model_copy() for e in episodes]
        for e, (seq,) in zip(stored, seqs, strict=True):
            e.seq = seq
        with c.copy(f"COPY episodes ({INSERT_COLUMNS}) FROM STDIN") as copy:
            for row in episode_rows(stored, self.dialect, at):
                copy.write_row(row)
        return stored

    def index_page(self, c: Cursor, rid: int, scope: Scope, rev: Revision, fresh: bool) -> None:
        c.execute(
            f"UPDATE pages SET search = {PAGE_VECTOR} WHERE rid = %s", (rev.title, rev.body, rid)
        )

    def lock_scope(self, c: Cursor, scope: Scope) -> None:
        self._lock_scopes(c, COMMIT_LOCK, [scope.key])

    def ensure_vector_index(self, c: Cursor, dim: int) -> None:
        _knn.ensure_hnsw(c, dim)

    def unindex_page(self, c: Cursor, rid: int) -> None:
        """Nothing: a page's search vector goes with its row."""

    def index_episodes(self, c: Cursor, episodes: Sequence[Episode]) -> None:
        """Nothing: an episode's search vector is generated from its row."""

    def unindex_episodes(self, c: Cursor, seqs: Sequence[int]) -> None:
        """Nothing: an episode's search vector is generated from its row and goes with it."""

    def compact_text_index(self, c: Cursor) -> None:
        """Nothing: a GIN index drops a deleted row's entries (VACUUM reclaims the space)."""

    def secure(self) -> AbstractContextManager[None]:
        return nullcontext()

    def residue(self, c: Cursor) -> list[str]:
        """The tables this transaction updated or deleted rows of, as the server counts them
        (``pg_stat_xact_user_tables``, cascades included): each keeps the old versions in
        dead tuples, and its indexes their entries, until ``VACUUM FULL`` rewrites it."""
        rows = c.execute(
            "SELECT quote_ident(schemaname) || '.' || quote_ident(relname)"
            " FROM pg_stat_xact_user_tables WHERE n_tup_upd + n_tup_del > 0 ORDER BY 1"
        ).fetchall()
        return [r[0] for r in rows]

    def keeps_wal(self) -> bool:
        """Yes: WAL segments keep every row written until PostgreSQL recycles them."""
        return True

    def scrub_free_space(self, tables: Sequence[str] = ()) -> bool:
        """``VACUUM FULL`` of each of ``tables`` still there: the table and its indexes are
        rewritten from the live rows only (it locks each table while it runs). Rows that a
        transaction open since before the erasure can still see are copied too."""
        for name in tables:
            found = self.read("SELECT to_regclass(%s)::text", (name,))
            if found and found[0][0]:
                self.run_alone(f"VACUUM FULL {found[0][0]}")  # quoted by regclass itself
        return True

    def run_alone(self, sql: str) -> None:
        """Run ``sql`` outside any transaction block (``VACUUM`` refuses to run in one)."""
        with self._lock:
            self._conn.execute(sql.encode())

    def pages_by_id(self, scope: Scope, page_ids: Sequence[str]) -> dict[str, Page]:
        rows = self.read(
            _LEAN_PAGE_SELECT + " WHERE p.scope_key = %s AND p.id = ANY(%s)",
            (scope.key, list(page_ids)),
        )
        return {p.id: p for p in self._lean_pages(rows)}

    def _lean_pages(self, rows: Sequence[Sequence[Any]]) -> list[Page]:
        """Pages from rows of :data:`_LEAN_PAGE_SELECT`, the claims read (and decoded) only for
        revisions not decoded before (:meth:`Rows.lean_revisions`), as SQLite's recall reads
        them."""

        def claims_of(at: Sequence[int]) -> list[Any]:
            wanted = [(rows[i][5], rows[i][6]) for i in at]
            found = {
                (r[0], r[1]): r[2]
                for r in self.read(
                    "SELECT page_id, number, claims FROM revisions WHERE (page_id, number) IN"
                    " (SELECT * FROM unnest(%s::text[], %s::int[]))",
                    ([pid for pid, _ in wanted], [n for _, n in wanted]),
                )
            }
            return [found[w] for w in wanted]

        revisions = self.decode.lean_revisions([r[5:] for r in rows], claims_of)
        return [self.decode.page_with(r, rev) for r, rev in zip(rows, revisions, strict=True)]

    # -- leases: one upsert decides ----------------------------------------------------------

    def take_lease(
        self, c: Cursor, scope: Scope, owner: str, ttl: float, now: datetime
    ) -> Sequence[Any] | None:
        row: Sequence[Any] | None = c.execute(
            f"INSERT INTO leases AS l VALUES (%s, %s, 1, %s, %s, %s){_LEASE_UPSERT}",
            (scope.key, owner, now, now, now + timedelta(seconds=ttl)),
        ).fetchone()
        return row

    def claim_due(
        self, c: Cursor, owner: str, ttl: float, now: datetime, limit: int
    ) -> list[Sequence[Any]]:
        """Lease up to ``limit`` due scopes to ``owner``, in two statements of one transaction.

        The first picks candidates and locks their ``scopes`` rows (``SKIP LOCKED``: a scope
        another claim holds is passed over); the second, under a fresh snapshot (READ
        COMMITTED), takes the lease only if the scope is still due. A single statement would
        decide "due" on a snapshot taken before it started: a scope another worker leased or
        dreamed meanwhile then came back as an empty claim (the worker slept a poll interval)
        or as a second, empty cycle after the first worker released it. Candidates that lost
        such a race are passed over and the next ones tried, up to :data:`_CLAIM_ROUNDS` times.
        """
        values = {"now": now, "owner": owner, "expires": now + timedelta(seconds=ttl)}
        taken: list[Any] = []
        tried: list[str] = []
        c.execute("SET TRANSACTION ISOLATION LEVEL READ COMMITTED")  # what the rounds rely on
        for _ in range(_CLAIM_ROUNDS):
            c.execute(_CANDIDATES, {**values, "tried": tried, "limit": limit - len(taken)})
            keys = [r[0] for r in c.fetchall()]
            if not keys:
                break
            tried += keys
            c.execute(_TAKE, {**values, "keys": keys})
            taken += c.fetchall()
            if len(taken) >= limit:
                break
        return taken

    # -- search: ts_rank is positive, higher is better; the scope filter is in the query -------

    def search_pages(
        self, scope: Scope, terms: Sequence[str], limit: int, statuses: Iterable[str]
    ) -> list[tuple[Page, float]]:
        query = _tsquery(len(terms))
        rows = self.read(
            f"SELECT * FROM (SELECT ts_rank({_RANK_WEIGHTS}, p.search, q.q) AS score,"
            f" {_LEAN_PAGE_SELECT.removeprefix('SELECT ')}, (SELECT {query} AS q) q"
            " WHERE p.scope_key = %s AND p.status = ANY(%s) AND p.search @@ q.q) found"
            " WHERE score > 0 ORDER BY score DESC, id LIMIT %s",
            (*terms, scope.key, list(statuses), limit),
        )
        pages = self._lean_pages([r[1:] for r in rows])
        return [(page, float(r[0])) for page, r in zip(pages, rows, strict=True)]

    def search_episodes(
        self, scope: Scope, terms: Sequence[str], limit: int, window: int | None
    ) -> list[tuple[Episode, float]]:
        # With a window only the newest `window` matches are ranked, as on SQLite.
        newest = " ORDER BY e.seq DESC LIMIT %s" if window is not None else ""
        rows = self.read(
            "SELECT * FROM (SELECT ts_rank(m.search, m.q) AS score, m.* FROM"
            f" (SELECT e.search, q.q, {_E_COLUMNS}"
            f" FROM episodes e, (SELECT {_tsquery(len(terms))} AS q) q"
            f" WHERE e.scope_key = %s AND e.search @@ q.q{_NOT_STUB}{newest}) m) ranked"
            " WHERE score > 0 ORDER BY score DESC, seq DESC LIMIT %s",
            (*terms, scope.key, *([window] if window is not None else []), limit),
        )
        return [(self.decode.episode(r[3:]), float(r[0])) for r in rows]

    def integrity_check(self) -> str:
        """``"ok"``, or the first broken link: a page whose current revision is missing, or a
        checkpoint past the last seq ever assigned."""
        broken = self.read(
            "SELECT p.id FROM pages p LEFT JOIN revisions r ON r.page_id = p.id"
            " AND r.number = p.current_revision WHERE r.page_id IS NULL LIMIT 1"
        )
        if broken:
            return f"page {broken[0][0]} has no current revision"
        ahead = self.read(
            "SELECT c.scope_key FROM checkpoints c WHERE c.seq >"
            " (SELECT coalesce(max(seq), 0) FROM episodes) LIMIT 1"
        )
        return f"checkpoint of {ahead[0][0]} is past every episode" if ahead else "ok"
