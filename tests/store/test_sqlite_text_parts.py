"""SQLite's episode full-text index in parts by seq: every episode is indexed in exactly the
part of its seq, a windowed search reads the newest parts only and finds what one table finds,
and a brain indexed before parts existed keeps its table as the first part."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from reverie.models import Scope
from reverie.store.sqlite import SQLiteStore
from reverie.store.sqlite.text import part_table
from tests.conftest import EpisodeFactory

MINE = Scope.parse("acme/coder")
WORDS = ["deploy", "timeout", "cache", "retry", "vault", "token", "kubectl", "rollback"]
PART = 50


def _store(path: Path, part_rows: int = PART) -> SQLiteStore:
    store = SQLiteStore(path)
    store.migrate()
    store.backend.text.part_rows = part_rows
    return store


def _fill(store: SQLiteStore, make_episode: EpisodeFactory, count: int, seed: int) -> None:
    rng = random.Random(seed)
    episodes = []
    for i in range(count):
        words = " ".join(rng.choices(WORDS, k=rng.randint(2, 9)))
        scope = "acme/other" if i % 3 == 2 else MINE.key
        episodes.append(
            make_episode(scope=scope, situation=f"{words} marker{i}", action="", error=None)
        )
    for start in range(0, count, 37):  # batches that cross part boundaries
        store.append(episodes[start : start + 37])


def _lows(store: SQLiteStore) -> list[int]:
    return [r[0] for r in store.read("SELECT low FROM episodes_fts_parts ORDER BY low")]


def test_each_episode_is_indexed_in_the_part_of_its_seq(
    tmp_path: Path, make_episode: EpisodeFactory
) -> None:
    store = _store(tmp_path / "parts.db")
    _fill(store, make_episode, 230, seed=1)
    lows = _lows(store)
    assert lows == [1, 51, 101, 151, 201]
    for i, low in enumerate(lows):
        high = lows[i + 1] - 1 if i + 1 < len(lows) else 230
        table = part_table(low)
        rowids = [r[0] for r in store.read(f"SELECT rowid FROM {table}_docsize ORDER BY rowid")]
        assert rowids == list(range(low, high + 1))
    for seq in (1, 50, 51, 199, 230):  # found by its own marker, wherever its part is
        found = store.search_episodes(_scope_of(seq), [f"marker{seq - 1}"], 5, window=None)
        assert [e.seq for e, _ in found] == [seq]


def _scope_of(seq: int) -> Scope:
    return Scope.parse("acme/other" if (seq - 1) % 3 == 2 else MINE.key)


@pytest.mark.parametrize(("terms", "window"), [(["deploy"], 40), (["vault", "token"], 90)])
def test_a_windowed_search_finds_what_one_table_finds(
    tmp_path: Path, make_episode: EpisodeFactory, terms: list[str], window: int
) -> None:
    parted, whole = _store(tmp_path / "parted.db"), _store(tmp_path / "whole.db", 10**9)
    for store in (parted, whole):
        _fill(store, make_episode, 230, seed=2)
    assert len(_lows(parted)) == 5 and _lows(whole) == [1]
    everything = 10**6  # every candidate of the window: the same rows, ranked per part
    got = parted.search_episodes(MINE, terms, everything, window=window)
    want = whole.search_episodes(MINE, terms, everything, window=window)
    assert {e.seq for e, _ in got} == {e.seq for e, _ in want}
    assert 0 < len(got) <= window and all(e.scope == MINE for e, _ in got)
    top = [e.seq for e, _ in parted.search_episodes(MINE, terms, 7, window=window)]
    assert top == [e.seq for e, _ in got][:7]  # the merge keeps the best of every part


def test_unindexing_reaches_the_part_and_restoring_writes_it_back(
    tmp_path: Path, make_episode: EpisodeFactory
) -> None:
    store = _store(tmp_path / "parts.db")
    _fill(store, make_episode, 120, seed=3)
    (old,) = [e for e, _ in store.search_episodes(MINE, ["marker60"], 1, window=None)]
    with store.backend.write() as c:
        store.backend.text.unindex(c, [old])
    assert store.search_episodes(MINE, ["marker60"], 1, window=None) == []
    with store.backend.write() as c:  # an old seq goes back to its own part, none is started
        store.backend.text.index(c, [old])
    assert [e.seq for e, _ in store.search_episodes(MINE, ["marker60"], 1, window=None)] == [61]
    assert _lows(store) == [1, 51, 101]
    with store.backend.write() as c:
        store.backend.compact_text_index(c)  # merges every part
    assert [e.seq for e, _ in store.search_episodes(MINE, ["marker60"], 1, window=None)] == [61]


def test_a_brain_indexed_in_one_table_keeps_it_as_its_first_part(
    tmp_path: Path, make_episode: EpisodeFactory
) -> None:
    path = tmp_path / "before.db"
    store = _store(path, part_rows=10**9)
    _fill(store, make_episode, 120, seed=4)
    store.close()
    with sqlite3.connect(path) as conn:  # the schema of migration 0017: no parts
        conn.execute("DROP TABLE episodes_fts_parts")
        conn.execute("DELETE FROM _migrations WHERE name = '0018_episode_text_parts'")
    store = _store(path)
    assert "0018_episode_text_parts" in store.migrations()
    assert _lows(store) == [1]
    found = store.search_episodes(MINE, ["marker3"], 1, window=None)
    assert [e.seq for e, _ in found] == [4]
    _fill(store, make_episode, 10, seed=5)  # past 1 + PART: the next append starts a part
    assert _lows(store) == [1, 121]
    found = store.search_episodes(MINE, ["marker0"], 3, window=None)
    assert sorted(e.seq for e, _ in found) == [1, 121]
