"""Pydantic AI with Reverie: recall in the agent's instructions, a run's tool calls as episodes.

One agent object serves every user: the scope of each run comes from its ``deps``
(``agent.run(prompt, deps=...)``, read by :mod:`reverie.integrations.scoping`: ``user_id``,
``agent_id``, ``run_id``, ``tenant`` or a whole ``scope``, as keys or attributes), over the scope
the helper was given, which is what a run whose deps name nothing gets.

* :func:`reverie_toolset` is a ``FunctionToolset``: recall for the run's prompt in its
  instructions, and ``search_memory`` / ``save_memory`` tools, all in the run's scope
  (``Agent(toolsets=[reverie_toolset(rv, "acme/analyst")])``).
* :func:`recall_instructions` is a dynamic instructions function
  (``Agent(instructions=...)`` or ``agent.instructions(...)``): recall for the run's user prompt.
* :func:`remember_run` stores what a run did (``result.all_messages()``): one episode per tool
  call, its result (or the retry the tool asked for) as the outcome, read by the ``coding-agent``
  adapter's rules, so failure detection and content-derived ids are the same as for a coding
  agent's log (a run remembered twice stores nothing twice).

Neither raises into the agent: a failing recall adds nothing, a failing record returns None,
each with a logged warning. Needs the ``pydantic-ai`` extra.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from pydantic_ai import FunctionToolset, RunContext
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from reverie.adapters import parse
from reverie.adapters.shared import text_of
from reverie.intake import IngestResult
from reverie.integrations.hook import NOTHING_RECALLED, Memory, recall_text, save_fact
from reverie.integrations.scoping import CallScope, call_scope
from reverie.models import Scope, ScopeLike

__all__ = ["episodes_of", "recall_instructions", "remember_run", "reverie_toolset"]

log = logging.getLogger("reverie.integrations.pydantic_ai")
SOURCE = "pydantic-ai"


def _scope_of(scope: ScopeLike | None, ctx: RunContext[Any]) -> CallScope:
    """The run's scope (``scope`` refined by its deps) and run id (the deps', else the run's)."""
    where = call_scope(scope, ctx.deps)
    return CallScope(where.scope, where.run_id or ctx.run_id)


def _recall(
    memory: Memory, scope: ScopeLike | None, ctx: RunContext[Any], query: str, budget: int | None
) -> str:
    if not query:
        return ""
    return recall_text(memory, query, lambda: _scope_of(scope, ctx).scope, budget, logger=log)


def _prompt(ctx: RunContext[Any]) -> str:
    return ctx.prompt if isinstance(ctx.prompt, str) else text_of(ctx.prompt)


def recall_instructions(
    memory: Memory, scope: ScopeLike | None = None, *, budget_tokens: int | None = None
) -> Callable[[RunContext[Any]], str]:
    """Instructions holding recall for the run's prompt (``""`` when there is none)."""

    def instructions(ctx: RunContext[Any]) -> str:
        return _recall(memory, scope, ctx, _prompt(ctx), budget_tokens)

    return instructions


def reverie_toolset(
    memory: Any, scope: ScopeLike | None = None, *, budget_tokens: int | None = None
) -> FunctionToolset[Any]:
    """Recall in the instructions, and tools to search and to save, in each run's scope
    (``memory`` needs the facade's ``recall`` and ``add``)."""
    toolset: FunctionToolset[Any] = FunctionToolset(
        instructions=recall_instructions(memory, scope, budget_tokens=budget_tokens)
    )

    @toolset.tool
    def search_memory(ctx: RunContext[Any], query: str) -> str:
        """Search what you learned in earlier runs: lessons, fixes, facts and preferences.

        Args:
            query: What you want to know, in a few words.
        """
        return _recall(memory, scope, ctx, query, budget_tokens) or NOTHING_RECALLED

    @toolset.tool
    def save_memory(ctx: RunContext[Any], fact: str) -> str:
        """Save something worth remembering in later runs: a fact, a preference, a lesson.

        Args:
            fact: What to remember, as one short statement.
        """
        return save_fact(memory, lambda: _scope_of(scope, ctx), fact, SOURCE, log)

    return toolset


def _events(messages: Iterable[ModelMessage], session: str) -> Iterator[dict[str, Any]]:
    """The run as the ``coding-agent`` adapter's flat events."""
    for message in messages:
        for part in message.parts:
            at = {"timestamp": part.timestamp.isoformat()} if hasattr(part, "timestamp") else {}
            if isinstance(message, ModelRequest) and isinstance(part, UserPromptPart):
                text = part.content if isinstance(part.content, str) else text_of(part.content)
                yield {"type": "user", "text": text, "session_id": session, **at}
            elif isinstance(message, ModelResponse) and isinstance(part, ToolCallPart):
                yield {
                    "type": "tool_call",
                    "id": part.tool_call_id,
                    "name": part.tool_name,
                    "input": part.args_as_dict(),
                    "session_id": session,
                }
            elif isinstance(part, ToolReturnPart | RetryPromptPart) and part.tool_name:
                yield _result(part)


def _result(part: ToolReturnPart | RetryPromptPart) -> dict[str, Any]:
    """A tool's answer; a retry the tool asked for (bad arguments, ``ModelRetry``) failed."""
    if isinstance(part, RetryPromptPart):
        output, failed = part.model_response(), True
    else:
        output, failed = part.model_response_str(), part.outcome != "success"
    return {
        "type": "tool_result",
        "call_id": part.tool_call_id,
        "output": output,
        "is_error": failed,
    }


def episodes_of(
    messages: Iterable[ModelMessage], scope: ScopeLike, *, session_id: str = ""
) -> list[dict[str, Any]]:
    """One episode object per tool call of the run, with ids of ``scope``."""
    lines = [(n, json.dumps(e, default=str)) for n, e in enumerate(_events(messages, session_id))]
    items = parse("coding-agent", lines, scope=Scope.parse(scope)).items
    for item in items:
        item["category"] = "tool"
        item["metadata"] = {**item["metadata"], "source": SOURCE}
    return items


def remember_run(
    memory: Any,
    scope: ScopeLike | None,
    messages: Iterable[ModelMessage],
    *,
    session_id: str = "",
    deps: object = None,
) -> IngestResult | None:
    """Store the run's tool calls in ``scope`` refined by the run's ``deps``; None (and a
    warning) if the store fails."""
    try:
        where = call_scope(scope, deps)
        session = session_id or where.run_id or ""
        result: IngestResult = memory.ingest(
            episodes_of(messages, where.scope, session_id=session), scope=where.scope
        )
    except Exception as exc:
        log.warning("reverie ingest skipped: %s: %s", type(exc).__name__, exc)
        return None
    return result
