"""The ``LLM`` protocol: one method that turns a system and a user prompt into a JSON object.

Every client (OpenAI-compatible, Anthropic, the scripted fake behind :mod:`.fake_server`) honours
the same contract, so a distiller never knows which provider answered:

* ``schema`` is a JSON schema the answer must follow; clients use the provider's structured
  output where it exists and always restate the schema in the prompt otherwise.
* ``check`` (optional) returns the problems of a parsed answer, empty when it is acceptable. A
  client gives the model exactly ONE repair turn (the problems quoted back), then raises
  :class:`reverie.errors.LLMBadOutput`. Tokens of both turns are counted.
* Transport failures (timeouts, 429/5xx after retries, refused connections) raise
  :class:`reverie.errors.LLMError`; nothing is retried forever.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

__all__ = ["LLM", "Check", "LLMResponse", "MeteredDistiller", "ModelUsage"]

Check = Callable[[dict[str, Any]], list[str]]
"""Problems of a parsed answer; an empty list accepts it."""


@dataclass(frozen=True)
class LLMResponse:
    """A parsed JSON answer and what it cost, as the provider reported it."""

    data: dict[str, Any]
    input_tokens: int
    output_tokens: int
    latency_s: float
    model: str


class LLM(Protocol):
    """A model that answers with one JSON object. See the module docstring for the contract."""

    model: str

    def complete_json(
        self,
        system: str,
        user: str,
        schema: dict[str, Any],
        *,
        max_tokens: int,
        check: Check | None = None,
    ) -> LLMResponse:
        """Return the model's answer to ``user`` as a JSON object following ``schema``."""
        ...

    def close(self) -> None: ...


@dataclass
class ModelUsage:
    """Model cost of some work: calls made, answers served from the cache, tokens, latency."""

    calls: int = 0
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0

    def add(self, response: LLMResponse) -> None:
        self.calls += 1
        self.input_tokens += response.input_tokens
        self.output_tokens += response.output_tokens
        self.latency_s += response.latency_s


@runtime_checkable
class MeteredDistiller(Protocol):
    """A distiller that reports its model usage; the cycle copies it into the cycle report."""

    def take_usage(self) -> ModelUsage:
        """Usage since the last call, in this thread, and reset it."""
        ...
