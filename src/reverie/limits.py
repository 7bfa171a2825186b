"""How much one episode may hold, in one place: every ingest path (library, CLI, HTTP, MCP)
validates through :class:`reverie.models.Episode`, which reads these limits.

The limits exist so that one row can never break a reader: an episode that is stored must also
serialise, archive, export and come back through every API. Nesting is the dangerous one —
JSON libraries recurse, and pydantic refuses to serialise past 255 levels — so depth is checked
here without recursion, before anything else walks the value.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = [
    "MAX_ENTITY",
    "MAX_JSON_DEPTH",
    "MAX_METADATA_BYTES",
    "MAX_METADATA_DEPTH",
    "MAX_TEXT",
    "MAX_TOOL",
    "NUL_REASON",
    "JsonTooDeep",
    "has_nul",
    "json_depth",
    "loads_bounded",
]

MAX_TEXT = 64_000
"""Characters in each free-text field (situation, action, outcome_details, error, lesson)."""
MAX_TOOL = 256
"""Characters in one tool name (and in ``category`` and ``session_id``)."""
MAX_ENTITY = 1_024
"""Characters in one entity."""
MAX_METADATA_BYTES = 65_536
"""UTF-8 bytes of an episode's metadata, encoded as compact JSON."""
MAX_METADATA_DEPTH = 32
"""Levels of nested objects and arrays in an episode's metadata (``{}`` is one level)."""
MAX_JSON_DEPTH = 64
"""Levels of nesting in one line of a JSON-lines file, deeper than any valid episode needs."""


NUL_REASON = (
    "contains a NUL character (U+0000), which PostgreSQL text cannot hold; remove it or"
    " replace it (every store refuses it alike)"
)
"""Why text holding U+0000 is refused: PostgreSQL's ``text`` and ``jsonb`` cannot store it, so
no store takes it, and a brain moves between backends whole."""


def has_nul(value: Any) -> bool:
    """Whether a NUL character is in any string of a JSON-like value, keys included."""
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(has_nul(k) or has_nul(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(has_nul(v) for v in value)
    return False


class JsonTooDeep(ValueError):
    """A JSON text nested deeper than its limit; ``limit`` is that limit."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        super().__init__(f"is nested more than {limit} levels deep")


def json_depth(value: Any, limit: int) -> int:
    """Levels of nested dicts and lists in ``value`` (a scalar is 0), counted without recursion;
    stops and returns ``limit + 1`` as soon as it passes ``limit``."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list | tuple):
            children = node
        else:
            continue
        depth += 1
        if depth > limit:
            return depth
        deepest = max(deepest, depth)
        stack.extend((child, depth) for child in children)
    return deepest


def loads_bounded(text: str, limit: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads(text)``, or :class:`JsonTooDeep` when it nests more than ``limit`` levels.

    Text with fewer brackets than the limit cannot be too deep and is parsed as is; deeper text
    is refused before (or instead of) the decoder's own recursion giving out.
    """
    if text.count("[") + text.count("{") <= limit:
        return json.loads(text)
    try:
        value = json.loads(text)
    except RecursionError:
        raise JsonTooDeep(limit) from None
    if json_depth(value, limit) > limit:
        raise JsonTooDeep(limit)
    return value
