"""A LangGraph graph whose long-term store is Reverie: one scope per user, items as pages.

Runs offline: ``pip install 'reverie[langgraph]' && python examples/langgraph_store.py``. The
chat model is LangChain's scripted ``FakeListChatModel``; swap in any chat model.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TypedDict

from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langgraph.config import get_store
from langgraph.graph import END, START, StateGraph

from reverie import Reverie
from reverie.integrations.langgraph import ReverieStore


class State(TypedDict, total=False):
    user: str
    message: str
    reply: str


def build(store: ReverieStore, model: FakeListChatModel):  # type: ignore[no-untyped-def]
    def chat(state: State) -> State:
        memories = get_store().search((state["user"], "facts"), query=state["message"])
        known = "\n".join(m.value["fact"] for m in memories)
        if state["message"].startswith("remember:"):
            fact = state["message"].removeprefix("remember:").strip()
            get_store().put(
                (state["user"], "facts"), "-".join(fact.lower().split()[:4]), {"fact": fact}
            )
        prompt = f"Known facts:\n{known}\n\nUser: {state['message']}"
        return {"reply": str(model.invoke(prompt).content)}

    graph = StateGraph(State)
    graph.add_node("chat", chat)
    graph.add_edge(START, "chat")
    graph.add_edge("chat", END)
    return graph.compile(store=store)


def main(db: Path | None = None) -> list[str]:
    path = db or Path(tempfile.mkdtemp(prefix="reverie-langgraph-")) / "brain.db"
    with Reverie.open(path) as rv:
        store = ReverieStore(rv, "acme", "assistant", user_label=0)  # namespace[0] is the user
        graph = build(store, FakeListChatModel(responses=["Noted.", "Your cat is Miso."]))
        replies = [
            graph.invoke({"user": "ana", "message": "remember: my cat is called Miso"})["reply"],
            graph.invoke({"user": "ana", "message": "what is my cat called?"})["reply"],
        ]
        for page in rv.pages("acme/assistant/ana"):
            print(f"{page.title}: {page.body}")
    return replies


if __name__ == "__main__":
    print(main())
