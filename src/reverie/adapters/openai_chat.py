"""OpenAI chat-format transcripts: one conversation per line, ``{"messages": [...]}``.

Each user message opens a turn; the turn becomes one episode: the user's request is the
situation, the assistant's reply (and the tools it called) the action. Its metadata names who
spoke (``role`` ``user``, ``speaker`` the message's ``name`` or ``user``), which makes it a turn
of a dialogue for the dream cycle and recall (:mod:`reverie.text.turns`). A named speaker (a
chat of several people) also heads the situation, ``"<name>: <text>"``, so a search for the
person finds what they said; a turn with no reply has an empty action. A turn whose tool results
read as errors is a failure carrying the first error; a turn answered is a success; one with no
answer is unknown. ``role: tool`` results are matched to the assistant's ``tool_calls`` by id,
and each call is kept with its JSON arguments and its own result in ``metadata["calls"]``.
Messages with a role this adapter does not know are reported.

A transcript that carries its result (``outcome``, ``reward`` or ``feedback`` beside
``messages``, :mod:`reverie.adapters.task`) also becomes one task episode: the run's request,
every call it made in order, and the run's result as outcome. Timestamps: the conversation's
``created_at`` / ``created`` (unix seconds) when present, else the time of ingest.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from reverie.adapters.shared import (
    Lines,
    Parsed,
    compact,
    episode_id,
    excerpt,
    load_objects,
    looks_failed,
    text_of,
)
from reverie.adapters.task import RunCall, call_record, request_of, run_result, task_fields
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
    calls: dict[str, int] = field(default_factory=dict)  # call id -> index in ``made``
    made: list[RunCall] = field(default_factory=list)
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
        turn.calls[str(call.get("id", ""))] = len(turn.made)
        turn.made.append(RunCall(name, _arguments(function.get("arguments"))))
    if isinstance(message.get("function_call"), dict):
        turn.tools.append(str(message["function_call"].get("name") or "function"))


def _result(turn: _Turn, message: dict[str, Any], index: int, line: int, out: Parsed) -> None:
    call_id = str(message.get("tool_call_id", ""))
    if message.get("role") == "tool" and call_id not in turn.calls:
        out.fail(line, f"messages[{index}].tool_call_id", f"no tool call {call_id!r} before it")
        return
    text = text_of(message.get("content"))
    turn.results += 1
    failed = looks_failed(text)
    if failed:
        turn.errors.append(excerpt(text, 4000))
    if call_id in turn.calls:
        made = turn.made[turn.calls[call_id]]
        turn.made[turn.calls[call_id]] = RunCall(made.tool, made.args, not failed)


def _arguments(raw: Any) -> Any:
    """A call's arguments: the JSON object its ``arguments`` string holds, else the text."""
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except (json.JSONDecodeError, ValueError):
            return raw
        return value if isinstance(value, dict) else raw
    return raw if raw is not None else {}


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
    if turn.made:
        item["metadata"]["calls"] = [call_record(c) for c in turn.made]
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
    task = _task(line, chat, turns, (scope, key), out)
    for n, turn in enumerate(turns):
        item = _episode(turn, scope, key, n, _when(chat))
        if task is not None:
            item["metadata"]["run"] = task["id"]  # a turn of the run: detail of its task
        out.add(line, item)
    if task is not None:
        out.add(line, task)


def _task(
    line: int, chat: dict[str, Any], turns: list[_Turn], where: tuple[Scope, str], out: Parsed
) -> dict[str, Any] | None:
    """The run as one task episode, when the transcript carries its result."""
    try:
        result = run_result(chat.get("outcome"), chat.get("reward"), chat.get("feedback"))
    except ValueError as exc:
        out.fail(line, "outcome", str(exc))
        return None
    if result is None or not turns:
        return None
    scope, key = where
    given = chat.get("task")
    request = (
        given
        if isinstance(given, str) and given.strip()
        else request_of([t.request for t in turns])
    )
    errors = [e for t in turns for e in t.errors]
    item = task_fields(
        request, [c for t in turns for c in t.made], result, next(iter(errors), None)
    )
    item["id"] = episode_id(scope, SOURCE, key, "task")
    item["metadata"] = {"source": SOURCE, "conversation": key, **item["metadata"]}
    if when := _when(chat):
        item["created_at"] = when
    return item


def parse_chats(lines: Lines, scope: Scope) -> Parsed:
    """One episode per user turn of each transcript, with ids of ``scope``."""
    parsed = Parsed()
    for line, chat in load_objects(lines, parsed):
        _chat(line, chat, scope, parsed)
    return parsed
