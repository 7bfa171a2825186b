"""Slots that name one fact, found from their timelines and names together.

An agent and its tools often name one setting in more than one way. The change is
``config.set roster.mri_oncall=Hollins`` and the roster read prints
``oncall.mri_radiologist=Dr. Hollins``; a directory entry is set as ``directory.legal_fax=…`` and
a lookup prints ``legal_fax=…``. :mod:`reverie.text.assertions` reads each key as its own slot, so
each would keep its own current value, and the key that changed last is not always the one a
question reaches. A value *agrees* with another when it is the other, or a whole-word part of it
("Hollins", "Dr. Hollins"). Two slots of a scope are one fact:

* a bare field of a tool's output (:func:`~reverie.text.assertions.fields`) and a keyed setting,
  when the field's name is the setting's attribute and one of its values agrees with one of the
  setting's: the lookup printed what was set. Later lookups may show values nobody set here;
* two keyed settings, when at least :data:`SHARED` distinct values of one agree with values of
  the other, and they *follow each other*: of the assertions of either made while the other
  already held a value, at least :data:`FOLLOW` agree with the value the other held then. Two
  settings that hold different values at the same time (a primary and a backup region) fail
  this even when they trade values.

A class holds at least one keyed slot: bare fields never make a fact on their own. A page of one
slot superseded by a page of another records that they were joined, so a class, once formed,
never splits back and strands a superseded page.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

from reverie.models import Page
from reverie.text.assertions import Assertion, norm

__all__ = ["FOLLOW", "SHARED", "agree", "alias_classes", "slot_of_topic"]

SHARED = 2
"""Distinct agreeing values two keyed slots need before they can be one fact."""
FOLLOW = 0.5
"""The share of cross-checked assertions that must agree with the other slot's value then."""
_MIN_PART = 3
"""A value shorter than this agrees only with itself ("on", "1" are parts of too much)."""


def agree(a: str, b: str) -> bool:
    """Whether two values name the same thing: equal, or one a whole-word part of the other."""
    x, y = norm(a), norm(b)
    if x == y:
        return True
    short, long = sorted((x, y), key=len)
    if len(short) < _MIN_PART:
        return False
    return re.search(rf"(?<![\w.:-]){re.escape(short)}(?![\w:-]|\.\w)", long) is not None


def slot_of_topic(topic_key: str) -> str:
    """The slot of a fact page's topic key (``fact|subject|attribute|value|start``)."""
    return "|".join(topic_key.split("|")[:3])


def _key(a: Assertion) -> tuple[datetime, str]:
    return (a.episode.created_at, a.episode.id)


def _shared(x: Sequence[Assertion], y: Sequence[Assertion]) -> int:
    values = {a.value_key: a.value for a in y}
    return sum(any(agree(v, w) for w in values.values()) for v in {a.value for a in x})


def _follows(x: Sequence[Assertion], y: Sequence[Assertion]) -> bool:
    held: dict[str, str] = {}
    checked = agreed = 0
    for a in sorted({(a.slot, a.episode.id): a for a in (*x, *y)}.values(), key=_key):
        other = next((v for slot, v in held.items() if slot != a.slot), None)
        if other is not None:
            checked += 1
            agreed += agree(a.value, other)
        held[a.slot] = a.value
    return checked > 0 and agreed >= FOLLOW * checked


def _is_field(timeline: Sequence[Assertion]) -> bool:
    return all(a.field for a in timeline)


def _joined(x: Sequence[Assertion], y: Sequence[Assertion]) -> bool:
    fx, fy = _is_field(x), _is_field(y)
    if fx and fy:
        return False
    if fx or fy:
        field, keyed = (x, y) if fx else (y, x)
        named = norm(field[0].attribute) in {norm(a.attribute) for a in keyed}
        return named and _shared(field, keyed) >= 1
    return _shared(x, y) >= SHARED and _follows(x, y)


def _candidates(
    timelines: Mapping[str, Sequence[Assertion]], fresh: Iterable[str]
) -> set[tuple[str, str]]:
    """Pairs worth testing: a slot with new assertions and one holding a word of its values."""
    by_word: dict[str, set[str]] = defaultdict(set)
    for slot, timeline in timelines.items():
        for a in timeline:
            for word in re.findall(r"\w[\w'-]*", a.value_key):
                if len(word) >= _MIN_PART:
                    by_word[word].add(slot)
    pairs = set()
    for slot in fresh:
        words = {w for a in timelines[slot] for w in re.findall(r"\w[\w'-]*", a.value_key)}
        for other in set().union(*(by_word.get(w, set()) for w in words)) - {slot}:
            pairs.add((min(slot, other), max(slot, other)))
    return pairs


def _linked(pages: Sequence[Page]) -> set[tuple[str, str]]:
    """Slots joined by an earlier cycle: a page superseded by a page of another slot."""
    slot_by_id = {p.id: slot_of_topic(p.topic_key) for p in pages}
    pairs = set()
    for p in pages:
        successor = slot_by_id.get(p.revision.superseded_by or "")
        mine = slot_by_id[p.id]
        if successor is not None and successor != mine:
            pairs.add((min(mine, successor), max(mine, successor)))
    return pairs


def alias_classes(
    timelines: Mapping[str, Sequence[Assertion]], fresh: Iterable[str], pages: Sequence[Page]
) -> list[frozenset[str]]:
    """The slots of ``timelines`` (each slot's assertions, old and new) grouped into facts,
    one class per fact that holds a keyed slot and a slot in ``fresh`` (those with new
    assertions); ``pages`` are the scope's fact pages."""
    fresh = [s for s in fresh if s in timelines]
    parent = {slot: slot for slot in timelines}

    def root(slot: str) -> str:
        while parent[slot] != slot:
            parent[slot] = parent[parent[slot]]
            slot = parent[slot]
        return slot

    tested = {p for p in _candidates(timelines, fresh) if _joined(timelines[p[0]], timelines[p[1]])}
    for x, y in tested | {p for p in _linked(pages) if p[0] in parent and p[1] in parent}:
        parent[root(x)] = root(y)
    classes: dict[str, set[str]] = defaultdict(set)
    for slot in timelines:
        classes[root(slot)].add(slot)
    wanted = {root(s) for s in fresh}
    return [
        frozenset(members)
        for head, members in sorted(classes.items())
        if head in wanted and not all(_is_field(timelines[s]) for s in members)
    ]
