"""What only PostgreSQL needs proving: seq order under concurrent appends, the migration ports,
the HNSW vector search, opening by URL."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from reverie import Reverie
from reverie.errors import StoreError
from reverie.models import Scope
from reverie.store.migrations import load_migrations
from reverie.store.postgres import PostgresStore
from reverie.store.records import VectorUnit
from reverie.store.sql.commit import insert_episodes
from tests.conftest import EpisodeFactory
from tests.pg import postgres_store, schema_url

SCOPE = Scope.parse("acme/coder")


@pytest.fixture
def pg() -> Iterator[PostgresStore]:
    with postgres_store() as store:
        yield store


def test_every_sqlite_migration_has_a_postgres_port() -> None:
    sqlite = [name for name, _sql in load_migrations("sqlite")]
    postgres = [name for name, _sql in load_migrations("postgres")]
    assert sqlite == postgres, "add a port under reverie/store/migrations/postgres/"


def test_open_by_url_dreams_and_recalls(make_episode: EpisodeFactory) -> None:
    with schema_url() as url, Reverie.open(url) as rv:
        assert isinstance(rv.store, PostgresStore)
        rv.ingest([make_episode(lesson="pin the kubectl version") for _ in range(4)])
        report = rv.dream(SCOPE)
        assert report.episodes_marked == 4 and rv.store.pending_scopes() == []
        assert rv.recall("kubectl apply timed out", SCOPE).items


def test_an_append_in_flight_holds_back_later_appends_to_its_scope_only(
    pg: PostgresStore, make_episode: EpisodeFactory
) -> None:
    """A checkpoint can never pass a seq that commits later (DESIGN invariant 1)."""
    later, elsewhere = PostgresStore(pg.url), PostgresStore(pg.url)
    first, second = make_episode(), make_episode()
    done = threading.Event()

    def append_second() -> None:
        later.append([second])
        done.set()

    try:
        with pg.write() as c:  # an append that has drawn its seq but not committed yet
            (held,) = insert_episodes(pg, c, [first])
            thread = threading.Thread(target=append_second)
            thread.start()
            time.sleep(0.5)
            assert not done.is_set(), "a second append to the scope must wait"
            elsewhere.append([make_episode(scope="acme/other")])  # other scopes do not wait
            assert elsewhere.scan(SCOPE, 0, 10) == []
        thread.join(10)
        scanned = later.scan(SCOPE, 0, 10)
        assert [e.id for e in scanned] == [first.id, second.id]
        assert (held.seq or 0) < (scanned[1].seq or 0)
    finally:
        later.close()
        elsewhere.close()


def test_concurrent_appends_and_cycles_consolidate_everything_once(
    make_episode: EpisodeFactory,
) -> None:
    with schema_url() as url, Reverie.open(url) as rv:
        episodes = [make_episode(id=f"ep-c{i:04d}") for i in range(120)]

        def append(part: int) -> None:
            with Reverie.open(url) as writer:
                for ep in episodes[part::4]:
                    writer.remember(ep)

        threads = [threading.Thread(target=append, args=(p,)) for p in range(4)]
        for t in threads:
            t.start()
        while any(t.is_alive() for t in threads):
            rv.dream(SCOPE)
        rv.dream(SCOPE)
        stats = rv.status(SCOPE)
        assert stats.episodes == stats.consolidated == 120
        marked = [seq for c in rv.cycles(SCOPE, limit=1000) for seq in rv.store.marked(c.id)]
        assert len(marked) == len(set(marked)) == 120


def test_hnsw_vector_search_is_scoped_and_ranks_by_cosine(pg: PostgresStore) -> None:
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(300, 16)).astype("<f4")
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    other = Scope.parse("acme/other")
    units = [
        VectorUnit(SCOPE if i % 2 == 0 else other, "episode", f"ep{i}", f"h{i}", i + 1)
        for i in range(300)
    ]
    pg.vectors_put("m", {f"h{i}": v.tobytes() for i, v in enumerate(vectors)}, units)
    query = vectors[10]
    hits = pg.vector_search(SCOPE, "m", query.tobytes(), 5, "episode")
    mine = [i for i in range(300) if i % 2 == 0]
    best = sorted(mine, key=lambda i: -float(vectors[i] @ query))[:5]
    assert [ref for _k, ref, _c in hits] == [f"ep{i}" for i in best]
    assert hits[0][2] == pytest.approx(1.0, abs=1e-5)
    through_index = pg.vector_search(SCOPE, "m", query.tobytes(), 5, "episode", exact_below=1)
    assert [ref for _k, ref, _c in through_index] == [f"ep{i}" for i in best]  # 300 rows: exact
    indexes = pg.read("SELECT indexname FROM pg_indexes WHERE tablename = 'embeddings'")
    assert "embeddings_hnsw_16" in {r[0] for r in indexes}
    rows = pg.vector_rows(SCOPE, "m", 0)
    assert len(rows) == 150 and rows[0].vector == vectors[0].tobytes()
    newest = pg.vector_rows(SCOPE, "m", 0, kind="episode", newest=3)
    assert [r.ref for r in newest] == ["ep294", "ep296", "ep298"]  # the last three, oldest first
    assert pg.vector_rows(SCOPE, "m", 0, kind="claim") == []
    found = pg.unit_vectors(SCOPE, "m", "episode", ["ep0", "ep1", "ep-none"])
    assert found == {"ep0": vectors[0].tobytes()}  # ep1 is another scope's


def test_writing_vectors_beside_another_writer_takes_no_table_lock(pg: PostgresStore) -> None:
    """Once the HNSW index exists, writing vectors locks no table: a writer that took a SHARE
    lock (``CREATE INDEX IF NOT EXISTS`` does, even for an index that exists) blocks every
    other writer's inserts, and two such writers deadlock (seen with four dream workers)."""
    vector = np.ones(16, dtype="<f4") / 4
    pg.vectors_put("m", {"h0": vector.tobytes()}, [VectorUnit(SCOPE, "episode", "ep0", "h0", 1)])
    other = PostgresStore(pg.backend.url)
    other.migrate()  # nothing to do: it registers the vector type on its connection
    try:
        with other.backend.write() as c:
            c.execute("SET lock_timeout = '2s'")  # for the session: a wait fails, not hangs
        with pg.backend.write() as c:
            pg.backend.ensure_vector_index(c, 16)  # a writer between its index and its inserts
            other.vectors_put("m", {"h1": vector.tobytes()}, [])  # times out behind a lock
    finally:
        other.close()
    assert pg.vectors_get("m", ["h1"]).keys() == {"h1"}


def test_missing_extra_is_named(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="cannot connect"):
        PostgresStore("postgresql://nobody@127.0.0.1:1/none?connect_timeout=2")


def test_vector_search_is_exact_for_small_scopes_and_hnsw_for_large_ones(
    pg: PostgresStore,
) -> None:
    """Both paths rank by cosine within the scope and honour the newest-units window; a small
    scope among many others still gets its k nearest (it is searched exactly)."""
    rng = np.random.default_rng(11)
    vectors = rng.normal(size=(2000, 16)).astype("<f4")
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    scopes = [SCOPE] + [Scope.parse(f"acme/crowd-{i}") for i in range(199)]
    units = [
        VectorUnit(scopes[i % 200], "episode", f"ep{i}", f"h{i}", i + 1) for i in range(2000)
    ]  # SCOPE holds ep0, ep200, ep400, …: 10 of 2000
    pg.vectors_put("m", {f"h{i}": v.tobytes() for i, v in enumerate(vectors)}, units)
    mine = list(range(0, 2000, 200))
    query = rng.normal(size=16).astype("<f4")
    query /= np.linalg.norm(query)
    best = sorted(mine, key=lambda i: -float(vectors[i] @ query))
    exact = pg.vector_search(SCOPE, "m", query.tobytes(), 5, "episode")
    assert [ref for _k, ref, _c in exact] == [f"ep{i}" for i in best[:5]]
    hnsw = pg.vector_search(SCOPE, "m", query.tobytes(), 5, "episode", exact_below=1)
    assert {ref for _k, ref, _c in hnsw} <= {f"ep{i}" for i in mine}  # never another scope's
    newest = pg.vector_search(SCOPE, "m", query.tobytes(), 10, "episode", newest=3)
    assert {ref for _k, ref, _c in newest} == {"ep1400", "ep1600", "ep1800"}
    assert [c for _k, _r, c in exact] == sorted((c for _k, _r, c in exact), reverse=True)


def test_concurrent_openers_migrate_a_fresh_database_once() -> None:
    """Every opener of a fresh database runs the migrator; only one may create its tables
    (``CREATE TABLE IF NOT EXISTS`` races on the catalogue outside the migration lock)."""
    import asyncio  # noqa: PLC0415

    from reverie import AsyncReverie  # noqa: PLC0415

    async def open_all(url: str) -> None:
        brains = await asyncio.gather(*(AsyncReverie.open(url, workers=4) for _ in range(2)))
        for rv in brains:
            await rv.close()

    for _ in range(3):
        with schema_url() as url:
            asyncio.run(open_all(url))
            store = PostgresStore(url)
            try:
                assert store.migrations() == [name for name, _ in load_migrations("postgres")]
            finally:
                store.close()
