"""OpenAI chat-format transcripts: one conversation per line, ``{"messages": [...]}``.

Each user message opens a turn; the turn becomes one episode: the user's request is the
situation, the assistant's reply (and the tools it called) the action. Its metadata names who
spoke (``role`` ``user``, ``speaker`` the message's ``name`` or ``user``), which makes it a turn
of a dialogue for the dream cycle and recall (:mod:`reverie.text.turns`). A named speaker (a
chat of several people) also heads the situation, ``"<name>: <text>"``, so a search for the
person finds what they said; a turn with no reply has an empty action. A turn whose tool results
read as errors is a failure carrying the first error; a turn answered is a success; one with no
answer is unknown. ``role: tool`` results are matched to the assistant's ``tool_calls`` by id.
Messages with a role this adapter does not know are reported. Timestamps: the conversation's
``created_at`` / ``created`` (unix seconds) when present, else the time of ingest.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from reverie.adapters.base import (
    Lines,
    Parsed,
    compact,
    episode_id,
    excerpt,
    load_objects,
    looks_failed,
    text_of,
)
from reverie.models import Scope

__all__ = ["parse_chats"]

SOURCE = "openai-chat"
_ROLES = {"system", "developer", "user", "assistant", "tool", "function"}


@dataclass
class _Turn:
    request: str
    speaker: str = "user"
    replies: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    calls: dict[str, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    results: int = 0

    def outcome(self) -> str:
        if self.errors:
            return "failure"
        return "success" if self.replies else "unknown"


def _when(chat: dict[str, Any]) -> str | None:
    value = chat.get("created_at") or chat.get("created")
    if isinstance(value, int | float):
        return datetime.fromtimestamp(value, UTC).isoformat()
    return value if isinstance(value, str) else None


def _assistant(turn: _Turn, message: dict[str, Any]) -> None:
    text = text_of(message.get("content"))
    if text:
        turn.replies.append(text)
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        name = str(function.get("name") or "tool")
        turn.tools.append(name)
        turn.calls[str(call.get("id", ""))] = name
    if isinstance(message.get("function_call"), dict):
        turn.tools.append(str(message["function_call"].get("name") or "function"))


def _result(turn: _Turn, message: dict[str, Any], index: int, line: int, out: Parsed) -> None:
    call_id = str(message.get("tool_call_id", ""))
    if message.get("role") == "tool" and call_id not in turn.calls:
        out.fail(line, f"messages[{index}].tool_call_id", f"no tool call {call_id!r} before it")
        return
    text = text_of(message.get("content"))
    turn.results += 1
    if looks_failed(text):
        turn.errors.append(excerpt(text, 4000))


def _episode(turn: _Turn, scope: Scope, key: str, n: int, when: str | None) -> dict[str, Any]:
    tools = list(dict.fromkeys(turn.tools))
    action = excerpt(turn.replies[-1], 8000) if turn.replies else ""
    if tools:
        action = f"{action}\n(tools: {', '.join(tools)})".strip()
    item: dict[str, Any] = {
        "id": episode_id(scope, SOURCE, key, str(n)),
        "situation": excerpt(_headed(turn), 8000),
        "action": action or ("" if turn.request.strip() else "(no reply)"),
        "outcome": turn.outcome(),
        "tools": tools,
        "category": "chat",
        "metadata": {
            "source": SOURCE,
            "conversation": key,
            "turn": n,
            "role": "user",
            "speaker": turn.speaker,
        },
    }
    if turn.errors:
        item["error"] = turn.errors[0]
    if when:
        item["created_at"] = when
    return item


def _headed(turn: _Turn) -> str:
    return turn.request if turn.speaker == "user" else f"{turn.speaker}: {turn.request}"


def _speaker(message: dict[str, Any]) -> str:
    name = message.get("name")
    return name.strip()[:60] if isinstance(name, str) and name.strip() else "user"


def _chat(line: int, chat: dict[str, Any], scope: Scope, out: Parsed) -> None:
    messages = chat.get("messages")
    if not isinstance(messages, list):
        out.fail(line, "messages", "expected a chat transcript: an object with a 'messages' list")
        return
    key = str(chat.get("id") or hashlib.sha256(compact(messages).encode()).hexdigest()[:16])
    turns: list[_Turn] = []
    for index, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role not in _ROLES:
            out.fail(line, f"messages[{index}].role", f"unknown role {role!r}; message skipped")
        elif role == "user":
            turns.append(_Turn(text_of(message.get("content")), _speaker(message)))
        elif role in ("system", "developer"):
            continue
        elif not turns:
            out.fail(line, f"messages[{index}]", f"a {role} message before any user message")
        elif role == "assistant":
            _assistant(turns[-1], message)
        else:
            _result(turns[-1], message, index, line, out)
    for n, turn in enumerate(turns):
        out.add(line, _episode(turn, scope, key, n, _when(chat)))


def parse_chats(lines: Lines, scope: Scope) -> Parsed:
    """One episode per user turn of each transcript, with ids of ``scope``."""
    parsed = Parsed()
    for line, chat in load_objects(lines, parsed):
        _chat(line, chat, scope, parsed)
    return parsed
