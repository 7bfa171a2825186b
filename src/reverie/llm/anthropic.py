"""A client for the Anthropic Messages API.

Structured output comes from a forced tool call: the schema is the ``input_schema`` of one tool
and ``tool_choice`` names it, so the answer arrives as the tool's ``input`` object. A reply that
carries text instead is parsed as JSON. A repair turn answers the tool call with a
``tool_result`` marked ``is_error`` that lists the problems.

Configuration: arguments, else ``REVERIE_LLM_BASE_URL`` (default ``https://api.anthropic.com``),
``REVERIE_LLM_MODEL`` (required) and ``REVERIE_LLM_API_KEY``.
"""

from __future__ import annotations

from typing import Any

from reverie.llm._http import JSONClient, Messages, Turn, parse_json_object, repair_text

__all__ = ["API_VERSION", "DEFAULT_BASE_URL", "TOOL_NAME", "AnthropicLLM"]

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
TOOL_NAME = "answer"


class AnthropicLLM(JSONClient):
    """:class:`reverie.llm.protocol.LLM` over ``POST {base_url}/v1/messages``."""

    default_base_url = DEFAULT_BASE_URL

    def _opening(self, system: str, user: str, schema: dict[str, Any]) -> Messages:
        return [{"role": "user", "content": user}]

    def _turn(self, system: str, messages: Messages, schema: dict[str, Any], limit: int) -> Turn:
        body = {
            "model": self.model,
            "max_tokens": limit,
            "temperature": self.temperature,
            "system": system,
            "messages": messages,
            "tools": [
                {
                    "name": TOOL_NAME,
                    "description": "Submit the answer. Its input is the whole answer.",
                    "input_schema": schema,
                }
            ],
            "tool_choice": {"type": "tool", "name": TOOL_NAME},
        }
        headers = {"x-api-key": self._api_key, "anthropic-version": API_VERSION}
        return parse_message(self._poster.post(f"{self.base_url}/v1/messages", body, headers))

    def _repair(self, messages: Messages, turn: Turn) -> Messages:
        return _answer_tool_call(messages, turn)


def parse_message(data: dict[str, Any]) -> Turn:
    """The forced tool call's input (or JSON text) of a Messages reply, and its token usage."""
    usage = data.get("usage") or {}
    tokens = int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0)
    blocks = data.get("content")
    if not isinstance(blocks, list):
        return Turn(None, ["the reply has no content blocks"], [], *tokens)
    for block in blocks:
        if isinstance(block, dict) and block.get("type") == "tool_use":
            value = block.get("input")
            if isinstance(value, dict):
                return Turn(value, [], blocks, *tokens)
            return Turn(None, ["the tool call's input is not an object"], blocks, *tokens)
    text = "".join(b.get("text", "") for b in blocks if isinstance(b, dict))
    value, problem = parse_json_object(text)
    return Turn(value, [problem] if problem else [], blocks, *tokens)


def _answer_tool_call(messages: Messages, turn: Turn) -> Messages:
    """Answer the forced tool call with an error result that lists the problems."""
    blocks = turn.raw if isinstance(turn.raw, list) else []
    calls = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"]
    note = repair_text(turn.problems)
    if not blocks:  # nothing to answer: restate the request with the problems appended
        last = messages[-1]
        return [*messages[:-1], {"role": "user", "content": f"{last['content']}\n\n{note}"}]
    reply: list[dict[str, Any]] | str = note
    if calls:
        reply = [
            {
                "type": "tool_result",
                "tool_use_id": c.get("id", ""),
                "is_error": True,
                "content": note,
            }
            for c in calls
        ]
    return [*messages, {"role": "assistant", "content": blocks}, {"role": "user", "content": reply}]
