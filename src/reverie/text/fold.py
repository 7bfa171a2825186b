"""Text as a person reads it: one spelling for what looks and reads the same.

The same word reaches a store in many encodings: composed ``å`` (U+00E5) or ``a`` followed by a
combining ring (U+030A), ``ß`` or ``SS``, a full-width ``Ａ``, a ligature ``ﬁ``, any letter case.
:func:`fold` maps them all to one form, Unicode's compatibility normalisation around a full
case fold (NFKC, casefold, NFKC again: the fold can leave text unnormalised, as ``ǰ`` does), so
that "does this text mention X" is asked of what the text says, not of its bytes.

:func:`find` answers it with positions in the *original* text, so the caller can replace what
was found and keep everything around it. A text is read as *segments* — a character and the
combining marks that follow it — each folded on its own; a match covers whole segments, so
replacing it never leaves a stray accent behind.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

__all__ = ["find", "fold", "folded_in"]


def fold(text: str) -> str:
    """``text`` in its one comparable spelling (see the module docstring)."""
    if text.isascii():
        return text.lower()  # NFKC leaves ASCII as it is; its case fold is its lower case
    once = unicodedata.normalize("NFKC", text)
    return unicodedata.normalize("NFKC", once.casefold())


def folded_in(needle: str, text: str) -> bool:
    """Whether ``text`` reads as containing ``needle`` (both folded)."""
    return bool(needle) and fold(needle) in fold(text)


def _segments(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each character with the combining marks after it."""
    out: list[tuple[int, int]] = []
    for i, ch in enumerate(text):
        if out and unicodedata.combining(ch):
            out[-1] = (out[-1][0], i + 1)
        else:
            out.append((i, i + 1))
    return out


def _mapped(text: str) -> tuple[str, list[tuple[int, int]]]:
    """The folded text, and for each of its characters the original segment it came from."""
    if text.isascii():
        return text.lower(), [(i, i + 1) for i in range(len(text))]
    parts: list[str] = []
    owner: list[tuple[int, int]] = []
    for start, end in _segments(text):
        piece = fold(text[start:end])
        parts.append(piece)
        owner += [(start, end)] * len(piece)
    return "".join(parts), owner


def find(text: str, needles: Iterable[str]) -> list[tuple[int, int]]:
    """The spans of ``text`` that read as one of ``needles``, merged, in order.

    Each span covers whole segments of the original text. Where folding the text as a whole
    differs from folding it segment by segment (a rare composition across segments), a text
    that holds a needle as a whole but in no segment-wise span is found whole: a needle is
    never reported absent from a text that holds it."""
    wanted = [f for f in {fold(n) for n in needles} if f]
    if not text or not wanted:
        return []
    folded, owner = _mapped(text)
    spans = [
        (owner[at][0], owner[at + len(f) - 1][1]) for f in wanted for at in _occurrences(folded, f)
    ]
    if not spans and any(f in fold(text) for f in wanted):
        return [(0, len(text))]
    return _merged(spans)


def _occurrences(text: str, needle: str) -> Iterable[int]:
    at = text.find(needle)
    while at >= 0:
        yield at
        at = text.find(needle, at + 1)


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out
