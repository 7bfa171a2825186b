"""Free-text value statements: which value of "the same sentence" is current.

Structured facts (:mod:`reverie.dream.facts`) name their slot; free text does not. Two statements
are about one *slot* when they are the same sentence except for their *value tokens*:

* URLs, quoted strings (``"…"``, ``'…'``, `````…`````), IP addresses and hostnames (with an
  optional ``:port``), ports (``:5432``), versions (``1.2.3``, ``v2``), numbers (``30``, ``2.5``,
  ``90%``), identifiers with digits (``node-3``, ``py311``, ``us-east-1``, and with dots,
  ``ubuntu-22.04-8core``) and upper-case names joined by underscores (``TRANSFORM_WH``: a
  constant, as written, never a word of prose).

The slot key is the sentence with each value token masked as ``<v>``, lowercased, punctuation
gone, and lightly normalised so that wording around a change does not split a slot:

* articles and time/change words are dropped (``the``, ``now``, ``currently``, ``is``, ``was``,
  ``changed``, ``moved``, ``switched``, ``set``, ``to``…);
* a unit noun right before a value is dropped (``on port 5433`` reads as ``on 5433``);
* ``from <v> to <v>`` keeps only the new value.

A JSON object in the text (``deploy {"service": "api", "version": "1.0"}``) is no part of
any sentence's value: it holds one call's arguments or one record's fields, each its own
parameter, so a later call with other arguments replaces nothing. It is read as if absent
(structured facts are read by :mod:`reverie.text.assertions`).

So "the staging db listens on 5432" and "staging DB now listens on port 5433" share the slot
``staging db listens on <v>``. A sentence with no value token, or with fewer than two words
besides them, is not a value statement: "Escalate to expert-desk" says too little to be one
slot wherever it is met. A caller that knows the statements come from one context (one
problem's lessons, one tool's pages) may accept one word (``least=1``).

:func:`resolve` is pure and order-free. Per slot, the asserted statements are ordered by
``(created_at, episode_id, text)``; consecutive equal values form a span, valid from its first
statement until the next span's first. The last span is ``current``, the earlier ones are
``superseded`` with their ``valid_until``. An unasserted statement (a mention: quoted, reported,
hypothetical — the caller decides) is kept in ``mentions`` and never decides the value. Hence:
the result does not depend on input order; adding a statement older than a slot's newest
asserted one never changes its current value; adding a newer asserted one always makes its value
current.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

__all__ = ["Slot", "SlotValue", "Span", "Statement", "resolve", "slot_of"]

MASK = "<v>"
_VALUE = re.compile(
    r"""
      [a-z][a-z0-9+.-]*://[^\s"'<>]+                     # URL
    | "[^"\n]+" | `[^`\n]+` | (?<![\w'])'[^'\n]+'(?![\w'])   # quoted
    | \b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b               # IPv4[:port]
    | \b(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,}(?::\d+)?\b   # hostname[:port]
    | (?<![\w.]):\d{2,5}\b                                # :port
    | (?<![\w\#])\#[a-z][\w-]*                             # #channel
    | (?<![\w@])@[a-z][\w.-]*                               # @handle
    | \b(?=[a-z0-9.-]*\d)[a-z][a-z0-9]*(?:-[a-z0-9]+)+(?:\.[a-z0-9]+(?:-[a-z0-9]+)*)+\b
                                                          # dotted label (ubuntu-22.04-8core)
    | \b[a-z][a-z0-9]*(?:-[a-z0-9]+){1,4}\b                # hyphenated name (svc-bi-reader)
    | (?-i:\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+){1,4}\b)          # CONSTANT_NAME (TRANSFORM_WH)
    | \bv?\d+(?:\.\d+)+[a-z0-9-]*\b | \bv\d+\b           # version
    | \b(?=[\w-]*\d)(?=[\w-]*[a-z])[a-z0-9][\w-]*\b      # identifier with digits
    | [-+]?\b\d+(?:[.,]\d+)?%?                           # number
    """,
    re.IGNORECASE | re.VERBOSE,
)
_JSON = re.compile(r'\{[^{}]*"[^"{}]*"\s*:[^{}]*\}')
"""A flat JSON object (``{"key": value, ...}``); nested ones go innermost first."""
_JSON_DEPTH = 4
_WORD = re.compile(r"<v>|[^\W_]+")
_FILLER = frozenset(
    {
        "the", "a", "an", "now", "currently", "presently", "still", "again", "anymore", "today",
        "is", "are", "was", "were", "be", "been", "being", "has", "have", "had", "got", "gets",
        "changed", "change", "changes", "moved", "move", "moves", "switched", "switch",
        "switches", "updated", "update", "updates", "set", "became", "become", "becomes", "to",
    }
)  # fmt: skip
_UNITS = frozenset({"port", "version", "ver", "release", "build", "rev", "number", "no"})
_TRIM = ".,;:!?)("


@dataclass(frozen=True)
class Statement:
    """A sentence some episode said at ``created_at``; ``asserted`` False for a mention."""

    text: str
    created_at: datetime
    episode_id: str
    asserted: bool = True

    def order(self) -> tuple[datetime, str, str, bool]:
        return (self.created_at, self.episode_id, self.text, self.asserted)


@dataclass(frozen=True)
class SlotValue:
    """A statement read as ``key`` (the masked sentence) holding ``value``."""

    key: str
    value: str
    value_key: str


@dataclass(frozen=True)
class Span:
    """Consecutive asserted statements of one value, valid from ``valid_from`` until
    ``valid_until`` (None: still current)."""

    value: str
    statements: tuple[Statement, ...]
    valid_until: datetime | None

    @property
    def valid_from(self) -> datetime:
        return self.statements[0].created_at

    @property
    def episode_ids(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(s.episode_id for s in self.statements))


@dataclass(frozen=True)
class Slot:
    """One slot's timeline: the current value, the superseded ones (oldest first), mentions."""

    key: str
    current: Span | None
    superseded: tuple[Span, ...]
    mentions: tuple[Statement, ...]

    @property
    def changed(self) -> bool:
        return bool(self.superseded)


def _value_key(token: str) -> str:
    core = token.strip(_TRIM).strip("\"'`").casefold()
    return core[1:] if re.fullmatch(r"v\d[\w.-]*", core) else core


def _words(masked: str) -> list[str]:
    words = _WORD.findall(masked.lower())
    out: list[str] = []
    for i, word in enumerate(words):
        if word in _UNITS and i + 1 < len(words) and words[i + 1] == MASK:
            continue  # "on port <v>" reads as "on <v>"
        out.append(word)
    return out


def _from_to(words: list[str], values: list[str]) -> tuple[list[str], list[str]]:
    """``from <v> to <v>``: keep the new value only (before filler words go)."""
    for i in range(len(words) - 3):
        if words[i : i + 2] == ["from", MASK] and words[i + 2 : i + 4] == ["to", MASK]:
            gone = words[: i + 1].count(MASK)
            return words[:i] + words[i + 2 :], values[:gone] + values[gone + 1 :]
    return words, values


def _masked(text: str, found: Sequence[re.Match[str]]) -> str:
    """``text`` with each value token in ``found`` (its matches, in order) as `` <v> ``: the
    same string as substituting the pattern, without scanning the text a second time."""
    parts, at = [], 0
    for m in found:
        parts += [text[at : m.start()], f" {MASK} "]
        at = m.end()
    parts.append(text[at:])
    return "".join(parts)


def _without_json(text: str) -> str:
    """``text`` with its JSON objects (to :data:`_JSON_DEPTH` levels) taken out."""
    for _ in range(_JSON_DEPTH):
        if "{" not in text:
            break
        text = _JSON.sub(" ", text)
    return text


def slot_of(text: str, least: int = 2) -> SlotValue | None:
    """``text`` as a value statement (see the module docstring), or None: one with ``least``
    content words besides its values."""
    text = _without_json(text)
    found = list(_VALUE.finditer(text))
    if not found:
        return None
    values = [m.group(0).rstrip(_TRIM) or m.group(0) for m in found]
    words, values = _from_to(_words(_masked(text, found)), values)
    kept = [w for w in words if w not in _FILLER]
    content = [w for w in kept if w != MASK]
    if len(content) < least or not any(len(w) > 2 for w in content):
        return None
    return SlotValue(
        key=" ".join(kept),
        value=" ".join(values),
        value_key=" ".join(_value_key(v) for v in values),
    )


def _spans(asserted: Sequence[tuple[Statement, SlotValue]]) -> list[Span]:
    chunks: list[list[tuple[Statement, SlotValue]]] = []
    for pair in asserted:
        if chunks and chunks[-1][-1][1].value_key == pair[1].value_key:
            chunks[-1].append(pair)
        else:
            chunks.append([pair])
    spans = []
    for i, chunk in enumerate(chunks):
        until = chunks[i + 1][0][0].created_at if i + 1 < len(chunks) else None
        latest = chunk[-1][1].value  # the newest wording of the value
        spans.append(Span(latest, tuple(s for s, _v in chunk), until))
    return spans


def _slot(key: str, pairs: Sequence[tuple[Statement, SlotValue]]) -> Slot:
    asserted = [p for p in pairs if p[0].asserted]
    mentions = tuple(s for s, _v in pairs if not s.asserted)
    spans = _spans(asserted)
    current = spans[-1] if spans else None
    return Slot(key, current, tuple(spans[:-1]), mentions)


def resolve(statements: Iterable[Statement]) -> list[Slot]:
    """Every slot the value statements among ``statements`` fill, sorted by key (pure)."""
    by_key: dict[str, list[tuple[Statement, SlotValue]]] = defaultdict(list)
    for statement in sorted(set(statements), key=Statement.order):
        parsed = slot_of(statement.text)
        if parsed is not None:
            by_key[parsed.key].append((statement, parsed))
    return [_slot(key, by_key[key]) for key in sorted(by_key)]
