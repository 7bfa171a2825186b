"""The parts of :class:`reverie.store.postgres.PostgresStore` beyond episodes, pages and cycles:
memory over time, vectors (pgvector, HNSW) and leases. The model response cache and API keys are
shared with SQLite: :mod:`reverie.store.keys_cache`.

Vectors are stored as pgvector values and handed out as the same packed little-endian float32
blobs as SQLite's, so :mod:`reverie.recall.vectors` works unchanged. :meth:`vector_search` adds
what SQLite cannot: a nearest-neighbour search inside the database, on an HNSW index (cosine)
created per embedding dimension, with the scope filter in the query and the same scores as the
in-memory index (cosine similarity, higher is better).

Leases: see :mod:`reverie.store.leases`. Claims use ``SELECT … FOR NO KEY UPDATE SKIP LOCKED`` on
the scope rows, so concurrent workers never wait for each other and never claim the same scope;
the ``ON CONFLICT … WHERE`` of the upsert is the compare-and-set that decides.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol

from reverie.errors import Conflict, LeaseLost
from reverie.models import Episode, Scope, now_utc
from reverie.store.base import Changeset, JournalEntry, Lease, Strength
from reverie.store.leases import RELEASED
from reverie.store.vectors import VectorRow, VectorUnit, vector_rows_query

if TYPE_CHECKING:
    import numpy as np
    import psycopg
    from numpy.typing import NDArray

__all__ = ["PostgresExtrasMixin"]

_LEASE_COLUMNS = "scope_key, owner, token, acquired_at, expires_at"
_LEASE_UPSERT = (
    " ON CONFLICT (scope_key) DO UPDATE SET owner = excluded.owner,"
    " token = CASE WHEN l.owner = excluded.owner AND l.expires_at > excluded.acquired_at"
    " THEN l.token ELSE l.token + 1 END,"
    " acquired_at = CASE WHEN l.owner = excluded.owner AND l.expires_at > excluded.acquired_at"
    " THEN l.acquired_at ELSE excluded.acquired_at END,"
    " heartbeat_at = excluded.heartbeat_at, expires_at = excluded.expires_at"
    " WHERE l.owner = excluded.owner OR l.expires_at <= excluded.acquired_at"
    f" RETURNING {_LEASE_COLUMNS}"
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
_CLAIM_ROUNDS = 4
"""Rounds of candidates one claim tries before it reports nothing due."""


class _Host(Protocol):
    url: str
    lease_owner: str | None

    def _write(self) -> AbstractContextManager[psycopg.Cursor[Any]]: ...

    def _read(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Any]: ...

    def _scope(self, key: str) -> Scope: ...

    def _episode_from_row(self, r: Sequence[Any]) -> Episode: ...

    def _ensure_scopes(self, c: psycopg.Cursor[Any], scopes: Iterable[Scope]) -> None: ...


def _vector(blob: bytes) -> NDArray[np.float32]:
    import numpy as np

    return np.frombuffer(blob, dtype="<f4")


def _blob(value: Any) -> bytes:
    """A pgvector value as SQLite's packed little-endian float32 blob."""
    blob: bytes = value.to_numpy().astype("<f4").tobytes()
    return blob


def _lease(host: _Host, row: Sequence[Any]) -> Lease:
    return Lease(host._scope(row[0]), row[1], int(row[2]), row[3], row[4])


EXACT_BELOW = 5_000
"""Vector searches over fewer units of a scope than this compute every distance (exact)."""


class PostgresExtrasMixin:
    # -- memory over time (issue 5) ------------------------------------------------------------

    @staticmethod
    def _record_memory(c: psycopg.Cursor[Any], changes: Changeset) -> None:
        cycle_id = changes.cycle.id if changes.cycle else changes.undone_cycle
        if changes.observations and cycle_id is not None:
            c.executemany(
                "INSERT INTO observations VALUES (%s, %s, %s, %s)",
                [(cycle_id, o.page_id, o.episodes, o.last_seen) for o in changes.observations],
            )
        if changes.journal:
            when = changes.cycle.started_at if changes.cycle else now_utc()
            c.execute(
                "INSERT INTO journal (scope_key, cycle_id, created_at, text)"
                " VALUES (%s, %s, %s, %s)",
                (changes.scope.key, cycle_id, when, changes.journal),
            )

    def strengths(self: _Host, page_ids: Iterable[str]) -> dict[str, Strength]:
        rows = self._read(
            "SELECT o.page_id, sum(o.episodes), count(*), max(o.last_seen) FROM observations o"
            " JOIN cycles c ON c.id = o.cycle_id WHERE c.undone_at IS NULL"
            " AND o.page_id = ANY(%s) GROUP BY o.page_id",
            (list(dict.fromkeys(page_ids)),),
        )
        return {r[0]: Strength(r[0], int(r[1]), int(r[2]), r[3]) for r in rows}

    def journal(self: _Host, scope: Scope, limit: int = 50) -> list[JournalEntry]:
        rows = self._read(
            "SELECT cycle_id, created_at, text FROM journal WHERE scope_key = %s"
            " ORDER BY n DESC LIMIT %s",
            (scope.key, limit),
        )
        return [JournalEntry(scope, r[0], r[1], r[2]) for r in reversed(rows)]

    # -- vectors (issue 3's VectorStore, plus HNSW search) ----------------------------------------

    def vectors_get(self: _Host, model: str, hashes: Sequence[str]) -> dict[str, bytes]:
        rows = self._read(
            "SELECT hash, vector FROM embeddings WHERE model = %s AND hash = ANY(%s)",
            (model, list(dict.fromkeys(hashes))),
        )
        return {r[0]: _blob(r[1]) for r in rows}

    def vectors_put(
        self: _Host, model: str, vectors: dict[str, bytes], units: Sequence[VectorUnit]
    ) -> None:
        dims = {len(blob) // 4 for blob in vectors.values()}
        with self._write() as c:
            for dim in sorted(dims):
                PostgresExtrasMixin._ensure_hnsw(c, dim)
            c.executemany(
                "INSERT INTO embeddings VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                [(model, h, _vector(blob)) for h, blob in vectors.items()],
            )
            c.executemany(
                "INSERT INTO vector_units (scope_key, model, kind, ref, seq, hash)"
                " VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                [(u.scope.key, model, u.kind, u.ref, u.seq, u.hash) for u in units],
            )

    @staticmethod
    def _ensure_hnsw(c: psycopg.Cursor[Any], dim: int) -> None:
        """An HNSW (cosine) index for vectors of ``dim`` dimensions, created on first use."""
        c.execute(
            f"CREATE INDEX IF NOT EXISTS embeddings_hnsw_{int(dim)} ON embeddings"
            f" USING hnsw ((vector::vector({int(dim)})) vector_cosine_ops)"
            f" WHERE vector_dims(vector) = {int(dim)}"
        )

    def vector_rows(
        self: _Host,
        scope: Scope,
        model: str,
        after: int,
        *,
        kind: str | None = None,
        newest: int | None = None,
    ) -> list[VectorRow]:
        sql, params = vector_rows_query("%s", scope, model, after, kind=kind, newest=newest)
        rows = self._read(sql, params)
        return [
            VectorRow(n=r[0], kind=r[1], ref=r[2], hash=r[3], vector=_blob(r[4]))
            for r in (rows if newest is None else reversed(rows))
        ]

    def unit_vectors(
        self: _Host, scope: Scope, model: str, kind: str, refs: Sequence[str]
    ) -> dict[str, bytes]:
        if not refs:
            return {}
        rows = self._read(
            "SELECT u.ref, e.vector FROM vector_units u JOIN embeddings e"
            " ON e.model = u.model AND e.hash = u.hash WHERE u.model = %s AND u.kind = %s"
            " AND u.ref = ANY(%s) AND u.scope_key = %s",
            (model, kind, list(refs), scope.key),
        )
        return {r[0]: _blob(r[1]) for r in rows}

    def unembedded_episodes(self: _Host, scope: Scope, model: str, limit: int) -> list[Episode]:
        from reverie.store.postgres import EPISODE_COLUMNS

        rows = self._read(
            f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE scope_key = %s AND seq >"
            " (SELECT coalesce(max(seq), 0) FROM vector_units"
            " WHERE scope_key = %s AND model = %s AND kind = 'episode') ORDER BY seq LIMIT %s",
            (scope.key, scope.key, model, limit),
        )
        return [self._episode_from_row(r) for r in rows]

    def has_vectors(self: _Host, scope: Scope, model: str) -> bool:
        rows = self._read(
            "SELECT 1 FROM vector_units WHERE scope_key = %s AND model = %s LIMIT 1",
            (scope.key, model),
        )
        return bool(rows)

    def vector_search(
        self: _Host,
        scope: Scope,
        model: str,
        query: bytes,
        k: int,
        kind: str,
        *,
        newest: int | None = None,
        ef_search: int = 100,
        exact_below: int = EXACT_BELOW,
    ) -> list[tuple[str, str, float]]:
        """The ``k`` units of ``kind`` in ``scope`` nearest to the unit vector ``query``:
        ``(kind, ref, cosine)``, best first; with ``newest``, among the scope's last ``newest``
        units of ``kind`` (by ``n``, as the in-memory index keeps them).

        A scope with fewer than ``exact_below`` such units is searched exactly (its rows, every
        distance computed: a few thousand at most); a larger one through the HNSW index
        (approximate; ``ef_search`` trades speed for recall, and the iterative scan keeps going
        while the scope filter drops candidates). Left to the planner, a small scope among many
        could be sent through the global HNSW graph and come back with fewer than ``k`` hits."""
        dim = len(query) // 4
        cast = f"vector({int(dim)})"
        params = {
            "q": _vector(query),
            "model": model,
            "dim": dim,
            "scope": scope.key,
            "kind": kind,
            "k": k,
            "newest": newest,
            "probe": exact_below,
        }
        window = ""
        if newest is not None:  # the n of the first unit past the window, found on the index
            window = (
                " AND u.n > coalesce((SELECT w.n FROM vector_units w WHERE w.scope_key ="
                " %(scope)s AND w.model = %(model)s AND w.kind = %(kind)s"
                " ORDER BY w.n DESC OFFSET %(newest)s LIMIT 1), 0)"
            )
        units = (
            "FROM embeddings e JOIN vector_units u ON u.model = e.model AND u.hash = e.hash"
            " WHERE e.model = %(model)s AND vector_dims(e.vector) = %(dim)s"
            f" AND u.scope_key = %(scope)s AND u.kind = %(kind)s{window}"
        )
        distance = f"e.vector::{cast} <=> %(q)s::{cast}"
        with self._write() as c:
            c.execute(
                "SELECT count(*) FROM (SELECT 1 FROM vector_units WHERE scope_key = %(scope)s"
                " AND model = %(model)s AND kind = %(kind)s LIMIT %(probe)s) s",
                params,
            )
            row = c.fetchone()
            if row is not None and row[0] < exact_below:  # OFFSET 0: no index order below
                c.execute(
                    f"SELECT kind, ref, cosine FROM (SELECT u.kind, u.ref, 1 - ({distance})"
                    f" AS cosine {units} OFFSET 0) t ORDER BY cosine DESC, ref LIMIT %(k)s",
                    params,
                )
            else:
                c.execute(f"SET LOCAL hnsw.ef_search = {int(ef_search)}")
                c.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
                c.execute(
                    f"SELECT u.kind, u.ref, 1 - ({distance}) AS cosine {units}"
                    f" ORDER BY {distance} LIMIT %(k)s",
                    params,
                )
            hits = [(r[0], r[1], float(r[2])) for r in c.fetchall()]
        return sorted(hits, key=lambda h: -h[2])  # relaxed_order may return them a little out

    def vector_cosines(
        self: _Host,
        scope: Scope,
        model: str,
        query: bytes,
        refs: Sequence[str],
        hashes: Sequence[str],
    ) -> tuple[dict[str, float], dict[str, float]]:
        """Cosines of the scope's episode units ``refs`` and of its units whose text hashes
        to one of ``hashes``, computed by the server in one query."""
        cast = f"vector({len(query) // 4})"
        cosine = f"1 - (e.vector::{cast} <=> %(q)s::{cast})"
        join = " FROM vector_units u JOIN embeddings e ON e.model = u.model AND e.hash = u.hash"
        rows = self._read(
            f"SELECT 'ref', u.ref, {cosine}{join} WHERE u.model = %(model)s"
            " AND u.kind = 'episode' AND u.ref = ANY(%(refs)s) AND u.scope_key = %(scope)s"
            f" UNION ALL SELECT DISTINCT 'hash', u.hash, {cosine}{join}"
            " WHERE u.scope_key = %(scope)s AND u.model = %(model)s AND u.hash = ANY(%(hashes)s)",
            {
                "q": _vector(query),
                "scope": scope.key,
                "model": model,
                "refs": list(refs),
                "hashes": list(hashes),
            },
        )
        by_ref = {r[1]: float(r[2]) for r in rows if r[0] == "ref"}
        by_hash = {r[1]: float(r[2]) for r in rows if r[0] == "hash"}
        return by_ref, by_hash

    # -- leases (issue 8) ------------------------------------------------------------------------

    def acquire_lease(
        self: _Host, scope: Scope, owner: str, ttl: float, now: datetime
    ) -> Lease | None:
        with self._write() as c:
            self._ensure_scopes(c, [scope])
            c.execute(
                f"INSERT INTO leases AS l VALUES (%s, %s, 1, %s, %s, %s){_LEASE_UPSERT}",
                (scope.key, owner, now, now, now + timedelta(seconds=ttl)),
            )
            row = c.fetchone()
        return _lease(self, row) if row else None

    def claim_due(
        self: _Host, owner: str, ttl: float, now: datetime, limit: int = 1
    ) -> list[Lease]:
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
        with self._write() as c:
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
        return [_lease(self, r) for r in taken]

    def heartbeat_lease(self: _Host, lease: Lease, ttl: float, now: datetime) -> Lease:
        with self._write() as c:
            c.execute(
                "UPDATE leases SET heartbeat_at = %s, expires_at = %s"
                f" WHERE scope_key = %s AND owner = %s AND token = %s RETURNING {_LEASE_COLUMNS}",
                (now, now + timedelta(seconds=ttl), lease.scope.key, lease.owner, lease.token),
            )
            row = c.fetchone()
        if row is None:
            raise LeaseLost(f"the lease on {lease.scope.key} was taken over; stop working on it")
        return _lease(self, row)

    def release_lease(self: _Host, lease: Lease) -> bool:
        with self._write() as c:
            c.execute(
                "UPDATE leases SET expires_at = %s"
                " WHERE scope_key = %s AND owner = %s AND token = %s",
                (RELEASED, lease.scope.key, lease.owner, lease.token),
            )
            return c.rowcount == 1

    def leases(self: _Host) -> list[Lease]:
        rows = self._read(f"SELECT {_LEASE_COLUMNS} FROM leases ORDER BY scope_key")
        return [_lease(self, r) for r in rows]

    def _check_lease(self: _Host, c: psycopg.Cursor[Any], changes: Changeset) -> None:
        """Refuse a commit to a scope whose live lease another owner holds (a fence: a worker
        that stalled past its lease cannot land a cycle over its successor's)."""
        c.execute(
            "SELECT owner, expires_at FROM leases WHERE scope_key = %s FOR SHARE",
            (changes.scope.key,),
        )
        row = c.fetchone()
        at = changes.cycle.finished_at if changes.cycle and changes.cycle.finished_at else None
        if row and row[0] != self.lease_owner and row[1] > (at or now_utc()):
            raise Conflict(
                f"scope {changes.scope.key} is leased by {row[0]} until {row[1].isoformat()};"
                " a worker is dreaming it — try again after the lease ends"
            )
