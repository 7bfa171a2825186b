"""``reverie.compat.mem0`` takes the calls of mem0's quickstart and "Memory Operations" pages.

Each test body is written as a mem0 user writes it: apart from the import and the fixture that
points ``Memory()`` at a fresh brain, it would run unchanged against mem0 itself. Where
Reverie's semantics differ (docs/api.md, "mem0"), the test says so in a comment.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from reverie import Config, Reverie
from reverie.compat.filters import matches
from reverie.compat.mem0 import AsyncMemory, Memory
from reverie.config import IdentityConfig

MESSAGES = [
    {"role": "user", "content": "I'm planning to watch a movie tonight. Any recommendations?"},
    {"role": "assistant", "content": "How about thriller movies? They can be quite engaging."},
    {"role": "user", "content": "I'm not a big fan of thriller movies but I love sci-fi movies."},
    {"role": "assistant", "content": "Got it! I'll avoid thriller recommendations."},
]


@pytest.fixture
def m(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Memory]:
    monkeypatch.setenv("REVERIE_DB", str(tmp_path / "brain.db"))
    memory = Memory(embedder=None)
    yield memory
    memory.close()


def test_add_returns_results_of_dicts(m: Memory) -> None:
    result = m.add(MESSAGES, user_id="alice", metadata={"category": "movies"})
    assert set(result) == {"results"}
    assert result["results"] and all(r["event"] == "ADD" for r in result["results"])
    assert all(isinstance(r["id"], str) and r["memory"] for r in result["results"])


def test_add_without_an_id_is_refused(m: Memory) -> None:
    with pytest.raises(ValueError, match="user_id"):
        m.add("I like tea")
    with pytest.raises(ValueError, match="user_id"):
        m.get_all()


def test_search_scores_are_in_unit_range_and_threshold_cuts(m: Memory) -> None:
    m.add(MESSAGES, user_id="alice", metadata={"category": "movies"})
    m.add("I play tennis every Sunday morning", user_id="alice")
    found = m.search("sci-fi movies", user_id="alice")["results"]
    assert found and "sci-fi" in found[0]["memory"]
    assert all(0.0 <= r["score"] <= 1.0 for r in found)
    best = found[0]["score"]
    assert m.search("sci-fi movies", user_id="alice", threshold=best + 1e-6)["results"] == []
    assert len(m.search("movies tennis", user_id="alice", limit=1)["results"]) == 1
    assert m.search("sci-fi movies", user_id="bob")["results"] == []  # another user's brain


def test_get_get_all_and_a_missing_id(m: Memory) -> None:
    added = m.add("I prefer window seats on long flights", user_id="alice")["results"][0]
    got = m.get(added["id"])
    assert got is not None and got["id"] == added["id"] and got["user_id"] == "alice"
    assert "window seats" in got["memory"]
    assert m.get("no-such-memory") is None
    listed = m.get_all(user_id="alice")["results"]
    assert [r["id"] for r in listed] == [added["id"]]
    assert listed[0]["memory"] == got["memory"]  # one text form for a memory everywhere


def test_infer_false_stores_the_text_as_it_is(m: Memory) -> None:
    # Reverie: a note page, pinned, cited by the edit that wrote it; mem0: a memory as given.
    added = m.add("Alice's badge number is 4471", user_id="alice", infer=False)["results"]
    assert [r["memory"] for r in added] == ["Alice's badge number is 4471"]
    got = m.get(added[0]["id"])
    assert got is not None and got["memory"] == "Alice's badge number is 4471"
    found = m.search("badge number", user_id="alice")["results"]
    assert found[0]["id"] == added[0]["id"]
    again = m.add("Alice's badge number is 4471", user_id="alice", infer=False)["results"]
    assert again[0]["id"] == added[0]["id"]  # the same text is one memory


def test_update_and_history(m: Memory) -> None:
    # Reverie: update is a person's pinned revision of a page; an episode is never edited.
    page = m.add("The staging database listens on 5432", user_id="ops", infer=False)
    memory_id = page["results"][0]["id"]
    assert m.update(memory_id, "The staging database listens on 5433") == {
        "message": "Memory updated successfully!"
    }
    got = m.get(memory_id)
    assert got is not None and got["memory"] == "The staging database listens on 5433"
    events = m.history(memory_id)
    assert [e["event"] for e in events] == ["ADD", "UPDATE"]
    assert events[1]["old_memory"] and "5432" in events[1]["old_memory"]
    assert "5433" in events[1]["new_memory"] and events[1]["memory_id"] == memory_id
    episode = m.add("a raw note", user_id="ops")["results"][0]["id"]
    with pytest.raises(ValueError, match="never edited"):
        m.update(episode, "changed")
    assert m.history("no-such-memory") == []


def test_delete_delete_all_and_reset(m: Memory) -> None:
    # Reverie: these erase (forget, applied), leaving a receipt and tombstones.
    one = m.add("I like green tea", user_id="alice")["results"][0]["id"]
    m.add("I like black coffee", user_id="alice")
    m.add("I like sparkling water", user_id="bob")
    assert m.delete(one) == {"message": "Memory deleted successfully!"}
    assert m.get(one) is None
    assert [r["memory"][:19] for r in m.get_all(user_id="alice")["results"]] == [
        "I like black coffee"
    ]
    assert m.delete_all(user_id="alice") == {"message": "Memories deleted successfully!"}
    assert m.get_all(user_id="alice")["results"] == []
    assert len(m.get_all(user_id="bob")["results"]) == 1
    m.reset()
    assert m.get_all(user_id="bob")["results"] == []


def test_delete_all_of_one_run(m: Memory) -> None:
    m.add("first session note about tea", user_id="alice", run_id="s1")
    m.add("second session note about coffee", user_id="alice", run_id="s2")
    assert len(m.get_all(user_id="alice", run_id="s1")["results"]) == 1
    m.delete_all(user_id="alice", run_id="s1")
    assert [r["run_id"] for r in m.get_all(user_id="alice")["results"]] == ["s2"]


def test_filters_with_logic_and_operators(m: Memory) -> None:
    m.add("I love sci-fi movies", user_id="alice", metadata={"category": "movies", "stars": 5})
    m.add("I dislike horror movies", user_id="alice", metadata={"category": "movies", "stars": 1})
    m.add("I read about movies and books", user_id="alice", metadata={"category": "books"})
    both = {"AND": [{"category": "movies"}, {"stars": {"gte": 3}}]}
    found = m.search("movies", user_id="alice", filters=both)["results"]
    assert [r["memory"][:20] for r in found] == ["I love sci-fi movies"]
    either = {"OR": [{"category": "books"}, {"stars": {"lt": 2}}]}
    assert len(m.search("movies", user_id="alice", filters=either)["results"]) == 2
    neither = {"NOT": [{"category": {"in": ["movies"]}}]}
    assert len(m.search("movies", user_id="alice", filters=neither)["results"]) == 1
    listed = m.get_all(user_id="alice", filters={"memory": {"icontains": "SCI-FI"}})["results"]
    assert len(listed) == 1
    assert len(m.get_all(user_id="alice", filters={"stars": "*"})["results"]) == 2
    with pytest.raises(ValueError, match="unknown operator 'like'"):
        m.get_all(user_id="alice", filters={"memory": {"like": "x"}})


def test_filter_grammar_edge_cases() -> None:
    record = {"user_id": "alice", "created_at": "2026-05-01T10:00:00+00:00", "metadata": {"n": 3}}
    assert matches(record, {"created_at": {"gte": "2026-01-01", "lt": "2027-01-01"}})
    assert not matches(record, {"missing": {"ne": "x"}})  # a missing value is not a value
    assert matches(record, {"n": {"nin": [1, 2]}, "user_id": {"ne": "bob"}})
    assert not matches(record, {"AND": [{"n": 3}, {"NOT": {"user_id": "alice"}}]})


def test_a_defaulted_tenant_is_named_not_answered_empty(tmp_path: Path) -> None:
    db = tmp_path / "brain.db"
    acme = Config(identity=IdentityConfig(tenant="acme"))
    with Reverie.open(db, config=acme) as rv:
        rv.add("deploys go out on Tuesdays", agent_id="coder")
    with Memory(str(db), embedder=None) as m, pytest.raises(ValueError, match="tenant"):
        m.search("deploys", agent_id="coder")


def test_async_memory_awaits_the_same_calls(tmp_path: Path) -> None:
    async def session() -> None:
        am = AsyncMemory(str(tmp_path / "brain.db"), embedder=None)
        added = await am.add("I am allergic to peanuts", user_id="alice")
        found = await am.search("allergic peanuts", user_id="alice")
        assert found["results"][0]["id"] == added["results"][0]["id"]
        assert await am.get("missing") is None
        await am.delete_all(user_id="alice")
        assert (await am.get_all(user_id="alice"))["results"] == []
        am.close()

    asyncio.run(session())
