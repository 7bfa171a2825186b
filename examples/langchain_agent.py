"""Reverie around a LangChain chain: recall goes into the system prompt, each turn is remembered.

Runs offline: ``pip install 'langchain-core>=0.3' && python examples/langchain_agent.py``. The chat
model here is LangChain's scripted ``FakeListChatModel`` so the example needs no API key; swap in
``ChatOpenAI``, ``ChatAnthropic`` or ``ChatOllama`` and nothing else changes.

The wiring is two runnables: ``recall`` fills the prompt's ``memory`` slot from Reverie before the
model runs, and ``remember`` records the turn after it. Both degrade to no-ops on failure
(:class:`reverie.integrations.hook.AgentHook`), so the chain never breaks because of its memory.
"""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import Runnable, RunnableLambda, RunnablePassthrough

from reverie import Reverie
from reverie.integrations.hook import AgentHook, Turn
from reverie.recall import MODEL_GUIDANCE

SCOPE = "acme/support-bot"
PROMPT = ChatPromptTemplate.from_messages(
    [
        ("system", f"You are a support agent. {MODEL_GUIDANCE}\n{{memory}}"),
        ("human", "{question}"),
    ]
)


def build_chain(hook: AgentHook, model: Any) -> Runnable[dict[str, str], str]:
    """question -> answer, with Reverie's recall in the prompt and the turn remembered after."""
    recall = RunnablePassthrough.assign(memory=lambda x: hook.before(x["question"]))
    answer = PROMPT | model | StrOutputParser()

    def remember(inputs: dict[str, Any]) -> str:
        reply: str = inputs["answer"]
        solved = "refund" in reply.lower()
        lesson = "Refunds for duplicate charges go through the billing portal, not email."
        turn = Turn(inputs["question"], inputs["memory"], action=f"answered: {reply}")
        turn.outcome = "success" if solved else "failure"
        turn.lesson = lesson if not solved else None
        turn.error = None if solved else "customer reopened the ticket"
        hook.after(turn)
        return reply

    return recall | RunnablePassthrough.assign(answer=answer) | RunnableLambda(remember)


def main(db: Path | None = None) -> list[str]:
    path = db or Path(tempfile.mkdtemp(prefix="reverie-langchain-")) / "brain.db"
    replies = ["Please email billing.", "Please email billing.", "Refund it in the billing portal."]
    with Reverie.open(path) as rv:
        hook = AgentHook(rv, SCOPE, category="billing", session_id="langchain-example")
        chain = build_chain(hook, FakeListChatModel(responses=replies))
        question = "I was charged twice for my subscription, can I get a refund?"
        answers = [chain.invoke({"question": question}) for _ in range(2)]
        report = rv.dream(SCOPE, now=datetime(2026, 11, 30, 3, 0, tzinfo=UTC))
        print(f"dream: {report.created} page(s) from {report.episodes_marked} episodes")
        print("recall for the next turn:\n" + hook.before(question))
        answers.append(chain.invoke({"question": question}))
        for answer in answers:
            print("agent:", answer)
    return answers


if __name__ == "__main__":
    main()
