"""A real HTTP server on 127.0.0.1 that speaks the OpenAI and Anthropic wire formats, scripted.

Tests point the real clients at it instead of patching anything: the bytes cross a socket, the
status codes, ``Retry-After`` headers, slow answers, dropped connections and a server that dies
are all real. Only the standard library is used, so it runs wherever the tests run.

Replies come from a queue (:meth:`FakeLLMServer.push`) and, when the queue is empty, from an
optional ``responder`` called with the recorded request; with neither, the server answers 500.
Every request is recorded in :attr:`FakeLLMServer.requests`. Connections close after each answer
(HTTP/1.0), so stopping the server never waits on an idle keep-alive connection.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

__all__ = [
    "FakeLLMServer",
    "RecordedRequest",
    "Reply",
    "anthropic_message",
    "anthropic_reply",
    "openai_reply",
]


@dataclass(frozen=True)
class Reply:
    """One scripted answer. ``drop`` closes the connection unanswered; ``die`` also stops the
    server, so later requests are refused."""

    status: int = 200
    body: dict[str, Any] | None = None
    raw: bytes | None = None
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    drop: bool = False
    die: bool = False


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


def openai_reply(
    content: str | dict[str, Any], *, input_tokens: int = 120, output_tokens: int = 40
) -> Reply:
    """A chat-completions answer whose message content is ``content`` (a dict is dumped)."""
    text = content if isinstance(content, str) else json.dumps(content)
    return Reply(
        body={
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "model": "fake",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": input_tokens,
                "completion_tokens": output_tokens,
                "total_tokens": input_tokens + output_tokens,
            },
        }
    )


def anthropic_reply(
    tool_input: dict[str, Any] | None = None,
    *,
    text: str | None = None,
    input_tokens: int = 120,
    output_tokens: int = 40,
) -> Reply:
    """A Messages answer: a forced tool call with ``tool_input``, or a ``text`` block."""
    blocks: list[dict[str, Any]] = []
    if text is not None:
        blocks.append({"type": "text", "text": text})
    if tool_input is not None:
        blocks.append(
            {"type": "tool_use", "id": "toolu_fake", "name": "answer", "input": tool_input}
        )
    stop = "tool_use" if tool_input is not None else "end_turn"
    return anthropic_message(blocks, stop, input_tokens=input_tokens, output_tokens=output_tokens)


def anthropic_message(
    blocks: list[dict[str, Any]],
    stop_reason: str,
    *,
    input_tokens: int = 120,
    output_tokens: int = 40,
) -> Reply:
    """A Messages answer of any content ``blocks`` (text, tool calls of any tool)."""
    return Reply(
        body={
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": "fake",
            "content": blocks,
            "stop_reason": stop_reason,
            "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
        }
    )


class _Server(ThreadingHTTPServer):
    daemon_threads = False
    block_on_close = True
    owner: FakeLLMServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients that hang up are part of the tests; never print a traceback."""


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.0"

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read :attr:`FakeLLMServer.requests` instead."""

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        request = RecordedRequest("POST", self.path, dict(self.headers.items()), body)
        self._answer(self.server.owner.next_reply(request))

    def _answer(self, reply: Reply) -> None:
        owner = self.server.owner
        if reply.delay_s and owner.stopping.wait(reply.delay_s):
            return
        if reply.die:
            owner.dead = True
            threading.Thread(target=owner.stop, daemon=True).start()
        if reply.drop or reply.die:
            return
        payload = reply.raw if reply.raw is not None else json.dumps(reply.body or {}).encode()
        try:
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)
        except OSError:  # the client gave up (a timeout test); nothing to tell it
            pass


class FakeLLMServer:
    """A scripted OpenAI + Anthropic wire-format server; a context manager.

    Base URLs: :attr:`openai_base_url` (``.../v1``) for the OpenAI-compatible client and
    :attr:`url` for the Anthropic client.
    """

    def __init__(self, responder: Callable[[RecordedRequest], Reply] | None = None) -> None:
        self.responder = responder
        self.requests: list[RecordedRequest] = []
        self.stopping = threading.Event()
        self.dead = False
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self.url = ""

    @property
    def openai_base_url(self) -> str:
        return f"{self.url}/v1"

    def push(self, *replies: Reply) -> None:
        """Queue replies, answered in order before the responder is asked."""
        with self._lock:
            self._queue.extend(replies)

    def next_reply(self, request: RecordedRequest) -> Reply:
        with self._lock:
            if self.dead:  # dying: connections still being accepted are dropped, unrecorded
                return Reply(drop=True)
            self.requests.append(request)
            if self._queue:
                return self._queue.popleft()
        if self.responder is not None:
            return self.responder(request)
        return Reply(status=500, body={"error": {"message": "no scripted reply left"}})

    def start(self) -> Self:
        server = _Server(("127.0.0.1", 0), _Handler)
        server.owner = self
        self._server = server
        self.url = f"http://127.0.0.1:{server.server_address[1]}"
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop answering; later connections are refused. Safe to call twice."""
        with self._lock:
            server, self._server = self._server, None
        if server is None:
            return
        self.stopping.set()
        server.shutdown()
        server.server_close()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
