"""Vector storage: an embedding cache keyed by content hash and model, and the units recall finds.

Every backend keeps vectors (:class:`~reverie.store.base.BrainStore`); recall still serves the
lexical path without an embedder (DESIGN invariant 8). Vectors are packed little-endian float32
blobs (``numpy.ndarray.tobytes``), L2-normalised by the embedder.

Writes here are derived data, not cycle state: they never join a cycle's transaction, are
idempotent (``ON CONFLICT DO NOTHING``) and can be rebuilt from episodes and revisions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from reverie.models import Episode, Scope
from reverie.store.records import VectorRow, VectorUnit
from reverie.store.sql.database import Database
from reverie.store.sql.rows import EPISODE_COLUMNS

__all__ = [
    "meta_get",
    "meta_put",
    "unembedded_episodes",
    "unit_vectors",
    "vector_rows",
    "vector_rows_query",
    "vectors_get",
    "vectors_put",
]


def vector_rows_query(
    scope: Scope,
    model: str,
    after: int,
    *,
    kind: str | None = None,
    newest: int | None = None,
) -> tuple[str, list[Any]]:
    """The SQL and parameters of :meth:`~reverie.store.base.BrainStore.vector_rows`; with
    ``newest`` the rows come newest first (the caller reverses them)."""
    sql = (
        "SELECT u.n, u.kind, u.ref, u.hash, e.vector FROM vector_units u JOIN embeddings e"
        " ON e.model = u.model AND e.hash = u.hash"
        " WHERE u.scope_key = ? AND u.model = ? AND u.n > ?"
    )
    params: list[Any] = [scope.key, model, after]
    if kind is not None:
        sql += " AND u.kind = ?"
        params.append(kind)
    if newest is None:
        return sql + " ORDER BY u.n", params
    return sql + " ORDER BY u.n DESC LIMIT ?", [*params, newest]


def meta_get(db: Database, key: str) -> str | None:
    rows = db.read("SELECT value FROM brain_meta WHERE key = ?", [key])
    return str(rows[0][0]) if rows else None


def meta_put(db: Database, key: str, value: str) -> None:
    with db.write() as c:
        c.execute(
            "INSERT INTO brain_meta VALUES (?, ?)"
            " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )


def vectors_get(db: Database, model: str, hashes: Sequence[str]) -> dict[str, bytes]:
    found: dict[str, bytes] = {}
    out = db.dialect.vector_out
    for where, params in db.dialect.members("hash", list(dict.fromkeys(hashes))):
        rows = db.read(
            f"SELECT hash, vector FROM embeddings WHERE model = ? AND {where}", [model, *params]
        )
        found.update((r[0], out(r[1])) for r in rows)
    return found


def vectors_put(
    db: Database, model: str, vectors: dict[str, bytes], units: Sequence[VectorUnit]
) -> None:
    to_db = db.dialect.vector_in
    with db.write() as c:
        for dim in sorted({len(blob) // 4 for blob in vectors.values()}):
            db.backend.ensure_vector_index(c, dim)
        c.executemany(
            "INSERT INTO embeddings VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
            [(model, h, to_db(blob)) for h, blob in vectors.items()],
        )
        c.executemany(
            "INSERT INTO vector_units (scope_key, model, kind, ref, seq, hash)"
            " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            [(u.scope.key, model, u.kind, u.ref, u.seq, u.hash) for u in units],
        )


def vector_rows(
    db: Database,
    scope: Scope,
    model: str,
    after: int,
    *,
    kind: str | None = None,
    newest: int | None = None,
) -> list[VectorRow]:
    sql, params = vector_rows_query(scope, model, after, kind=kind, newest=newest)
    rows = db.read(sql, params)
    out = db.dialect.vector_out
    return [
        VectorRow(n=r[0], kind=r[1], ref=r[2], hash=r[3], vector=out(r[4]))
        for r in (rows if newest is None else reversed(rows))
    ]


def unit_vectors(
    db: Database, scope: Scope, model: str, kind: str, refs: Sequence[str]
) -> dict[str, bytes]:
    found: dict[str, bytes] = {}
    out = db.dialect.vector_out
    for where, params in db.dialect.members("u.ref", list(refs)):
        rows = db.read(
            "SELECT u.ref, e.vector FROM vector_units u JOIN embeddings e"
            " ON e.model = u.model AND e.hash = u.hash WHERE u.model = ? AND u.kind = ?"
            f" AND {where} AND u.scope_key = ?",
            [model, kind, *params, scope.key],
        )
        found.update((r[0], out(r[1])) for r in rows)
    return found


def unembedded_episodes(db: Database, scope: Scope, model: str, limit: int) -> list[Episode]:
    rows = db.read(
        f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE scope_key = ? AND seq >"
        " (SELECT coalesce(max(seq), 0) FROM vector_units"
        " WHERE scope_key = ? AND model = ? AND kind = 'episode') ORDER BY seq LIMIT ?",
        (scope.key, scope.key, model, limit),
    )
    return [db.decode.episode(r) for r in rows]
