"""A client for OpenAI-compatible chat-completions servers: OpenAI, vLLM, Ollama, llama.cpp
server, LM Studio.

Structured output is asked for as ``response_format: {"type": "json_schema"}``. A server that
refuses that (HTTP 400/422) is asked again with ``{"type": "json_object"}`` and then with no
response format at all; the client remembers the level that worked. The schema is always restated
in the system prompt, so every level gets the same instructions, and every answer is parsed and
checked here: one repair turn, then :class:`reverie.errors.LLMBadOutput`.

Configuration: arguments, else ``REVERIE_LLM_BASE_URL`` (default ``https://api.openai.com/v1``),
``REVERIE_LLM_MODEL`` (required) and ``REVERIE_LLM_API_KEY`` (optional: local servers need none).
"""

from __future__ import annotations

import json
from typing import Any, Literal, Unpack

from reverie.llm._http import (
    ClientOptions,
    JSONClient,
    Messages,
    StatusError,
    Turn,
    parse_json_object,
    repair_text,
)

__all__ = ["DEFAULT_BASE_URL", "JsonMode", "OpenAICompatLLM"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
JsonMode = Literal["json_schema", "json_object", "none"]
_DOWNGRADE: dict[str, JsonMode] = {"json_schema": "json_object", "json_object": "none"}
_FORMAT_REFUSED = frozenset({400, 422})


def with_schema(system: str, schema: dict[str, Any]) -> str:
    """The system prompt with the answer's JSON schema restated at its end."""
    text = json.dumps(schema, separators=(",", ":"), sort_keys=True)
    return f"{system}\n\nAnswer with ONE JSON object that follows this JSON schema:\n{text}"


class OpenAICompatLLM(JSONClient):
    """:class:`reverie.llm.protocol.LLM` over ``POST {base_url}/chat/completions``."""

    default_base_url = DEFAULT_BASE_URL

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        *,
        json_mode: JsonMode = "json_schema",
        **options: Unpack[ClientOptions],
    ) -> None:
        super().__init__(base_url, model, api_key, **options)
        self.json_mode: JsonMode = json_mode

    def _opening(self, system: str, user: str, schema: dict[str, Any]) -> Messages:
        return [
            {"role": "system", "content": with_schema(system, schema)},
            {"role": "user", "content": user},
        ]

    def _turn(self, system: str, messages: Messages, schema: dict[str, Any], limit: int) -> Turn:
        body = {
            "model": self.model,
            "messages": messages,
            "max_tokens": limit,
            "temperature": self.temperature,
        }
        return parse_choice(self._post(body, schema))

    def _repair(self, messages: Messages, turn: Turn) -> Messages:
        return [
            *messages,
            {"role": "assistant", "content": turn.raw},
            {"role": "user", "content": repair_text(turn.problems)},
        ]

    def _post(self, body: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        url = f"{self.base_url}/chat/completions"
        while True:
            try:
                return self._poster.post(url, {**body, **_format(self.json_mode, schema)}, headers)
            except StatusError as exc:
                if exc.status not in _FORMAT_REFUSED or self.json_mode == "none":
                    raise
                self.json_mode = _DOWNGRADE[self.json_mode]


def _format(mode: JsonMode, schema: dict[str, Any]) -> dict[str, Any]:
    if mode == "json_schema":
        spec = {"name": "answer", "schema": schema, "strict": False}
        return {"response_format": {"type": "json_schema", "json_schema": spec}}
    if mode == "json_object":
        return {"response_format": {"type": "json_object"}}
    return {}


def parse_choice(data: dict[str, Any]) -> Turn:
    """The JSON object in ``choices[0].message.content`` and the reported token usage."""
    usage = data.get("usage") or {}
    tokens = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
    try:
        message = data["choices"][0]["message"]
    except (KeyError, IndexError, TypeError):
        return Turn(None, ["the reply has no choices[0].message"], "", *tokens)
    if message.get("refusal"):
        return Turn(None, [f"the model refused: {message['refusal']}"], "", *tokens)
    content = message.get("content")
    if not isinstance(content, str):
        return Turn(None, ["the reply's message has no text content"], "", *tokens)
    value, problem = parse_json_object(content)
    return Turn(value, [problem] if problem else [], content, *tokens)
