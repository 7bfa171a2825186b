"""The OpenAI Agents SDK with Reverie: tool calls become episodes, recall goes into the prompt.

One agent object serves every user: the scope of each call comes from the run's own context
(``Runner.run(agent, input, context=...)``, read through ``RunContextWrapper.context`` by
:mod:`reverie.integrations.scoping`: ``user_id``, ``agent_id``, ``run_id``, ``tenant`` or a
whole ``scope``), over the scope the helper was given, which is what a run whose context names
nothing gets.

* :class:`ReverieRunHooks` (``Runner.run(agent, input, hooks=...)``) records each local tool
  call the run makes as one episode: the situation is the user's latest message, the action the
  tool and its arguments, the outcome ``failure`` when the result reads as an error (the same
  rule as the ``coding-agent`` adapter), the result kept as details or error. Ids derive from the
  session and the tool call id, so a replayed run stores nothing twice.
* :func:`recall_instructions` makes dynamic instructions (``Agent(instructions=...)``): the
  base instructions with recall for the user's latest message below them.
* :func:`recall_tool` is a function tool the model can call to search its memory;
  :func:`save_tool` one that saves a fact it was told (an episode the dream cycle distils).
* :class:`ReverieSession` is an SDK ``Session``: the conversation history lives in an inner
  session (an in-memory ``SQLiteSession`` unless one is given), and each answered user turn is
  also an episode of the run's scope (the ``openai-chat`` adapter, ids from the session id and
  the turn's number, so saving the history again stores nothing twice).

Like :class:`reverie.integrations.hook.AgentHook`, nothing here breaks a run: a recall that
fails adds nothing, a record that fails is skipped, each with a logged warning. Needs the
``openai-agents`` extra.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

from agents import Agent, FunctionTool, RunContextWrapper, RunHooks, Tool, function_tool
from agents.items import TResponseInputItem
from agents.memory import Session, SQLiteSession

from reverie.adapters import parse
from reverie.adapters.shared import episode_id, excerpt, looks_failed, text_of
from reverie.integrations.hook import NOTHING_RECALLED, Memory, recall_text, save_fact
from reverie.integrations.scoping import CallScope, call_scope
from reverie.models import ScopeLike

__all__ = [
    "ReverieRunHooks",
    "ReverieSession",
    "latest_user_text",
    "recall_instructions",
    "recall_tool",
    "save_tool",
]

log = logging.getLogger("reverie.integrations.openai_agents")
SOURCE = "openai-agents"


def latest_user_text(context: RunContextWrapper[Any]) -> str:
    """The text of the newest user message in the turn's input (``""`` when there is none)."""
    for item in reversed(getattr(context, "turn_input", None) or []):
        if isinstance(item, dict) and item.get("role") == "user":
            return text_of(item.get("content"))
    return ""


def _scope_of(scope: ScopeLike | None, context: RunContextWrapper[Any] | None) -> CallScope:
    """The scope of one call: ``scope`` refined by the run's context object."""
    return call_scope(scope, context.context if context is not None else None)


def _recall(
    memory: Memory,
    scope: ScopeLike | None,
    context: RunContextWrapper[Any],
    query: str,
    budget: int | None,
) -> str:
    if not query:
        return ""
    return recall_text(memory, query, lambda: _scope_of(scope, context).scope, budget, logger=log)


class ReverieRunHooks(RunHooks[Any]):
    """Run hooks that remember every tool call of a run in the run's scope."""

    def __init__(
        self,
        memory: Memory,
        scope: ScopeLike | None = None,
        *,
        session_id: str | None = None,
        category: str = "tool",
    ) -> None:
        self.memory = memory
        self.scope = scope
        self.session_id = session_id
        self.category = category
        self.task = ""

    async def on_llm_start(
        self,
        context: RunContextWrapper[Any],
        agent: Agent[Any],
        system_prompt: str | None,
        input_items: list[Any],
    ) -> None:
        for item in reversed(input_items):
            if isinstance(item, dict) and item.get("role") == "user":
                self.task = text_of(item.get("content"))
                return

    async def on_tool_end(
        self, context: RunContextWrapper[Any], agent: Agent[Any], tool: Tool, result: object
    ) -> None:
        call_id = str(getattr(context, "tool_call_id", "") or "")
        arguments = str(getattr(context, "tool_arguments", "") or "")
        text = excerpt(str(result), 4000)
        failed = looks_failed(text)
        task = latest_user_text(context) or self.task
        episode: dict[str, Any] = {
            "situation": excerpt(task, 8000) or "(no user message recorded)",
            "action": excerpt(f"{tool.name} {arguments}".strip(), 8000),
            "outcome": "failure" if failed else "success",
            "error" if failed else "outcome_details": text,
            "tools": [tool.name],
            "category": self.category,
            "metadata": {"source": SOURCE, "agent": agent.name, "call_id": call_id},
        }
        try:
            where = _scope_of(self.scope, context)
            session = self.session_id or where.run_id
            if session:
                episode["session_id"] = session
            if call_id:
                episode["id"] = episode_id(where.scope, SOURCE, session or "", call_id)
            self.memory.remember(episode, scope=where.scope)
        except Exception as exc:
            log.warning("reverie remember skipped: %s: %s", type(exc).__name__, exc)


def recall_instructions(
    memory: Memory, scope: ScopeLike | None, base: str, *, budget_tokens: int | None = None
) -> Callable[[RunContextWrapper[Any], Agent[Any]], str]:
    """Dynamic instructions: ``base``, then recall for the user's latest message."""

    def instructions(context: RunContextWrapper[Any], agent: Agent[Any]) -> str:
        recalled = _recall(memory, scope, context, latest_user_text(context), budget_tokens)
        return f"{base}\n\n{recalled}" if recalled else base

    return instructions


def recall_tool(
    memory: Memory, scope: ScopeLike | None = None, *, budget_tokens: int | None = None
) -> FunctionTool:
    """A ``search_memory(query)`` tool: what the agent has learned about ``query``."""

    def search_memory(context: RunContextWrapper[Any], query: str) -> str:
        """Search what you learned in earlier runs: lessons, fixes, facts and preferences.

        Args:
            query: What you want to know, in a few words.
        """
        return _recall(memory, scope, context, query, budget_tokens) or NOTHING_RECALLED

    return function_tool(search_memory)


def save_tool(memory: Any, scope: ScopeLike | None = None) -> FunctionTool:
    """A ``save_memory(fact)`` tool: one episode of the run's scope, in the user's words, which
    the dream cycle distils like any other (``memory`` needs the facade's ``add``)."""

    def save_memory(context: RunContextWrapper[Any], fact: str) -> str:
        """Save something worth remembering in later runs: a fact, a preference, a lesson.

        Args:
            fact: What to remember, as one short statement.
        """
        return save_fact(memory, lambda: _scope_of(scope, context), fact, SOURCE, log)

    return function_tool(save_memory)


def _wire(item: Any) -> dict[str, str] | None:
    """A user or assistant message of the history as a chat message; None for other items
    (tool calls are the run hooks' to record)."""
    if not isinstance(item, dict) or item.get("role") not in ("user", "assistant"):
        return None
    text = text_of(item.get("content"))
    return {"role": str(item["role"]), "content": text} if text else None


class ReverieSession:
    """An SDK ``Session`` whose answered turns are also episodes of the run's scope.

    The SDK hands each method the run's context (``wrapper``), so one session object records
    into the scope its run names; without a context the default ``scope`` is used. Clearing or
    popping history changes the inner session only: episodes are evidence (erasing them is
    ``Reverie.forget``).
    """

    def __init__(
        self,
        memory: Any,
        scope: ScopeLike | None = None,
        *,
        session_id: str,
        history: Session | None = None,
    ) -> None:
        self.memory = memory
        self.scope = scope
        self.session_id = session_id
        self.session_settings = None
        self.history: Session = history or SQLiteSession(session_id)

    async def get_items(
        self, limit: int | None = None, wrapper: RunContextWrapper[Any] | None = None
    ) -> list[TResponseInputItem]:
        return await self.history.get_items(limit)

    async def add_items(
        self, items: list[TResponseInputItem], wrapper: RunContextWrapper[Any] | None = None
    ) -> None:
        await self.history.add_items(items)
        if any(isinstance(i, dict) and i.get("role") == "assistant" for i in items):
            await self._record(wrapper)

    async def pop_item(
        self, wrapper: RunContextWrapper[Any] | None = None
    ) -> TResponseInputItem | None:
        return await self.history.pop_item()

    async def clear_session(self, wrapper: RunContextWrapper[Any] | None = None) -> None:
        await self.history.clear_session()

    async def _record(self, wrapper: RunContextWrapper[Any] | None) -> None:
        """The history's answered turns as episodes (the turns stored before are known by id)."""
        messages = [m for m in map(_wire, await self.history.get_items()) if m]
        while messages and messages[-1]["role"] != "assistant":
            messages.pop()  # a turn still waiting for its answer is recorded once answered
        if not messages:
            return
        try:
            where = _scope_of(self.scope, wrapper)
            line = json.dumps({"id": self.session_id, "messages": messages}, ensure_ascii=False)
            items = parse("openai-chat", [(1, line)], scope=where.scope).items
            for item in items:
                item["session_id"] = self.session_id
                item["metadata"] = {**item["metadata"], "via": SOURCE}
            self.memory.ingest(items, scope=where.scope)
        except Exception as exc:
            log.warning("reverie session record skipped: %s: %s", type(exc).__name__, exc)
