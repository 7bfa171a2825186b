"""Structured tool calls inside episodes: what an agent called, with which JSON arguments.

Adapters and integrations record a tool call in one of two shapes, and both are read here:

* the episode *is* one call: its action is ``<tool> <JSON object>`` (``deploy {"service":
  "api"}``) or ``<tool>(key=value, …)`` (``ledger.post(acct=3010, ccy="USD")``), perhaps
  after one marker word (``call``, ``→``, ``tool_use:``), its outcome the call's;
* the episode holds several: ``metadata["calls"]`` is a list of ``{"tool", "args", "ok"}``
  in the order they were made (a chat turn, or a whole run), each with its own result.

A call's arguments are compared as a mapping, never as words: ``{"service": "api"}`` then
``{"service": "api", "timeout": "10m"}`` is another call (one argument added), where the
word overlap of the two texts would call it the same. :func:`arg_changes` states the
difference the way a person would: ``timeout: "10m" added``, ``service: "api" → "web"``.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from itertools import islice
from typing import Any

from reverie.models import Episode, Outcome

__all__ = ["ToolCall", "arg_changes", "call_text", "calls_of", "compact_value", "parse_call"]

_JSON_CALL = re.compile(r"^\s*(?:[^\s{]+\s+)?([\w.:/-]+)\s+(?=\{)")
_PY_CALL = re.compile(r"^\s*(?:[^\s(]+\s+)?([A-Za-z_][\w.]*)\(")
_OBJECT = json.JSONDecoder()
MAX_CLOSINGS = 8
"""Closing parentheses tried as the end of a ``tool(…)`` call's arguments, at most."""
MAX_CHANGES = 4
"""Argument changes named in one statement at most (the rest are counted)."""


@dataclass(frozen=True)
class ToolCall:
    """One call: the tool, its JSON arguments, and whether it succeeded (None: not known)."""

    tool: str
    args: Mapping[str, Any]
    ok: bool | None

    @property
    def text(self) -> str:
        return call_text(self.tool, self.args)


def compact_value(value: Any) -> str:
    """A JSON value as compact, canonical JSON (keys sorted)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def call_text(tool: str, args: Mapping[str, Any]) -> str:
    """``tool {"key":value,...}``: a call as an action line, arguments in canonical order."""
    return f"{tool} {compact_value(dict(args))}"


def parse_call(action: str) -> tuple[str, dict[str, Any]] | None:
    """``(tool, arguments)`` when ``action`` reads as one call, else None: ``<tool> <JSON
    object>`` or ``<tool>(key=value, …)`` with literal values (positional ones named by their
    place, ``arg1`` …), either after one marker word (``call``, ``invoke``, ``→``,
    ``tool_use:``), as agent logs write them. What a log appends after the call, past a space
    (``backoff 3114ms``, ``[runner] step 2/6 FAILED``, ``❌``), is a note, not part of it."""
    text = action or ""
    if (match := _JSON_CALL.match(text)) is not None:
        try:
            args, end = _OBJECT.raw_decode(text, match.end())
        except (json.JSONDecodeError, ValueError, RecursionError):
            return None
        return (match.group(1), args) if isinstance(args, dict) and _ends(text, end) else None
    if (match := _PY_CALL.match(text)) is not None:
        for close in _closing_parens(text, match.end()):
            if (args := _literal_args(text[match.end() : close])) is not None:
                return match.group(1), args
    return None


def _ends(text: str, at: int) -> bool:
    """Whether a call that stops at ``at`` is the whole action or is followed by a note."""
    return at >= len(text) or text[at].isspace()


def _closing_parens(text: str, start: int) -> Iterator[int]:
    """Where the call's arguments may end: a ``)`` after ``start`` that ends the action or is
    followed by a space, the first :data:`MAX_CLOSINGS` of them (each is one parse)."""
    found = (i for i in range(start, len(text)) if text[i] == ")" and _ends(text, i + 1))
    return islice(found, MAX_CLOSINGS)


def _literal_args(inside: str) -> dict[str, Any] | None:
    """The arguments of ``f(inside)`` when every one is a literal (a string, number, list…)."""
    try:
        node = ast.parse(f"f({inside})", mode="eval").body
    except (SyntaxError, ValueError):
        return None
    if not isinstance(node, ast.Call) or any(k.arg is None for k in node.keywords):
        return None
    try:
        args = {f"arg{i}": ast.literal_eval(a) for i, a in enumerate(node.args, start=1)}
        args |= {str(k.arg): ast.literal_eval(k.value) for k in node.keywords}
        json.dumps(args)  # only what JSON holds: a set, bytes or ``...`` is no argument
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return args


def calls_of(ep: Episode) -> list[ToolCall]:
    """The structured calls an episode records, in order; ``[]`` when it records none."""
    listed = ep.metadata.get("calls") if isinstance(ep.metadata, dict) else None
    if isinstance(listed, list):
        return [c for c in map(_listed_call, listed) if c is not None]
    parsed = parse_call(ep.action)
    if parsed is None:
        return []
    ok = None if ep.outcome is Outcome.UNKNOWN else ep.outcome is Outcome.SUCCESS
    return [ToolCall(parsed[0], parsed[1], ok)]


def _listed_call(value: Any) -> ToolCall | None:
    if not isinstance(value, dict) or not isinstance(value.get("tool"), str):
        return None
    args = value.get("args")
    if isinstance(args, str):
        parsed = parse_call(f"{value['tool']} {args}")
        args = parsed[1] if parsed else {"input": args}
    ok = value.get("ok")
    return ToolCall(
        value["tool"], args if isinstance(args, dict) else {}, ok if isinstance(ok, bool) else None
    )


def arg_changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> str:
    """What changed from ``before`` to ``after``: ``timeout: "10m" added; service: "api" →
    "web"; force removed`` (keys in order; ``""`` when nothing did)."""
    parts: list[str] = []
    for key in sorted(set(before) | set(after)):
        if key not in before:
            parts.append(f"{key}: {_short(after[key])} added")
        elif key not in after:
            parts.append(f"{key} removed")
        elif compact_value(before[key]) != compact_value(after[key]):
            parts.append(f"{key}: {_short(before[key])} → {_short(after[key])}")
    shown = "; ".join(parts[:MAX_CHANGES])
    more = f" (+{len(parts) - MAX_CHANGES} more)" if len(parts) > MAX_CHANGES else ""
    return shown + more


def _short(value: Any, limit: int = 60) -> str:
    text = compact_value(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
