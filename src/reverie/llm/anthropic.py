"""A client for the Anthropic Messages API.

Structured output comes from a forced tool call: the schema is the ``input_schema`` of one tool
and ``tool_choice`` names it, so the answer arrives as the tool's ``input`` object. A reply that
carries text instead is parsed as JSON. A repair turn answers the tool call with a
``tool_result`` marked ``is_error`` that lists the problems.

Configuration: arguments, else ``REVERIE_LLM_BASE_URL`` (default ``https://api.anthropic.com``),
``REVERIE_LLM_MODEL`` (required) and ``REVERIE_LLM_API_KEY``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from reverie.llm._http import (
    HTTPSettings,
    Poster,
    Turn,
    converse,
    env_or,
    parse_json_object,
    repair_text,
    require_httpx,
)
from reverie.llm.base import Check, LLMResponse

__all__ = ["API_VERSION", "DEFAULT_BASE_URL", "TOOL_NAME", "AnthropicLLM"]

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
TOOL_NAME = "answer"


class AnthropicLLM:
    """:class:`reverie.llm.base.LLM` over ``POST {base_url}/v1/messages``."""

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        *,
        temperature: float = 0.0,
        settings: HTTPSettings | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        httpx = require_httpx()
        self.base_url = env_or(
            base_url, "REVERIE_LLM_BASE_URL", field_name="base_url", default=DEFAULT_BASE_URL
        ).rstrip("/")
        self.model = env_or(model, "REVERIE_LLM_MODEL", field_name="model")
        self._api_key = api_key or os.environ.get("REVERIE_LLM_API_KEY") or ""
        self.temperature = temperature
        self.settings = settings or HTTPSettings()
        timeout = httpx.Timeout(self.settings.timeout_s, connect=self.settings.connect_timeout_s)
        self._poster = Poster(httpx.Client(timeout=timeout), self.settings, sleep)

    def close(self) -> None:
        self._poster.client.close()

    def complete_json(
        self,
        system: str,
        user: str,
        schema: dict[str, Any],
        *,
        max_tokens: int,
        check: Check | None = None,
    ) -> LLMResponse:
        messages = [{"role": "user", "content": user}]
        return converse(
            lambda m: self._turn(system, m, schema, max_tokens),
            messages,
            _repair,
            check,
            self.model,
        )

    def _turn(
        self, system: str, messages: list[dict[str, Any]], schema: dict[str, Any], limit: int
    ) -> Turn:
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


def _repair(messages: list[dict[str, Any]], turn: Turn) -> list[dict[str, Any]]:
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
