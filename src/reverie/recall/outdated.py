"""Evidence a fact's current value outdates: an older episode telling the same setting's value
in words the dream could not read as an assertion.

A setting changes in one way and is told in many: the change is ``config.set
wire.single_approval_limit=USD 120000`` (a fact page), while a policy check printed "single
approval allowed up to USD 175000" a month before, and a note said "GL exports currently go to
ledgerhub-a". Those lines are true of their day, and recall would put them beside the current
value as if they were still so. When a section holds a fact page's claim, an episode of the
section is outdated by it when it was recorded before the page's current value was first
stated, speaks of the same setting (it holds at least half the words of the slot's subject
and attribute), does not name the current value, and names something of the value's own shape
in its place (a number for a number, a name for a name: :func:`shape`). Such a line is cut;
the fact page says what holds now.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from reverie.models import Page, RecallItem, utc
from reverie.recall.query import stems
from reverie.recall.trace import RecallTrace

__all__ = ["outdated_cut", "shape"]

_TOKEN = re.compile(r"[^\s,;:()\[\]{}\"'`]+")


def shape(token: str) -> str:
    """A token's classes of characters, runs collapsed: "120000" -> "9", "Laurentide" ->
    "Aa", "lbx-frankfurt" -> "a-a", "USD" -> "A"."""
    out: list[str] = []
    for ch in token:
        c = "9" if ch.isdigit() else "A" if ch.isupper() else "a" if ch.isalpha() else ch
        if not out or out[-1] != c:
            out.append(c)
    return "".join(out)


@dataclass(frozen=True)
class _Current:
    """One fact page's slot as recall compares evidence with it."""

    words: frozenset[str]
    need: int
    value: str
    tokens: frozenset[str]
    shapes: frozenset[str]
    since: datetime

    @classmethod
    def of(cls, page: Page) -> _Current | None:
        parts = page.topic_key.split("|")
        if len(parts) < 4 or not parts[3]:
            return None
        words = stems(f"{parts[1]} {parts[2]}".replace("_", " ").replace(".", " "))
        tokens = frozenset(t.casefold().strip(".") for t in _TOKEN.findall(parts[3]))
        if not words or not tokens:
            return None
        value = parts[3].casefold()
        since = utc(page.revision.valid_from or page.created_at)
        shapes = frozenset(shape(t) for t in _TOKEN.findall(page.title.rpartition(": ")[2]))
        return cls(words, math.ceil(len(words) / 2), value, tokens, shapes, since)

    def outdates(self, unit: RecallItem) -> bool:
        if unit.kind != "episode" or unit.created_at is None or utc(unit.created_at) >= self.since:
            return False
        text = unit.text.casefold()
        if self.value in text or len(self.words & stems(unit.text)) < self.need:
            return False
        named = _named(unit.text)
        return any(t.casefold() not in self.tokens and shape(t) in self.shapes for t in named)


_OPENS = re.compile(r"(?:^|[.!?:]\s+|\n\s*|\]\s*)$")


def _named(text: str) -> set[str]:
    """The tokens of ``text`` that can name a value in place of another: two characters or
    more, and not a capital a sentence opens with ("Paged the on-call radiologist")."""
    out = set()
    for m in _TOKEN.finditer(text):
        token = m.group(0).strip(".")
        opens = _OPENS.search(text[: m.start()]) is not None
        if len(token) > 1 and not (opens and token[:1].isupper() and token[1:].islower()):
            out.add(token)
    return out


def outdated_cut(
    units: Sequence[RecallItem], pages: Mapping[str, Page], trace: RecallTrace | None = None
) -> list[RecallItem]:
    """``units`` but the episodes a fact page among them outdates (module docstring)."""
    facts = [
        current
        for u in units
        if u.kind == "page" and u.role == "fact" and u.id in pages
        if (current := _Current.of(pages[u.id])) is not None
    ]
    if not facts:
        return list(units)
    out = []
    for unit in units:
        if any(f.outdates(unit) for f in facts):
            if trace is not None:
                trace.cut(unit, "an older statement of a setting a fact page holds now")
            continue
        out.append(unit)
    return out
