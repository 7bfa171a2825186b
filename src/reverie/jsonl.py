"""Reading JSON lines: every line stands or falls alone, under the number an editor shows.

Lines end at ``\\n`` only (a trailing ``\\r`` is dropped): JSON strings may hold a raw U+2028,
U+2029 or U+0085, which :meth:`str.splitlines` would take for line breaks, splitting a valid
record and shifting every later line number. Each line is decoded as UTF-8 by itself, so one
stray Latin-1 byte fails its own line, not the file; and each is parsed with its nesting
bounded (:func:`reverie.limits.loads_bounded`), so a line nested 100,000 deep is that line's
error instead of a ``RecursionError`` that takes the good lines around it down too.
"""

from __future__ import annotations

from typing import Any

from reverie.limits import MAX_JSON_DEPTH, JsonTooDeep, loads_bounded

__all__ = ["Failure", "Lines", "decode_lines", "parse_line"]

Lines = list[tuple[int, str]]
"""Non-blank lines with their 1-based numbers."""
Failure = tuple[int, str, str]
"""``(line number, field, reason)`` of a line that cannot be used."""


def decode_lines(data: bytes) -> tuple[Lines, list[Failure]]:
    """The non-blank lines of ``data`` as text, and a failure for each that is not UTF-8."""
    lines: Lines = []
    failures: list[Failure] = []
    for number, line in enumerate(data.split(b"\n"), 1):
        raw = line.removesuffix(b"\r")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            reason = f"not UTF-8 text: byte 0x{raw[exc.start]:02x} at column {exc.start + 1}"
            failures.append((number, "encoding", reason))
            continue
        if text.strip():
            lines.append((number, text))
    return lines, failures


def parse_line(text: str) -> Any:
    """One line's JSON value; :class:`ValueError` with a reason a person can act on."""
    try:
        return loads_bounded(text, MAX_JSON_DEPTH)
    except JsonTooDeep as exc:
        raise ValueError(f"invalid JSON: {exc}") from None
    except ValueError as exc:  # json.JSONDecodeError
        msg, col = getattr(exc, "msg", str(exc)), getattr(exc, "colno", None)
        raise ValueError(f"invalid JSON: {msg}" + (f" at column {col}" if col else "")) from None
