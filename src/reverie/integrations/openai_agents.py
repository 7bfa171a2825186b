"""The OpenAI Agents SDK with Reverie: tool calls become episodes, recall goes into the prompt.

* :class:`ReverieRunHooks` (``Runner.run(agent, input, hooks=...)``) records each local tool
  call the run makes as one episode: the situation is the user's latest message, the action the
  tool and its arguments, the outcome ``failure`` when the result reads as an error (the same
  rule as the ``coding-agent`` adapter), the result kept as details or error. Ids derive from the
  session and the tool call id, so a replayed run stores nothing twice.
* :func:`recall_instructions` makes dynamic instructions (``Agent(instructions=...)``): the
  base instructions with recall for the user's latest message below them.
* :func:`recall_tool` is a function tool the model can call to search its memory.

Like :class:`reverie.integrations.hook.AgentHook`, nothing here breaks a run: a recall that
fails adds nothing, a record that fails is skipped, each with a logged warning. Needs the
``openai-agents`` extra.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from agents import Agent, FunctionTool, RunContextWrapper, RunHooks, Tool, function_tool

from reverie.adapters.base import episode_id, excerpt, looks_failed, text_of
from reverie.integrations.hook import Memory, recall_text
from reverie.models import Scope, ScopeLike

__all__ = ["ReverieRunHooks", "latest_user_text", "recall_instructions", "recall_tool"]

log = logging.getLogger("reverie.integrations.openai_agents")
SOURCE = "openai-agents"


def latest_user_text(context: RunContextWrapper[Any]) -> str:
    """The text of the newest user message in the turn's input (``""`` when there is none)."""
    for item in reversed(getattr(context, "turn_input", None) or []):
        if isinstance(item, dict) and item.get("role") == "user":
            return text_of(item.get("content"))
    return ""


def _recall(memory: Memory, scope: ScopeLike, query: str, budget: int | None) -> str:
    return recall_text(memory, query, scope, budget, logger=log) if query else ""


class ReverieRunHooks(RunHooks[Any]):
    """Run hooks that remember every tool call of a run in ``scope``."""

    def __init__(
        self,
        memory: Memory,
        scope: ScopeLike,
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
        episode: dict[str, Any] = {
            "situation": excerpt(self.task, 8000) or "(no user message recorded)",
            "action": excerpt(f"{tool.name} {arguments}".strip(), 8000),
            "outcome": "failure" if failed else "success",
            "error" if failed else "outcome_details": text,
            "tools": [tool.name],
            "category": self.category,
            "metadata": {"source": SOURCE, "agent": agent.name, "call_id": call_id},
        }
        if self.session_id:
            episode["session_id"] = self.session_id
        try:
            scope = Scope.parse(self.scope)
            if call_id:
                episode["id"] = episode_id(scope, SOURCE, self.session_id or "", call_id)
            self.memory.remember(episode, scope=scope)
        except Exception as exc:
            log.warning("reverie remember skipped: %s: %s", type(exc).__name__, exc)


def recall_instructions(
    memory: Memory, scope: ScopeLike, base: str, *, budget_tokens: int | None = None
) -> Callable[[RunContextWrapper[Any], Agent[Any]], str]:
    """Dynamic instructions: ``base``, then recall for the user's latest message."""

    def instructions(context: RunContextWrapper[Any], agent: Agent[Any]) -> str:
        recalled = _recall(memory, scope, latest_user_text(context), budget_tokens)
        return f"{base}\n\n{recalled}" if recalled else base

    return instructions


def recall_tool(
    memory: Memory, scope: ScopeLike, *, budget_tokens: int | None = None
) -> FunctionTool:
    """A ``search_memory(query)`` tool: what the agent has learned about ``query``."""

    def search_memory(query: str) -> str:
        """Search what you learned in earlier runs: lessons, fixes, facts and preferences.

        Args:
            query: What you want to know, in a few words.
        """
        return _recall(memory, scope, query, budget_tokens) or "Nothing remembered about that."

    return function_tool(search_memory)
