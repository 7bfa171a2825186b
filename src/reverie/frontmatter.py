"""A strict reader and writer for the YAML front matter of the Markdown mirror.

The mirror writes one ``key: value`` per line where every value is a JSON scalar or a flat JSON
array (``"text"``, ``0.82``, ``null``, ``["ep-1", "ep-2"]``). JSON strings, numbers, ``null`` and
flow sequences are valid YAML, so any YAML reader (and so any coding agent) reads the files, while
this module reads them back with :func:`json.loads` per line — no YAML dependency, and nothing
outside that subset is accepted: an unknown key, a repeated key or a value that is not JSON is an
error that names the line.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["FrontMatterError", "dump", "split"]

FENCE = "---"


class FrontMatterError(ValueError):
    """A file whose front matter is not in the subset the mirror writes."""


def dump(fields: Mapping[str, Any]) -> str:
    """``---``, one ``key: <json>`` line per field in the given order, ``---``."""
    lines = [FENCE]
    lines += [f"{key}: {json.dumps(value, ensure_ascii=False)}" for key, value in fields.items()]
    lines.append(FENCE)
    return "\n".join(lines) + "\n"


def _value(key: str, text: str, number: int) -> Any:
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        raise FrontMatterError(f"line {number}: value of {key!r} is not valid: {text!r}") from None
    if isinstance(value, dict) or (
        isinstance(value, list) and any(isinstance(v, dict | list) for v in value)
    ):
        raise FrontMatterError(f"line {number}: {key!r} must be a scalar or a flat list")
    return value


def split(text: str, allowed: Iterable[str]) -> tuple[dict[str, Any], str]:
    """The front matter fields of ``text`` and the body after it."""
    lines = text.split("\n")
    if not lines or lines[0].rstrip("\r") != FENCE:
        raise FrontMatterError("line 1: the file must start with '---' (front matter)")
    keys = set(allowed)
    fields: dict[str, Any] = {}
    for number, raw in enumerate(lines[1:], 2):
        line = raw.rstrip("\r")
        if line == FENCE:
            return fields, "\n".join(lines[number:])
        if not line and number == len(lines):
            break  # end of the file
        key, sep, rest = line.partition(":")
        key = key.strip()
        if not sep or key not in keys:
            raise FrontMatterError(f"line {number}: unknown front matter line {line!r}")
        if key in fields:
            raise FrontMatterError(f"line {number}: {key!r} appears twice")
        fields[key] = _value(key, rest.strip(), number)
    raise FrontMatterError("the front matter is not closed by '---'")
