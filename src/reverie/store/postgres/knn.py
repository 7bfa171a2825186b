"""Nearest-neighbour search inside PostgreSQL: pgvector's HNSW index (cosine), created per
embedding dimension, with the scope filter in the query and the same scores as the in-memory
index (cosine similarity, higher is better). SQLite has no such index, so recall loads a
SQLite scope's vectors into memory instead (:mod:`reverie.recall.vectors`); this is the
:class:`~reverie.store.sql.embeddings.NearestNeighbours` capability only PostgreSQL has.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from reverie.models import Scope
from reverie.store.sql.database import Database
from reverie.store.sql.dialect import PostgresDialect

__all__ = ["EXACT_BELOW", "ensure_hnsw", "vector_cosines", "vector_search"]

EXACT_BELOW = 5_000
"""Vector searches over fewer units of a scope than this compute every distance (exact)."""


def ensure_hnsw(c: Any, dim: int) -> None:
    """An HNSW (cosine) index for vectors of ``dim`` dimensions, created on first use.

    ``CREATE INDEX IF NOT EXISTS`` takes a SHARE lock on the table before it looks for the
    index, so two writers each running it before their inserts wait on each other's lock: a
    deadlock. So the index is looked up first (a catalog read, no lock), and only a missing one
    is created, by one writer at a time (an advisory lock held to the end of the transaction)."""
    name = f"embeddings_hnsw_{int(dim)}"
    if _exists(c, name):
        return
    c.execute("SELECT pg_advisory_xact_lock(?)", (_INDEX_LOCK,))
    if _exists(c, name):  # made by the writer this one waited for
        return
    c.execute(
        f"CREATE INDEX IF NOT EXISTS {name} ON embeddings"
        f" USING hnsw ((vector::vector({int(dim)})) vector_cosine_ops)"
        f" WHERE vector_dims(vector) = {int(dim)}"
    )


_INDEX_LOCK = 0x52565848  # "RVXH": the advisory lock of vector index creation


def _exists(c: Any, index: str) -> bool:
    return c.execute("SELECT to_regclass(?) IS NOT NULL", (index,)).fetchone()[0] is True


def vector_search(  # noqa: PLR0913 (the NearestNeighbours protocol's keyword options)
    db: Database,
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
        "q": PostgresDialect.vector_in(query),
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
    with db.write() as c:
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
    db: Database,
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
    rows = db.read(
        f"SELECT 'ref', u.ref, {cosine}{join} WHERE u.model = %(model)s"
        " AND u.kind = 'episode' AND u.ref = ANY(%(refs)s) AND u.scope_key = %(scope)s"
        f" UNION ALL SELECT DISTINCT 'hash', u.hash, {cosine}{join}"
        " WHERE u.scope_key = %(scope)s AND u.model = %(model)s AND u.hash = ANY(%(hashes)s)",
        {
            "q": PostgresDialect.vector_in(query),
            "scope": scope.key,
            "model": model,
            "refs": list(refs),
            "hashes": list(hashes),
        },
    )
    by_ref = {r[1]: float(r[2]) for r in rows if r[0] == "ref"}
    by_hash = {r[1]: float(r[2]) for r in rows if r[0] == "hash"}
    return by_ref, by_hash
