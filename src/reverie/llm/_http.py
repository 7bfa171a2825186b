"""What both HTTP clients share: settings, retries with backoff, a concurrency cap, JSON parsing,
and :class:`JSONClient`, the base of every LLM client (configuration, ask then repair once).

Retry rules: a timeout, a refused or dropped connection, 408, 409, 429 and every 5xx are retried up
to ``max_retries`` times, waiting ``Retry-After`` when the server sends one (capped at
``max_backoff_s``) and ``backoff_s * 2**attempt`` otherwise. Any other status is a configuration
problem (bad key, unknown model) and fails at once. A semaphore caps the requests in flight per
client, across threads; the wait between retries happens outside it.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any, ClassVar, TypedDict

from reverie.errors import InvalidInput, LLMBadOutput, LLMError, MissingExtra
from reverie.llm.protocol import Check, LLMResponse

if TYPE_CHECKING:
    import httpx

__all__ = [
    "ClientOptions",
    "HTTPSettings",
    "JSONClient",
    "Poster",
    "StatusError",
    "Turn",
    "converse",
    "env_or",
    "parse_json_object",
    "repair_text",
    "require_httpx",
]

Messages = list[dict[str, Any]]

_RETRY_STATUS = frozenset({408, 409, 429})
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.S)


def require_httpx() -> Any:
    """The ``httpx`` module, or :class:`MissingExtra` naming the ``llm`` extra."""
    try:
        import httpx  # noqa: PLC0415 (extra: llm)
    except ImportError:
        raise MissingExtra("httpx", "llm") from None
    return httpx


def env_or(value: str | None, *names: str, field_name: str, default: str | None = None) -> str:
    """``value``, else the first environment variable of ``names`` that is set, else ``default``."""
    if value:
        return value
    for name in names:
        if os.environ.get(name):
            return os.environ[name]
    if default is not None:
        return default
    raise InvalidInput(field_name, f"not configured; pass it or set {names[0]}")


class StatusError(LLMError):
    """A status that retrying will not fix (400, 401, 404, ...); ``status`` is the code."""

    def __init__(self, message: str, status: int) -> None:
        self.status = status
        super().__init__(message)


@dataclass(frozen=True)
class HTTPSettings:
    """Timeouts, retries and the concurrency cap of one client."""

    timeout_s: float = 120.0
    connect_timeout_s: float = 10.0
    max_retries: int = 3
    backoff_s: float = 1.0
    max_backoff_s: float = 60.0
    concurrency: int = 4


@dataclass
class Poster:
    """POSTs JSON with the retry rules of the module docstring."""

    client: httpx.Client
    settings: HTTPSettings
    sleep: Callable[[float], None] = time.sleep
    _slots: threading.Semaphore = field(init=False)

    def __post_init__(self) -> None:
        self._slots = threading.Semaphore(max(1, self.settings.concurrency))

    def post(self, url: str, body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        """The JSON body of the first 2xx answer; :class:`LLMError` when retries run out."""
        last, wait = "no attempt made", 0.0
        for attempt in range(self.settings.max_retries + 1):
            if attempt:
                self.sleep(wait)
            outcome = self._attempt(url, body, headers, attempt)
            if isinstance(outcome, dict):
                return outcome
            last, wait = outcome
        raise LLMError(f"{url} failed after {self.settings.max_retries + 1} attempts: {last}")

    def _attempt(
        self, url: str, body: dict[str, Any], headers: dict[str, str], attempt: int
    ) -> dict[str, Any] | tuple[str, float]:
        """The answer, or (why it failed, how long to wait) when it may be retried."""
        httpx = require_httpx()
        try:
            with self._slots:
                response = self.client.post(url, json=body, headers=headers)
        except httpx.TransportError as exc:  # timeouts, refused and dropped connections
            return f"{type(exc).__name__}: {exc}", self._backoff(attempt)
        if response.is_success:
            return _json_body(response)
        last = f"HTTP {response.status_code}: {response.text[:300]}"
        if not _retryable(response.status_code):
            raise StatusError(f"{url} answered {last}", response.status_code)
        after = self._retry_after(response)
        return last, self._backoff(attempt) if after is None else after

    def _backoff(self, attempt: int) -> float:
        return min(self.settings.max_backoff_s, self.settings.backoff_s * float(2**attempt))

    def _retry_after(self, response: httpx.Response) -> float | None:
        seconds = retry_after_seconds(response.headers.get("retry-after"), time.time())
        return None if seconds is None else min(seconds, self.settings.max_backoff_s)


def _retryable(status: int) -> bool:
    return status in _RETRY_STATUS or status >= 500


def _json_body(response: httpx.Response) -> dict[str, Any]:
    try:
        data = response.json()
    except ValueError as exc:
        raise LLMError(f"the server answered {response.status_code} with non-JSON: {exc}") from None
    if not isinstance(data, dict):
        raise LLMError("the server answered with JSON that is not an object")
    return data


def retry_after_seconds(value: str | None, now: float) -> float | None:
    """Seconds to wait for a ``Retry-After`` header (seconds or an HTTP date); None if absent."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, float(parsedate_to_datetime(value).timestamp()) - now)
    except (TypeError, ValueError):
        return None


def parse_json_object(text: str) -> tuple[dict[str, Any] | None, str]:
    """``(object, "")`` for text holding one JSON object (code fences tolerated), else a reason."""
    stripped = text.strip()
    fenced = _FENCE.match(stripped)
    if fenced:
        stripped = fenced.group(1)
    try:
        value = json.loads(stripped)
    except json.JSONDecodeError as exc:
        return None, f"the answer is not valid JSON: {exc.msg} at line {exc.lineno}"
    if not isinstance(value, dict):
        return None, f"the answer is JSON but not an object (got {type(value).__name__})"
    return value, ""


@dataclass
class Turn:
    """One model answer: the parsed object (or None), its problems, the raw reply and its cost."""

    data: dict[str, Any] | None
    problems: list[str]
    raw: Any
    input_tokens: int = 0
    output_tokens: int = 0


def converse(
    ask: Callable[[list[dict[str, Any]]], Turn],
    messages: list[dict[str, Any]],
    repair: Callable[[list[dict[str, Any]], Turn], list[dict[str, Any]]],
    check: Check | None,
    model: str,
) -> LLMResponse:
    """Ask once; if the answer is not acceptable, ask ONE more time with the problems quoted."""
    start = time.perf_counter()
    turns = [_checked(ask(messages), check)]
    if turns[0].problems:
        turns.append(_checked(ask(repair(messages, turns[0])), check))
    final = turns[-1]
    tokens_in = sum(t.input_tokens for t in turns)
    tokens_out = sum(t.output_tokens for t in turns)
    latency = round(time.perf_counter() - start, 6)
    if final.data is None or final.problems:
        problems = "; ".join(final.problems[:8]) or "no answer"
        raise LLMBadOutput(
            f"the model's answer was unusable after one repair: {problems}",
            calls=len(turns),
            input_tokens=tokens_in,
            output_tokens=tokens_out,
            latency_s=latency,
        )
    return LLMResponse(final.data, tokens_in, tokens_out, latency, model)


def _checked(turn: Turn, check: Check | None) -> Turn:
    if turn.data is not None and not turn.problems and check is not None:
        turn.problems = check(turn.data)
    return turn


def repair_text(problems: list[str]) -> str:
    """The user turn that asks for a corrected answer."""
    listed = "\n".join(f"- {p}" for p in problems[:20])
    return (
        "Your previous answer cannot be used:\n"
        f"{listed}\n"
        "Answer again with ONE JSON object that follows the schema exactly, and nothing else."
    )


class ClientOptions(TypedDict, total=False):
    """The keyword options every :class:`JSONClient` takes."""

    temperature: float
    settings: HTTPSettings | None
    sleep: Callable[[float], None]


class JSONClient:
    """The part of an LLM client that does not depend on the provider's wire format.

    Configuration comes from the arguments, else ``REVERIE_LLM_BASE_URL`` (default
    :attr:`default_base_url`), ``REVERIE_LLM_MODEL`` (required) and ``REVERIE_LLM_API_KEY``.
    :meth:`complete_json` is the :class:`reverie.llm.protocol.LLM` contract: the opening messages
    (:meth:`_opening`), one answer (:meth:`_turn`) and, when it is not acceptable, ONE repair turn
    (:meth:`_repair`) through :func:`converse`. Subclasses supply those three.
    """

    default_base_url: ClassVar[str]

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
            base_url, "REVERIE_LLM_BASE_URL", field_name="base_url", default=self.default_base_url
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
        return converse(
            lambda messages: self._turn(system, messages, schema, max_tokens),
            self._opening(system, user, schema),
            self._repair,
            check,
            self.model,
        )

    def _opening(self, system: str, user: str, schema: dict[str, Any]) -> Messages:
        """The conversation's first messages."""
        raise NotImplementedError

    def _turn(self, system: str, messages: Messages, schema: dict[str, Any], limit: int) -> Turn:
        """Send ``messages`` and parse the one answer."""
        raise NotImplementedError

    def _repair(self, messages: Messages, turn: Turn) -> Messages:
        """``messages`` extended so the model sees what was wrong with ``turn``."""
        raise NotImplementedError
