"""A strict reader and a byte-stable writer for the YAML front matter of the Markdown mirror.

The writer emits one ``key: value`` per line where every value is a JSON scalar or a flat JSON
array (``"text"``, ``0.82``, ``null``, ``["ep-1", "ep-2"]``). JSON strings, numbers, ``null`` and
flow sequences are valid YAML, so any YAML reader (and so any coding agent) reads the files, and
what it writes never changes for the same fields: export → import → export is byte-identical.

The reader takes that JSON back with :func:`json.loads`, and also what a person editing the file
by hand is likely to type: the *safe scalar subset* of YAML 1.2 on one line —

* plain scalars: ``kind: warning``, ``confidence: 0.8``, ``valid_until: null`` (also ``~`` or
  nothing), ``true``/``false``, an ISO time left as its text;
* single-quoted scalars (``'it''s'``), and a trailing `` # comment`` after a plain value;
* flat flow sequences of those: ``sources: [ep-1, 'ep-2']``.

It builds no objects and follows no tags, anchors, aliases or block structure: a value starting
with ``!``, ``&``, ``*``, ``|``, ``>``, ``{``, ``%``, ``@`` or a backquote, a nested sequence, or
a multi-line value is an error. An unknown key or a repeated key is an error too; every error
names its line. (``yes``/``no``/``on``/``off`` are text, as in YAML 1.2.)
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["FrontMatterError", "dump", "split"]

FENCE = "---"
_NULL = frozenset({"null", "Null", "NULL", "~", ""})
_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_INT = re.compile(r"[-+]?[0-9]+")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
_REFUSED_START = frozenset('!&*|>{}%@`"')
_COMMENT = re.compile(r"\s+#.*$")


class FrontMatterError(ValueError):
    """A file whose front matter is not in the subset the mirror reads."""


def dump(fields: Mapping[str, Any]) -> str:
    """``---``, one ``key: <json>`` line per field in the given order, ``---``."""
    lines = [FENCE]
    lines += [f"{key}: {json.dumps(value, ensure_ascii=False)}" for key, value in fields.items()]
    lines.append(FENCE)
    return "\n".join(lines) + "\n"


def _plain(text: str) -> Any:
    """One YAML 1.2 core-schema scalar (plain or single-quoted); ValueError outside the subset."""
    if text.startswith("'"):
        if len(text) < 2 or not text.endswith("'") or "'" in text[1:-1].replace("''", ""):
            raise ValueError(text)
        return text[1:-1].replace("''", "'")
    text = _COMMENT.sub("", text)
    bad_start = text[:1] in _REFUSED_START or text.startswith(("- ", "? ", "[", "]", ","))
    if bad_start or ": " in text or text.endswith(":"):
        raise ValueError(text)
    if text in _NULL:
        return None
    if text in _BOOL:
        return _BOOL[text]
    if _INT.fullmatch(text):
        return int(text)
    if _FLOAT.fullmatch(text):
        return float(text)
    return text


def _flow(text: str) -> list[Any]:
    """A flat flow sequence ``[a, 'b', 3]`` (no nesting, no commas inside quotes)."""
    inner = _COMMENT.sub("", text)
    if not inner.endswith("]"):
        raise ValueError(text)
    inner = inner[1:-1].strip()
    if not inner:
        return []
    items = [item.strip() for item in inner.split(",")]
    if any(not item for item in items):
        raise ValueError(text)
    return [_item(item) for item in items]


def _item(text: str) -> Any:
    if text.startswith('"'):
        return json.loads(text)
    return _plain(text)


def _yaml(text: str) -> Any:
    return _flow(text) if text.startswith("[") else _plain(text)


def _value(key: str, text: str, number: int) -> Any:
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        try:
            value = _yaml(text)
        except ValueError:
            raise FrontMatterError(
                f"line {number}: value of {key!r} is not valid: {text!r}"
            ) from None
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
