"""ReverieStore as LangGraph's BaseStore: the same answers as LangGraph's own InMemoryStore,
and the ``store=`` of a compiled graph whose model is LangChain's scripted chat model.

LangGraph ships no conformance suite for stores (only ``langgraph-checkpoint-conformance``, for
checkpointers), so the reference here is LangGraph's ``InMemoryStore``, run side by side.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, TypedDict

import pytest

from reverie import Reverie

pytest.importorskip("langgraph", reason="needs the langgraph extra (in dev)")
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langgraph.config import get_store
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore, InvalidNamespaceError
from langgraph.store.memory import InMemoryStore

from reverie.integrations.langgraph import ReverieStore

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

        with pytest.raises(InvalidNamespaceError, match="cannot name a user"):
            store.put(("not a user!", "prefs"), "k", {"v": 1})


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


def test_async_operations_run_off_the_event_loop(tmp_path: Path) -> None:
    async def scenario(store: ReverieStore) -> list[Any]:
        await asyncio.gather(*(store.aput(("u1", "n"), f"k{i}", {"i": i}) for i in range(5)))
        got = await asyncio.gather(*(store.aget(("u1", "n"), f"k{i}") for i in range(5)))
        return [g.value["i"] for g in got if g is not None]

    with Reverie.open(tmp_path / "brain.db") as rv:
        store = ReverieStore(rv, "acme", "assistant")
        assert asyncio.run(scenario(store)) == [0, 1, 2, 3, 4]
        assert asyncio.run(store.alist_namespaces()) == [("u1", "n")]
