"""ReverieStore as LangGraph's BaseStore: the same answers as LangGraph's own InMemoryStore,
and the ``store=`` of a compiled graph whose model is LangChain's scripted chat model.

LangGraph ships no conformance suite for stores (only ``langgraph-checkpoint-conformance``, for
checkpointers), so the reference here is LangGraph's ``InMemoryStore``, run side by side.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypedDict

import pytest

from reverie import Reverie
from reverie.embed.onnx import MiniLMEmbedder, minilm_available
from reverie.models import Scope

pytest.importorskip("langgraph", reason="needs the langgraph extra (in dev)")
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langgraph.config import get_store
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore, InvalidNamespaceError
from langgraph.store.memory import InMemoryStore

from reverie.integrations.langgraph import ReverieStore, label_of, user_name

ITEMS: list[tuple[tuple[str, ...], str, dict[str, Any]]] = [
    (("u1", "prefs"), "editor", {"name": "vim", "rank": 1, "tags": ["modal"]}),
    (("u1", "prefs"), "shell", {"name": "fish", "rank": 3, "meta": {"since": 2021}}),
    (("u1", "facts"), "city", {"name": "Lyon", "rank": 2}),
    (("u2", "prefs"), "editor", {"name": "emacs", "rank": 1}),
    (("u2", "prefs", "deep"), "a/b key", {"name": "slashes and spaces", "rank": 5}),
]


def _fill(store: BaseStore) -> None:
    for namespace, key, value in ITEMS:
        store.put(namespace, key, value)
    store.put(("u1", "prefs"), "shell", {"name": "zsh", "rank": 4, "meta": {"since": 2023}})
    store.delete(("u1", "facts"), "city")


def _seen(items: list[Any]) -> list[tuple[tuple[str, ...], str, dict[str, Any]]]:
    return sorted((i.namespace, i.key, i.value) for i in items)


@pytest.mark.parametrize("user_label", [None, 0])
def test_answers_as_langgraphs_own_in_memory_store(tmp_path: Path, user_label: int | None) -> None:
    reference = InMemoryStore()
    with Reverie.open(tmp_path / "brain.db") as rv:
        ours = ReverieStore(rv, "acme", "assistant", user_label=user_label)
        for store in (reference, ours):
            _fill(store)
        for namespace, key, _v in ITEMS:
            a, b = reference.get(namespace, key), ours.get(namespace, key)
            assert (a and (a.namespace, a.key, a.value)) == (b and (b.namespace, b.key, b.value))
        for prefix, query_filter in [
            (("u1",), None),
            (("u1", "prefs"), {"rank": {"$gte": 2}}),
            ((), {"name": "vim"}),
            ((), {"meta": {"since": 2023}}),
            ((), {"tags": ["modal"]}),
            ((), {"rank": {"$ne": 1, "$lt": 5}}),
            (("u3",), None),
        ]:
            want = reference.search(prefix, filter=query_filter, limit=50)
            got = ours.search(prefix, filter=query_filter, limit=50)
            assert _seen(got) == _seen(want), (prefix, query_filter)
        # InMemoryStore keeps listing a namespace whose last item was deleted (its empty dict
        # stays); a database-backed store does not, so the city comes back before listing
        for store in (reference, ours):
            store.put(("u1", "facts"), "city", {"name": "Lyon", "rank": 2})
        for kwargs in [
            {},
            {"prefix": ("u1",)},
            {"suffix": ("prefs",)},
            {"max_depth": 1},
            {"prefix": ("*", "prefs")},
        ]:
            assert ours.list_namespaces(**kwargs) == sorted(reference.list_namespaces(**kwargs))
        assert len(ours.search((), limit=2)) == 2
        assert len(ours.search((), limit=10, offset=3)) == 2


def test_items_are_pages_revised_undone_and_scoped(tmp_path: Path) -> None:
    with Reverie.open(tmp_path / "brain.db") as rv:
        store = ReverieStore(rv, "acme", "assistant", user_label=0)
        _fill(store)
        assert {str(s) for s in rv.scopes()} == {"acme/assistant/u1", "acme/assistant/u2"}
        (shell,) = [p for p in rv.pages("acme/assistant/u1") if p.title == "/prefs/shell"]
        lineage = rv.why(shell.id)
        assert [r.author for r in lineage.revisions] == ["langgraph", "langgraph"]
        assert rv.pages("acme/assistant/u1", "retired")[0].title == "/facts/city"
        rv.undo(lineage.revisions[-1].cycle_id or "")
        item = store.get(("u1", "prefs"), "shell")
        assert item is not None and item.value["name"] == "fish"

        hits = store.search(("u1",), query="which shell does the user run, fish?")
        assert hits and hits[0].key == "shell" and (hits[0].score or 0) > 0
        assert store.search(("u2",), query="fish shell") == []  # another user's scope

        with pytest.raises(InvalidNamespaceError, match="empty"):
            store.put(("", "prefs"), "k", {"v": 1})


class State(TypedDict, total=False):
    user: str
    question: str
    prompt: str
    answer: str


def _graph(store: BaseStore, model: FakeListChatModel) -> Any:
    def remember(state: State) -> State:
        if "vim" in state["question"]:
            get_store().put((state["user"], "prefs"), "editor", {"text": "prefers vim"})
        return {}

    def answer(state: State) -> State:
        hits = get_store().search((state["user"],), query=state["question"], limit=3)
        memory = "\n".join(h.value["text"] for h in hits)
        prompt = f"Known about the user:\n{memory}\n\nQuestion: {state['question']}"
        return {"prompt": prompt, "answer": str(model.invoke(prompt).content)}

    graph = StateGraph(State)
    graph.add_node("remember", remember)
    graph.add_node("answer", answer)
    graph.add_edge(START, "remember")
    graph.add_edge("remember", "answer")
    graph.add_edge("answer", END)
    return graph.compile(store=store)


def test_a_compiled_graph_remembers_through_its_store(tmp_path: Path) -> None:
    model = FakeListChatModel(responses=["Noted.", "Use vim."])
    with Reverie.open(tmp_path / "brain.db") as rv:
        graph = _graph(ReverieStore(rv, "acme", "assistant", user_label=0), model)
        graph.invoke({"user": "u1", "question": "I use vim for everything."})
        out = graph.invoke({"user": "u1", "question": "Which editor should I open? vim?"})
        assert "prefers vim" in out["prompt"] and out["answer"] == "Use vim."
        assert rv.recall("editor vim", "acme/assistant/u1").items
        other = graph.invoke({"user": "u2", "question": "Which editor should I open?"})
        assert "prefers vim" not in other["prompt"]  # the same graph, another user's scope
        assert rv.pages("acme/assistant/u2") == []


def test_async_operations_run_off_the_event_loop(tmp_path: Path) -> None:
    async def scenario(store: ReverieStore) -> list[Any]:
        await asyncio.gather(*(store.aput(("u1", "n"), f"k{i}", {"i": i}) for i in range(5)))
        got = await asyncio.gather(*(store.aget(("u1", "n"), f"k{i}") for i in range(5)))
        return [g.value["i"] for g in got if g is not None]

    with Reverie.open(tmp_path / "brain.db") as rv:
        store = ReverieStore(rv, "acme", "assistant")
        assert asyncio.run(scenario(store)) == [0, 1, 2, 3, 4]
        assert asyncio.run(store.alist_namespaces()) == [("u1", "n")]


@pytest.mark.parametrize(
    "label", ["Ada Lovelace", "zoë", "_hidden", "lg:taken", "a:b/c", "x" * 40, "plain-user"]
)
def test_any_label_names_a_user_and_reads_back(label: str) -> None:
    assert Scope.parse({"tenant": "t", "agent": "a", "user": user_name(label)})
    assert label_of(user_name(label)) == label


def test_labels_with_spaces_are_users_and_values_stay_json(tmp_path: Path) -> None:
    with Reverie.open(tmp_path / "brain.db") as rv:
        store = ReverieStore(rv, "acme", "assistant", user_label=0)
        value = {"fact": "likes green tea", "since": 2021, "tags": ["tea", "green"]}
        store.put(("Ada Lovelace", "prefs"), "drink", value)
        item = store.get(("Ada Lovelace", "prefs"), "drink")
        assert item is not None and item.value == value
        assert store.list_namespaces() == [("Ada Lovelace", "prefs")]
        [page] = rv.pages(f"acme/assistant/{user_name('Ada Lovelace')}")
        claims = [json.loads(c.text) for c in page.revision.claims]
        assert claims == [{"fact": "likes green tea"}, {"since": 2021}, {"tags": ["tea", "green"]}]
        for query in ("green tea", "what does Ada drink? tea since 2021", "tags"):
            hits = store.search(("Ada Lovelace",), query=query)
            assert hits and all(0.0 <= (h.score or 0.0) <= 1.0 for h in hits)


def test_index_false_keeps_an_item_out_of_query_search(tmp_path: Path) -> None:
    with Reverie.open(tmp_path / "brain.db") as rv:
        store = ReverieStore(rv, "acme", "assistant", user_label=0)
        store.put(("u1", "notes"), "seen", {"text": "the user likes espresso"})
        store.put(("u1", "notes"), "raw", {"text": "the user likes espresso a lot"}, index=False)
        store.put(("u1", "notes"), "half", {"text": "espresso", "id": "x-1"}, index=["id"])
        hits = store.search(("u1",), query="espresso")
        assert {h.key for h in hits} == {"seen"}  # "half" holds espresso only where unindexed
        assert {h.key for h in store.search(("u1",), limit=10)} == {"seen", "raw", "half"}
        raw = store.get(("u1", "notes"), "raw")
        assert raw is not None and raw.value == {"text": "the user likes espresso a lot"}
        assert not rv.recall("espresso a lot", "acme/assistant/u1").text.count("a lot")


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2030, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, minutes: float) -> None:
        self.now += timedelta(minutes=minutes)


def test_ttl_expires_items_and_a_read_renews_them(tmp_path: Path) -> None:
    clock = Clock()
    with Reverie.open(tmp_path / "brain.db") as rv:
        store = ReverieStore(rv, "acme", "assistant", clock=clock, ttl={"default_ttl": 10})
        store.put(("s",), "kept", {"v": 1})  # the default TTL: 10 minutes
        store.put(("s",), "short", {"v": 2}, ttl=5)
        store.put(("s",), "forever", {"v": 3}, ttl=None)
        clock.advance(6)
        assert store.get(("s",), "short") is None
        assert store.get(("s",), "kept") is not None  # read at 6 min: now lives to 16
        clock.advance(6)
        assert [i.key for i in store.search(("s",))] == ["forever", "kept"]
        clock.advance(11)
        assert store.get(("s",), "kept", refresh_ttl=False) is None
        assert [i.key for i in store.search(("s",))] == ["forever"]
        assert store.list_namespaces() == [("s",)]
        store.delete(("s",), "forever")
        assert store.list_namespaces() == []
        assert rv.why(rv.pages("acme/assistant")[0].id).revisions  # expired, still explained


def _semantic(texts: list[str]) -> list[list[float]]:
    rows = MiniLMEmbedder().embed(texts)
    return [[float(x) for x in row] for row in rows]


@pytest.mark.skipif(not minilm_available(), reason="needs the bundled MiniLM model")
def test_semantic_search_answers_as_langgraphs_own_store(tmp_path: Path) -> None:
    index: Any = {"dims": 384, "embed": _semantic, "fields": ["text"]}
    reference = InMemoryStore(index=index)
    with Reverie.open(tmp_path / "brain.db") as rv:
        ours = ReverieStore(rv, "acme", "assistant", user_label=0, index=index)
        for store in (reference, ours):
            store.put(("u1", "m"), "editor", {"text": "prefers vim", "n": 1})
            store.put(("u1", "m"), "city", {"text": "lives in Lyon", "n": 2})
            store.put(("u1", "m"), "pet", {"text": "has a cat named Miso", "n": 3})
            store.put(("u1", "m"), "secret", {"text": "uses emacs at night"}, index=False)
            store.put(("u2", "m"), "editor", {"text": "prefers nano"})
        for query in ("which code editor do they like", "where is their home town"):
            want = reference.search(("u1",), query=query, limit=10)
            got = ours.search(("u1",), query=query, limit=10)
            assert [g.key for g in got] == [w.key for w in want]
            for g, w in zip(got, want, strict=True):
                expected = None if w.score is None else max(w.score, 0.0)
                assert g.score == pytest.approx(expected, abs=1e-4)
        assert ours.search(("u1",), query="which code editor do they like")[0].key == "editor"
        [nano] = ours.search(("u2",), query="which code editor do they like")
        assert nano.value == {"text": "prefers nano"}
