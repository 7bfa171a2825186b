"""SQLite's windowed episode search: the fast path for a brain that holds one scope ranks
exactly as the scoped query does, and never lets another scope's episode in."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import reverie.store.sql.database as sql_database
from reverie import Reverie
from reverie.models import Scope
from reverie.store.sqlite import SQLiteStore
from reverie.store.sqlite.text import scoped
from tests.conftest import EpisodeFactory

MINE = Scope.parse("acme/coder")
WORDS = ["deploy", "timeout", "cache", "retry", "vault", "token", "kubectl", "rollback"]


def _texts(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choices(WORDS, k=rng.randint(2, 9))) for _ in range(count)]


@pytest.fixture
def store(tmp_path: Path) -> SQLiteStore:
    s = SQLiteStore(tmp_path / "search.db")
    s.migrate()
    return s


def _scoped_reference(
    store: SQLiteStore, terms: list[str], limit: int, window: int
) -> list[tuple[int, float]]:
    """The ranking by definition, in one table: bm25 with the scope token in the MATCH over
    the scope's newest ``window`` matches."""
    return [
        (r[0], r[1])
        for r in store.read(
            "SELECT rowid, rank FROM (SELECT rowid, bm25(episodes_fts, 0, 1.0) AS rank"
            " FROM episodes_fts WHERE episodes_fts MATCH ? ORDER BY rowid DESC LIMIT ?)"
            " ORDER BY rank, rowid DESC LIMIT ?",
            (scoped(MINE, "body", terms), window, limit),
        )
    ]


@pytest.mark.parametrize("terms", [["deploy"], ["vault", "token"], ["cache", "retry", "rollback"]])
def test_one_scope_fast_path_ranks_as_the_scoped_query(
    store: SQLiteStore, make_episode: EpisodeFactory, terms: list[str]
) -> None:
    store.append([make_episode(situation=t, action="", error=None) for t in _texts(1, 300)])
    fast = store.backend.text.ranked(MINE, terms, 15, window=60)
    assert len(fast) == 15
    assert fast == _scoped_reference(store, terms, 15, 60)
    found = store.search_episodes(MINE, terms, 15, window=60)
    assert [e.seq for e, _ in found] == [seq for seq, _ in fast]
    assert [s for _, s in found] == [-rank for _, rank in fast]


def test_a_second_scope_is_never_found_and_ranks_as_the_scoped_query(
    store: SQLiteStore, make_episode: EpisodeFactory
) -> None:
    mine, theirs = _texts(2, 200), _texts(3, 200)
    episodes = []
    for a, b in zip(mine, theirs, strict=True):  # interleaved: their rows sit inside my window
        episodes += [
            make_episode(situation=a, action="", error=None),
            make_episode(scope="acme/other", situation=b, action="", error=None),
        ]
    store.append(episodes)
    found = store.search_episodes(MINE, ["deploy", "vault"], 10, window=40)
    assert len(found) == 10
    assert all(e.scope == MINE for e, _ in found)
    ranked = _scoped_reference(store, ["deploy", "vault"], 10, 40)
    assert [e.seq for e, _ in found] == [seq for seq, _ in ranked]


def test_recall_reads_pages_whatever_the_revision_cache_drops_meanwhile(
    tmp_path: Path, make_episode: EpisodeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sql_database, "_DECODED_REVISIONS", 1)  # every decode clears the cache
    with Reverie.open(tmp_path / "r.db") as rv:
        rv.ingest([make_episode(importance=9) for _ in range(3)])
        build = {  # another problem (situation, error): a page of its own
            "category": "build",
            "tools": ["docker"],
            "situation": "building the worker image for the nightly release",
            "action": "docker build -t worker .",
            "error": "OSError: no space left on device",
        }
        rv.ingest([make_episode(importance=9, **build) for _ in range(3)])
        rv.dream(MINE, now=make_episode().created_at)
        assert len(rv.pages(MINE)) == 2
        for _ in range(3):  # one page cached, the other decoded (clearing the cache) and back
            found = rv.recall("kubectl docker failure deploy build", MINE, 400)
            assert found.warning is None and {i.id for i in found.items if i.kind == "page"}
