"""Pydantic AI with Reverie: recall in the agent's instructions, a run's tool calls as episodes.

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

from pydantic_ai import RunContext
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
from reverie.adapters.base import text_of
from reverie.intake import IngestResult
from reverie.integrations.hook import Memory, recall_text
from reverie.models import Scope, ScopeLike

__all__ = ["episodes_of", "recall_instructions", "remember_run"]

log = logging.getLogger("reverie.integrations.pydantic_ai")
SOURCE = "pydantic-ai"


def recall_instructions(
    memory: Memory, scope: ScopeLike, *, budget_tokens: int | None = None
) -> Callable[[RunContext[Any]], str]:
    """Instructions holding recall for the run's prompt (``""`` when there is none)."""

    def instructions(ctx: RunContext[Any]) -> str:
        prompt = ctx.prompt if isinstance(ctx.prompt, str) else text_of(ctx.prompt)
        return recall_text(memory, prompt, scope, budget_tokens, logger=log) if prompt else ""

    return instructions


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
    memory: Any, scope: ScopeLike, messages: Iterable[ModelMessage], *, session_id: str = ""
) -> IngestResult | None:
    """Store the run's tool calls in ``scope``; None (and a warning) if the store fails."""
    try:
        result: IngestResult = memory.ingest(
            episodes_of(messages, scope, session_id=session_id), scope=scope
        )
    except Exception as exc:
        log.warning("reverie ingest skipped: %s: %s", type(exc).__name__, exc)
        return None
    return result
