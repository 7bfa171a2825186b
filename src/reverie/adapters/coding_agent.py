"""Coding-agent session logs (JSONL, one event per line): every tool call becomes an episode.

Two shapes are read. Message events, as Claude Code writes them: ``{"type": "user" |
"assistant", "message": {"content": [...]}, "timestamp", "sessionId"}`` whose content blocks
include ``tool_use`` (id, name, input) and ``tool_result`` (tool_use_id, content, is_error).
And flat events: ``{"type": "tool_call", "id", "name", "input"}`` then ``{"type":
"tool_result", "call_id", "output", "error" | "is_error" | "exit_code"}``, with ``{"type":
"user", "text"}`` for prompts.

An episode's situation is the user's latest prompt, its action the tool and its input, its
outcome ``failure`` (with the result as ``error``) when the result is flagged as an error, has a
non-zero exit code or reads as one, else ``success``; a call with no result is ``unknown``.
Metadata events (``summary``, ``system``, ...) are read past; any other event type, and a result
for a call never seen, is reported. An event without a timestamp takes the latest one seen
before it; a log with none at all is stamped at ingest time, and ingesting it a second time then
reports its episodes as conflicts instead of storing them twice.
"""

from __future__ import annotations

from dataclasses import dataclass, field
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
from reverie.models import Scope

__all__ = ["parse_session"]

SOURCE = "coding-agent"
METADATA = {"summary", "system", "meta", "session", "file-history-snapshot", "progress"}


@dataclass
class _Call:
    line: int
    call_id: str
    name: str
    input: str
    prompt: str
    session: str | None
    at: str | None
    result: str | None = None
    failed: bool = False
    result_at: str | None = None


@dataclass
class _Session:
    prompt: str = ""
    calls: dict[str, _Call] = field(default_factory=dict)
    last_at: str | None = None  # the latest timestamp seen: events without one inherit it


def _call(
    s: _Session, line: int, event: dict[str, Any], call_id: str, name: str, args: Any
) -> None:
    s.calls[call_id] = _Call(
        line,
        call_id,
        name,
        compact(args if args is not None else {}),
        s.prompt,
        event.get("sessionId") or event.get("session_id"),
        event.get("timestamp") or s.last_at,
    )


def _result(s: _Session, line: int, event: dict[str, Any], call_id: str, out: Parsed) -> None:
    call = s.calls.get(call_id)
    if call is None:
        out.fail(line, "tool_result", f"result for tool call {call_id!r}, which was never made")
        return
    text = text_of(event.get("content", event.get("output")))
    error = event.get("error")
    code = event.get("exit_code")
    flagged = bool(event.get("is_error")) or bool(error) or (isinstance(code, int) and code != 0)
    call.result = text_of(error) if error and not text else text
    call.failed = flagged or looks_failed(call.result)
    call.result_at = event.get("timestamp") or s.last_at


def _blocks(s: _Session, line: int, event: dict[str, Any], out: Parsed) -> None:
    content = (event.get("message") or {}).get("content", event.get("content"))
    if isinstance(content, str) or content is None:
        if event["type"] == "user" and content:
            s.prompt = content
        return
    texts = [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
    if event["type"] == "user" and any(texts):
        s.prompt = "\n".join(t for t in texts if t)
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_use":
            name = str(block.get("name") or "tool")
            _call(s, line, event, str(block.get("id")), name, block.get("input"))
        elif block.get("type") == "tool_result":
            merged = {**block, "timestamp": event.get("timestamp")}
            _result(s, line, merged, str(block.get("tool_use_id")), out)


def _event(s: _Session, line: int, event: dict[str, Any], out: Parsed) -> None:
    kind = event.get("type")
    s.last_at = event.get("timestamp") or s.last_at
    if kind in ("user", "assistant"):
        if "text" in event and "message" not in event:
            s.prompt = text_of(event["text"]) if kind == "user" else s.prompt
        else:
            _blocks(s, line, event, out)
    elif kind == "tool_call":
        call_id = str(event.get("id") or event.get("call_id"))
        name = str(event.get("name") or event.get("tool") or "tool")
        _call(s, line, event, call_id, name, event.get("input", event.get("arguments")))
    elif kind == "tool_result":
        call_id = str(event.get("call_id") or event.get("tool_call_id") or event.get("id"))
        _result(s, line, event, call_id, out)
    elif kind not in METADATA:
        out.fail(line, "type", f"unknown event type {kind!r}; skipped")


def _episode(call: _Call, scope: Scope) -> dict[str, Any]:
    outcome = "unknown" if call.result is None else "failure" if call.failed else "success"
    item: dict[str, Any] = {
        "id": episode_id(scope, SOURCE, call.session or "", call.call_id),
        "situation": excerpt(call.prompt, 8000) or "(no prompt recorded)",
        "action": excerpt(f"{call.name} {call.input}", 8000),
        "outcome": outcome,
        "tools": [call.name],
        "category": "coding",
        "session_id": call.session,
        "metadata": {"source": SOURCE, "call_id": call.call_id},
    }
    if call.result is not None:
        item["error" if call.failed else "outcome_details"] = excerpt(call.result, 4000)
    if call.result_at or call.at:
        item["created_at"] = call.result_at or call.at
    return {k: v for k, v in item.items() if v is not None}


def parse_session(lines: Lines, scope: Scope) -> Parsed:
    """One episode per tool call of the session, with ids of ``scope``."""
    parsed = Parsed()
    session = _Session()
    for line, event in load_objects(lines, parsed):
        _event(session, line, event, parsed)
    for call in sorted(session.calls.values(), key=lambda c: c.line):
        parsed.add(call.line, _episode(call, scope))
    return parsed
