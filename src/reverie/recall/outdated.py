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

A person's own words go out of date another way: they announce the change ("The pharmacist
swapped me onto atorvastatin") in words that name no setting, and the question finds both the
announcement and what it replaced. :func:`announced_changes` retires such a statement (the
comment above it says when).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from reverie.models import ClaimRole, Page, RecallItem, Scope, utc
from reverie.recall.query import STOP_WORDS, stem, stems
from reverie.recall.trace import RecallTrace
from reverie.store.base import BrainStore
from reverie.text.stated import Stated, durable_statements
from reverie.text.turns import is_named, is_run_part, is_turn, said, speaker_of

__all__ = [
    "AS_NEAR",
    "CHANGE",
    "CONSIDERED",
    "NEAREST",
    "Relevance",
    "announced_changes",
    "announces",
    "outdated_cut",
    "shape",
]

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


# -- a change a speaker announces ------------------------------------------------------------
#
# A change a speaker announces retires what they said before it.
#
# People tell a change in words that name no slot: "The pharmacist swapped me onto atorvastatin",
# "We changed our minds about where to go, and Norway won", "new boss: Ferdinand". No parse of
# the sentence says which earlier statement it replaces ("I take propranolol every morning", "We're
# planning to move to Uruguay"), and their words barely overlap. The question does: it found both.
# So, among the units one recall found, a person's statement is **stale** when
#
# * a newer statement of the same speaker is among the same units, both among the speaker's
#   :data:`NEAREST` statements there,
# * that newer one announces a change (:data:`CHANGE`: words English uses to say something is no
#   longer as it was, "now", "switched", "instead", "no longer", "new", ...),
# * the two disagree: each holds a content word the other lacks (a restatement, or the same
#   turn reached twice, retires nothing);
# * and, where the embedder's cosines to the question are known, the announcement is nearly as
#   close to it as the older statement (at least :data:`AS_NEAR` of its cosine): a weak match
#   that happens to say "now" does not retire the statement the question is about.
#
# The stale unit is left out and the announcement takes its rank, if it ranked lower.
#
# This holds where a person tells an app about themselves: the app keeps what they said of
# their life and wishes, and a change told to it replaces a value. Between people named in a
# transcript (LoCoMo's friends, a meeting), the turns are a story of events, each true of its
# day: "Last Friday I finally took the kids to a pottery workshop" replaces nothing said of
# pottery before. So a statement is an episode that is a turn of a dialogue spoken by a role,
# not a named person (:func:`reverie.text.turns.is_turn`, :func:`reverie.text.turns.is_named`),
# or a page claim citing only such turns. Its time is its newest turn's; its words are the
# speaker's own (a turn's excerpt may quote the other side's reply, which announces nothing).
# Agent work (episodes with no speaker) and lessons are never touched, and two speakers never
# retire each other's words. Only the first :data:`CONSIDERED` units are compared.

CHANGE = re.compile(
    r"\b(?:now|nowadays|anymore|any\s+more|no\s+longer|these\s+days|from\s+now\s+on|after\s+all"
    r"|instead|used\s+to|new|finally|gave\s+up|switched|switching|changed|changing|moved"
    r"|replaced|swapped|t[ao]ken\s+over|took\s+over)\b",
    re.IGNORECASE,
)
"""Words that tell a change in English: adverbs of a new state of affairs ("now", "anymore",
"no longer", "these days", "after all", "instead"), the contrast with before ("used to",
"new", "finally") and verbs of change in their past forms ("switched", "moved", "replaced")."""

_STOP_STEMS = frozenset(stem(w) for w in STOP_WORDS)

_LASTING = re.compile(
    r"\bfor\s+(?:\w+\s+){0,3}(?:years?|months?|weeks?|days?|decades?|ages|a\s+while)\s+now\b",
    re.IGNORECASE,
)
"""How long something has held ("vegetarian for about six years now"): a "now" that tells no
change."""


def announces(text: str) -> bool:
    """Whether ``text`` tells a change (:data:`CHANGE`), a lasting "for years now" aside."""
    return CHANGE.search(_LASTING.sub(" ", text)) is not None


CONSIDERED = 24
"""Units compared, best first: more than a 750-word section holds."""

NEAREST = 3
"""A speaker's statements compared, nearest to the question first: a change and the value it
replaces are what the question is about, so both are among the speaker's few best; lower
down, a "now" or a "new" tells of something else."""

AS_NEAR = 0.6
"""The least share of an older statement's cosine to the question that an announcement must
reach to retire it (chosen on two chat sets: the retirements that were right had 0.44-1.5 of
it, the three wrong ones 0.53-0.56)."""

Relevance = Callable[[Sequence[RecallItem]], list[float | None]]
"""Each unit's cosine to the question, ``None`` where unknown."""


@dataclass(frozen=True)
class _Statement:
    index: int
    speaker: str
    when: datetime
    turns: frozenset[str]
    words: frozenset[str]
    announces: bool
    slots: frozenset[str]
    """The one-value attributes the statement reader finds in it (where one lives, works...)."""


def announced_changes(
    store: BrainStore,
    scope: Scope,
    units: Sequence[RecallItem],
    trace: RecallTrace | None = None,
    relevance: Relevance | None = None,
) -> list[RecallItem]:
    """``units`` less every statement a newer announcement among them retires (module doc)."""
    head = list(units[:CONSIDERED])
    if not any(announces(u.text) for u in head):
        return list(units)
    statements = _nearest(_statements(store, scope, head))
    if not any(s.announces for s in statements):
        return list(units)
    cosines = relevance(head) if relevance is not None else [None] * len(head)
    retired: dict[int, _Statement] = {}
    for old in statements:
        newer = _announcement(old, statements, cosines)
        if newer is not None:
            retired[old.index] = newer
    if not retired:
        return list(units)
    lifted = _lifted(head, retired)
    out = [u for i, u in enumerate(lifted) if i not in retired]
    if trace is not None:
        for i, newer in retired.items():
            reason = f"a newer statement announces a change: {head[newer.index].text}"
            trace.cut(head[i], reason[:200])
    out.sort(key=lambda u: -u.score)
    return out + list(units[CONSIDERED:])


def _nearest(statements: Sequence[_Statement]) -> list[_Statement]:
    """The statements among each speaker's :data:`NEAREST` first (distinct turns, best
    first)."""
    seen: dict[str, list[frozenset[str]]] = {}
    out: list[_Statement] = []
    for s in statements:
        turns = seen.setdefault(s.speaker, [])
        if s.turns not in turns:
            turns.append(s.turns)
        if turns.index(s.turns) < NEAREST:
            out.append(s)
    return out


def _announcement(
    old: _Statement, statements: Sequence[_Statement], cosines: Sequence[float | None]
) -> _Statement | None:
    for new in statements:
        if (
            new.announces
            and new.speaker == old.speaker
            and new.when > old.when
            and not (new.turns & old.turns)
            and new.words - old.words
            and old.words - new.words
            and _near_enough(cosines[old.index], cosines[new.index])
            and not _other_slots(old, new)
        ):
            return new
    return None


def _other_slots(old: _Statement, new: _Statement) -> bool:
    """Whether the statement reader knows what the announcement changes, and the older
    statement is not of it: "I just started a new job at Hooli" changes the employer, which
    retires no "I live in Lisbon" and no "I've been vegetarian for years"."""
    return bool(new.slots) and not old.slots & new.slots


def _single(text: str) -> list[Stated]:
    return [s for s in durable_statements(text) if s.single]


def _near_enough(old: float | None, new: float | None) -> bool:
    return old is None or new is None or new >= AS_NEAR * old


def _lifted(units: list[RecallItem], retired: dict[int, _Statement]) -> list[RecallItem]:
    """``units`` with each announcement scored at least as the best statement it retires."""
    best: dict[int, float] = {}
    for i, newer in retired.items():
        best[newer.index] = max(best.get(newer.index, 0.0), units[i].score)
    return [
        u.model_copy(update={"score": best[i]}) if best.get(i, 0.0) > u.score else u
        for i, u in enumerate(units)
    ]


STATED_BY = 4
"""The most turns a page claim that is a person's statement cites: what they said, and the
times they said it again; a claim citing more is distilled work, never read for speakers."""


def _sources(unit: RecallItem) -> list[str]:
    """The episodes whose speakers make ``unit`` a statement: an episode is its own; a fact or
    plain claim, its few citations; any other claim, none."""
    if unit.kind == "episode":
        return [unit.id]
    stated = unit.role in (None, ClaimRole.FACT) and len(unit.citations) <= STATED_BY
    return list(unit.citations) if stated else []


def _statements(store: BrainStore, scope: Scope, units: Sequence[RecallItem]) -> list[_Statement]:
    sources = {i: _sources(u) for i, u in enumerate(units)}
    wanted = {e for ids in sources.values() for e in ids}
    episodes = {e.id: e for e in store.episodes(wanted, tenant=scope.tenant)} if wanted else {}
    out: list[_Statement] = []
    for i, unit in enumerate(units):
        if not sources[i]:
            continue
        turns = [episodes[e] for e in sources[i] if e in episodes]
        if not turns or len(turns) < len(sources[i]):
            continue
        if not all(is_turn(t) and not is_run_part(t) and not is_named(t) for t in turns):
            continue
        speakers = {speaker_of(t) for t in turns}
        if len(speakers) != 1:
            continue
        text = said(turns[0]) if unit.kind == "episode" else unit.text
        out.append(
            _Statement(
                index=i,
                speaker=speakers.pop(),
                when=max(utc(t.created_at) for t in turns),
                turns=frozenset(t.id for t in turns),
                words=stems(text) - _STOP_STEMS,
                announces=announces(text),
                slots=frozenset(a.attribute for t in turns for a in _single(said(t))),
            )
        )
    return out
