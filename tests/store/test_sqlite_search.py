"""SQLite's windowed episode search: the fast path for a brain that holds one scope ranks
exactly as the scoped query does, and never lets another scope's episode in."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import reverie.store.sql.base as sql_base
from reverie import Reverie
from reverie.models import Scope
from reverie.store.sqlite import SQLiteStore
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


@pytest.mark.parametrize("terms", [["deploy"], ["vault", "token"], ["cache", "retry", "rollback"]])
def test_one_scope_fast_path_ranks_as_the_scoped_query(
    store: SQLiteStore, make_episode: EpisodeFactory, terms: list[str]
) -> None:
    store.append([make_episode(situation=t, action="", error=None) for t in _texts(1, 300)])
    fast = store.backend._ranked_alone(MINE, terms, 15, window=60)
    assert fast is not None and len(fast) == 15
    assert fast == store.backend._ranked_scoped(MINE, terms, 15, window=60)
    newest = store.read(
        "SELECT rowid FROM episodes_fts WHERE episodes_fts MATCH ? ORDER BY rowid DESC LIMIT 60",
        (store.backend._match(MINE, "body", terms),),
    )
    assert {seq for seq, _ in fast} <= {r[0] for r in newest}  # inside the window
    found = store.search_episodes(MINE, terms, 15, window=60)
    assert [e.seq for e, _ in found] == [seq for seq, _ in fast]
    assert [s for _, s in found] == [-rank for _, rank in fast]


def test_a_second_scope_turns_the_fast_path_off(
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
    assert store.backend._ranked_alone(MINE, ["deploy"], 10, window=40) is None
    found = store.search_episodes(MINE, ["deploy", "vault"], 10, window=40)
    assert len(found) == 10
    assert all(e.scope == MINE for e, _ in found)
    ranked = store.backend._ranked_scoped(MINE, ["deploy", "vault"], 10, window=40)
    assert [e.seq for e, _ in found] == [seq for seq, _ in ranked]


def test_recall_reads_pages_whatever_the_revision_cache_drops_meanwhile(
    tmp_path: Path, make_episode: EpisodeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sql_base, "_DECODED_REVISIONS", 1)  # every decode clears the cache
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
