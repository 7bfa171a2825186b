"""Per-key rate limits: one token bucket for each API key and route class.

The limit is enforced twice over, cheaply: a request whose token the limiter has seen
authenticated before is charged by the :class:`RateLimit` middleware, before routing, so a
flood is refused in raw ASGI without touching the database; a token seen for the first time is
charged by the key dependency once it has authenticated (:func:`reverie.server.auth.current_key`),
which then teaches the limiter the token. Only the digest of a token that authenticated is
learned, so another key's bucket cannot be drained with a guessed id.

A route belongs to one of three classes, by what it costs and what it can break:

* ``read``: recall, search and every ``GET`` (cheap, frequent);
* ``write``: new episodes, transcripts, dreams, page edits, plan decisions;
* ``destructive``: erasure (``/v1/forget``) and undo, which rewrite the brain.

A bucket holds at most ``burst`` tokens and refills at ``per_second``; a request takes one token
or is answered ``429`` with ``Retry-After`` (whole seconds until a token is back). Buckets are
keyed by the key's id, so a flood from one key empties only its own buckets: another key's
requests never wait behind it. The limiter reads a monotonic clock it is given, so its arithmetic
is tested without sleeping.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from reverie.errors import InvalidInput

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = [
    "SPEC_HELP",
    "Rate",
    "RateLimit",
    "RateLimiter",
    "RateLimits",
    "limits_for",
    "rate_limited",
    "route_class",
]

Clock = Callable[[], float]


@dataclass(frozen=True)
class Rate:
    """``per_second`` tokens refill a bucket of at most ``burst``."""

    per_second: float
    burst: int

    def __post_init__(self) -> None:
        if self.per_second <= 0 or self.burst < 1:
            raise ValueError(f"a rate needs per_second > 0 and burst >= 1, not {self}")


@dataclass(frozen=True)
class RateLimits:
    """The rate of each route class. The defaults let one agent recall before every step and
    write every episode, while a runaway loop is stopped within seconds and holds at most a
    fraction of one core (a recall costs about 10 ms)."""

    read: Rate = field(default_factory=lambda: Rate(per_second=10.0, burst=20))
    write: Rate = field(default_factory=lambda: Rate(per_second=20.0, burst=60))
    destructive: Rate = field(default_factory=lambda: Rate(per_second=0.2, burst=5))

    def of(self, route: str) -> Rate:
        rate: Rate = getattr(self, route)
        return rate


_CLASSES = ("read", "write", "destructive")
_LOOPBACK = ("127.0.0.1", "localhost", "::1")
SPEC_HELP = (
    "auto (on unless the host is loopback), on, off, or per class"
    " 'read=10/20,write=20/60,destructive=0.2/5' (tokens per second / burst)"
)


def limits_for(spec: str, host: str) -> RateLimits | None:
    """The limits ``reverie serve --rate-limit SPEC`` asks for on ``host``; None when off."""
    text = spec.strip().lower()
    if text == "off":
        return None
    if text == "on" or (text == "auto" and host not in _LOOPBACK):
        return RateLimits()
    if text == "auto":
        return None
    return _parse_classes(text)


def _parse_classes(text: str) -> RateLimits:
    limits = RateLimits()
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, _, value = part.partition("=")
        per_second, _, burst = value.partition("/")
        if name not in _CLASSES or not per_second:
            raise InvalidInput("--rate-limit", f"{part!r}: expected {SPEC_HELP}")
        try:
            rate = Rate(float(per_second), int(burst) if burst else max(1, int(float(per_second))))
        except ValueError as exc:
            raise InvalidInput("--rate-limit", f"{part!r}: {exc}") from exc
        limits = replace(limits, **{name: rate})
    return limits


_DESTRUCTIVE_PREFIXES = ("/v1/forget",)
_DESTRUCTIVE_SUFFIXES = ("/undo",)


def route_class(method: str, path: str) -> str:
    """``read``, ``write`` or ``destructive`` for a request line."""
    method = method.upper()
    if method in ("GET", "HEAD", "OPTIONS"):
        return "read"
    if method == "DELETE" or path.startswith(_DESTRUCTIVE_PREFIXES):
        return "destructive"
    if path.endswith(_DESTRUCTIVE_SUFFIXES):
        return "destructive"
    return "read" if path == "/v1/recall" else "write"


@dataclass
class _Bucket:
    tokens: float
    updated: float


class RateLimiter:
    """Token buckets per ``(key id, route class)``, safe across the server's worker threads."""

    def __init__(self, limits: RateLimits, clock: Clock = time.monotonic) -> None:
        self.limits = limits
        self._clock = clock
        self._buckets: dict[tuple[str, str], _Bucket] = {}
        self._known: dict[bytes, str] = {}
        self._lock = threading.Lock()

    def learn(self, token: str, key_id: str) -> None:
        """Remember that ``token`` authenticated as ``key_id`` (its digest only)."""
        with self._lock:
            self._known[_digest(token)] = key_id

    def key_of(self, token: str) -> str | None:
        """The key id a token authenticated as before, or None."""
        return self._known.get(_digest(token))

    def take(self, key_id: str, route: str) -> float:
        """Take one token; 0.0 when granted, else the seconds until one is back."""
        rate = self.limits.of(route)
        now = self._clock()
        with self._lock:
            bucket = self._buckets.setdefault((key_id, route), _Bucket(float(rate.burst), now))
            elapsed = max(0.0, now - bucket.updated)
            bucket.tokens = min(float(rate.burst), bucket.tokens + elapsed * rate.per_second)
            bucket.updated = now
            if bucket.tokens >= 1.0:
                bucket.tokens -= 1.0
                return 0.0
            return (1.0 - bucket.tokens) / rate.per_second

    @staticmethod
    def retry_after(wait: float) -> int:
        """The ``Retry-After`` header's whole seconds for a wait (at least 1)."""
        return max(1, math.ceil(wait))


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "replace")).digest()


def rate_limited(key_id: str, route: str, rate: Rate, seconds: int) -> dict[str, Any]:
    """The 429 body, in the service's one error shape."""
    message = (
        f"key {key_id} is over its {route} rate ({rate.per_second:g}/s, bursts of {rate.burst});"
        f" retry after {seconds} s, or raise the limit with `reverie serve --rate-limit`"
    )
    error = {"status": 429, "code": "rate_limited", "message": message}
    return {"error": {**error, "retry_after": seconds, "route_class": route}}


def _token(headers: list[tuple[bytes, bytes]]) -> str | None:
    for name, value in headers:
        if name == b"authorization" and value[:7].lower() == b"bearer ":
            return value[7:].decode("latin-1").strip()
        if name == b"x-api-key":
            return value.decode("latin-1").strip()
    return None


TARPIT_S = 1.0
"""How long a refused request is held before its 429 goes out."""

TARPIT_PER_KEY = 64
"""Refused requests of one key held at once; beyond it they are answered at once."""


class RateLimit:
    """ASGI middleware: charge a known key's bucket before routing; 429 when it is empty.

    A refused request is held for ``TARPIT_S`` before its answer (the ``Retry-After`` it would
    be told anyway), so a client that floods without waiting still waits: a held request costs
    the server one idle coroutine, where an instant 429 costs parsing and answering as fast as
    the client can send. At most ``TARPIT_PER_KEY`` are held per key, which bounds the memory.
    """

    def __init__(self, app: ASGIApp, limiter: RateLimiter) -> None:
        self.app = app
        self.limiter = limiter
        self._held: Counter[str] = Counter()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        token = _token(scope["headers"]) if scope["type"] == "http" else None
        key_id = self.limiter.key_of(token) if token else None
        if key_id is None:
            await self.app(scope, receive, send)
            return
        route = route_class(scope["method"], scope["path"])
        wait = self.limiter.take(key_id, route)
        if wait > 0.0:
            seconds = RateLimiter.retry_after(wait)
            body = rate_limited(key_id, route, self.limiter.limits.of(route), seconds)
            await self._hold(key_id)
            await _answer(send, body, seconds)
            return
        scope.setdefault("state", {})["rate_charged"] = True
        await self.app(scope, receive, send)

    async def _hold(self, key_id: str) -> None:
        if self._held[key_id] >= TARPIT_PER_KEY:
            return
        import asyncio  # noqa: PLC0415 (`reverie --help` reads SPEC_HELP without an event loop)

        self._held[key_id] += 1
        try:
            await asyncio.sleep(TARPIT_S)
        finally:
            self._held[key_id] -= 1


async def _answer(send: Send, body: dict[str, Any], seconds: int) -> None:
    payload = json.dumps(body).encode("utf-8")
    headers = [(b"content-type", b"application/json"), (b"retry-after", str(seconds).encode())]
    headers.append((b"content-length", str(len(payload)).encode()))
    await send({"type": "http.response.start", "status": 429, "headers": headers})
    await send({"type": "http.response.body", "body": payload})
