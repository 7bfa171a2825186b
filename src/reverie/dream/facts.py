"""Facts: what is *current* about a subject is decided by the timestamps of the evidence.

An episode *asserts* a fact when it says that some attribute of a subject has a value (DESIGN
invariant 6), in structured form or as a speaker's durable statement; which episodes do is read
by :mod:`reverie.text.assertions`. A mention never starts, ends or reinforces a run:
:func:`assertions` leaves it out, so an episode that only mentions facts is ordinary experience.

A speaker's statement ("I'm allergic to nuts", "I now work at Stripe") makes a page whose claim
is the sentence as said, cited to the turn; its kind is ``preference`` for a wish or a standing
instruction, else ``fact``. Relations that hold one value at a time (where one lives or works,
the reply language, a name, ``my X is Y``) share a slot, so the later statement supersedes the
earlier one as below; any other statement is its own slot and only reinforces itself.

Subject, attribute and value are compared case-insensitively with whitespace collapsed. The
assertions about one *slot* (subject, attribute), from every episode the slot's pages cite plus the
new ones, are ordered by ``(created_at, id)`` — the time the evidence was recorded, never ``seq``,
so late-arriving old evidence cannot win. Consecutive assertions of one value form a *run*; each
run is one page, valid from its first assertion until the first assertion of the next run. The
last run is active; every earlier run is superseded with ``valid_until`` set and
``superseded_by`` naming its successor — kept and readable for "as of" questions. The same
evidence, in any arrival order and split over any number of cycles, gives the same runs.

An assertion dated after the cycle's *horizon* (its ``now`` plus ``MemoryConfig.future_skew_s``)
is ignored: ingest refuses such episodes, and one stored before that rule cannot stay "newest"
for ever. A page whose run lies wholly beyond the horizon is superseded by the current run.

A fact page's other claims are the lessons of its asserting episodes that speak of the fact:
they share a word with its subject, attribute or value ("Escalate missed pickups to the
freight contact before 3pm"). A lesson about something else that one of them happened to carry
("Task completed according to the standard flow.") is no claim of the fact.

Structured fact episodes are consolidated here only; they do not also feed the topic pages of
:mod:`reverie.dream.cluster`, where old and new values would sit side by side. A turn whose
only assertions are spoken also feeds its dialogue page: the dialogue keeps what was said when,
the fact page what holds now.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from itertools import chain

from reverie.dream.aliases import agree, alias_classes, slot_of_topic
from reverie.dream.apply import WriteContext, next_revision, revision_from
from reverie.models import (
    Claim,
    ClaimRole,
    Episode,
    Outcome,
    Page,
    PageKind,
    PageStatus,
    PageSupport,
    Revision,
)
from reverie.models.plan import page_id_for
from reverie.recall.query import STOP_WORDS, stem, stems
from reverie.redaction import redact
from reverie.store.base import Observation, PageWrite
from reverie.text.assertions import (
    PREFIX,
    Assertion,
    assertions,
    asserts_fact,
    fields,
    mentions,
    norm,
)

__all__ = [
    "PREFIX",
    "Assertion",
    "FactResult",
    "Run",
    "assertions",
    "asserts_fact",
    "fact_writes",
    "mentions",
    "runs",
    "slot_writes",
    "split",
]

MAX_LESSONS = 8
_STOP_STEMS = frozenset(stem(w) for w in STOP_WORDS)


@dataclass(frozen=True)
class Run:
    """Consecutive assertions of one value: valid from ``start`` until ``end`` (None: still)."""

    slot: str
    assertions: tuple[Assertion, ...]
    end: datetime | None

    @property
    def start(self) -> datetime:
        return self.assertions[0].episode.created_at

    @property
    def topic_key(self) -> str:
        return f"{self.slot}|{self.assertions[0].value_key}|{self.start.isoformat()}"


def _timeline_key(a: Assertion) -> tuple[datetime, str]:
    return (a.episode.created_at, a.episode.id)


def runs(timeline: Iterable[Assertion]) -> list[Run]:
    """The runs of one slot's assertions, oldest first (see the module docstring)."""
    unique = {a.episode.id: a for a in timeline}
    ordered = sorted(unique.values(), key=_timeline_key)
    chunks: list[list[Assertion]] = []
    for a in ordered:
        if chunks and _same_value(chunks[-1][-1], a):
            chunks[-1].append(a)
        else:
            chunks.append([a])
    out = []
    for i, chunk in enumerate(chunks):
        end = chunks[i + 1][0].episode.created_at if i + 1 < len(chunks) else None
        out.append(Run(chunk[0].slot, tuple(chunk), end))
    return out


def _same_value(a: Assertion, b: Assertion) -> bool:
    """One value: the same key, or across two aliased slots one naming the other ("Hollins",
    "Dr. Hollins"); within one slot any other spelling is a change."""
    return a.value_key == b.value_key or (a.slot != b.slot and agree(a.value, b.value))


# -- page content of a run ----------------------------------------------------------------------


def _label(a: Assertion) -> str:
    return f"{a.subject} {a.attribute}" if a.subject else a.attribute


def _day(value: datetime) -> str:
    return value.date().isoformat()


def _claims(run: Run) -> tuple[Claim, ...]:
    latest = run.assertions[-1]
    eps = [a.episode for a in run.assertions]
    n = len(eps)
    when = _day(eps[0].created_at)
    if n > 1:
        when = f"{when} to {_day(eps[-1].created_at)}"
    times = "once" if n == 1 else f"{n}×"  # no word a question could match ("state", "time")
    head = f"{_label(latest)} is {latest.value} ({times}, {when})."
    if latest.said is not None:  # a speaker's own words, not a restatement of them
        head = f"{latest.subject}: {latest.said}"  # dated by its page; counted in support
    claims = [Claim(text=redact(head), episode_ids=tuple(e.id for e in eps), role=ClaimRole.FACT)]
    lessons: dict[str, list[Episode]] = defaultdict(list)
    texts: dict[str, str] = {}
    about = _words(f"{_label(latest)} {latest.value}")
    for ep in eps:
        if ep.lesson and ep.lesson.strip() and _words(ep.lesson) & about:
            key = norm(ep.lesson)
            texts.setdefault(key, " ".join(ep.lesson.split()))
            lessons[key].append(ep)
    for key in list(lessons)[:MAX_LESSONS]:
        text = redact(texts[key])[:4000]
        ids = tuple(e.id for e in lessons[key])
        claims.append(Claim(text=text, episode_ids=ids, role=ClaimRole.LESSON))
    return tuple(claims)


def _words(text: str) -> frozenset[str]:
    """The stems of ``text``'s content words (a dotted or snake-case key split into its own)."""
    return stems(text.replace("_", " ").replace(".", " ")) - _STOP_STEMS


def _confidence(run: Run) -> float:
    """Support saturates as in the extractive distiller; a fact has no mixed outcomes."""
    support = sum(max(0.5, (a.episode.importance or 5) / 5) for a in run.assertions)
    return round(0.95 * (1 - 0.6**support), 3)


def _support(run: Run, earlier: Sequence[Run]) -> PageSupport:
    eps = [a.episode for a in run.assertions]
    gone = {r.assertions[-1].value: run.start for r in earlier}
    gone.pop(run.assertions[-1].value, None)
    return PageSupport(
        episodes=len(eps),
        successes=sum(ep.outcome is Outcome.SUCCESS for ep in eps),
        first_seen=eps[0].created_at,
        last_seen=eps[-1].created_at,
        superseded=gone,
    )


def _kind(run: Run) -> PageKind:
    prefer = any(
        a.preference or "prefer" in (a.episode.category or "").lower() for a in run.assertions
    )
    return PageKind.PREFERENCE if prefer or "prefer" in run.slot else PageKind.FACT


def _title(a: Assertion) -> str:
    return f"{a.subject}: {a.said}" if a.said is not None else f"{_label(a)}: {a.value}"


def _fields(
    run: Run, successor: Run | None, scope_pages: Mapping[str, str], earlier: Sequence[Run] = ()
) -> dict[str, object]:
    """A run's page; the current run's tallies name the values it replaced, so recall can leave
    out old evidence of them."""
    latest = run.assertions[-1]
    fields: dict[str, object] = {
        "title": redact(_title(latest))[:200],
        "kind": _kind(run),
        "claims": _claims(run),
        "confidence": _confidence(run),
        "status": PageStatus.ACTIVE,
        "valid_from": run.start,
        "valid_until": None,
        "superseded_by": None,
        "reason": None,
        "support": _support(run, earlier if successor is None else ()),
    }
    if successor is not None:
        first = successor.assertions[0]
        fields |= {
            "status": PageStatus.SUPERSEDED,
            "valid_until": run.end,
            "superseded_by": scope_pages[successor.topic_key],
            "reason": redact(
                f"newer evidence {first.episode.id} ({first.episode.created_at.isoformat()})"
                f" says {_label(first)} is {first.value}"
            )[:1000],
        }
    return fields


# -- writes for a cycle -------------------------------------------------------------------------


@dataclass
class FactResult:
    """What the fact path adds to a cycle: writes, consolidated episodes, reinforcement."""

    writes: list[tuple[str, PageWrite, int]] = field(default_factory=list)
    marks: list[str] = field(default_factory=list)
    observations: list[Observation] = field(default_factory=list)


def _write(
    ctx: WriteContext, page: Page | None, page_id: str, topic: str, fields: dict[str, object]
) -> tuple[str, PageWrite] | None:
    if page is None:
        rev = revision_from(page_id, 1, ctx, **fields)  # type: ignore[arg-type]
        return "created", PageWrite(ctx.scope, topic, rev, None)
    rev = next_revision(ctx, page, **fields)
    if rev.hash == page.revision.hash:
        return None
    action = _action(page.revision, rev)
    return action, PageWrite(ctx.scope, topic, rev, page.revision.number)


def _action(before: Revision, after: Revision) -> str:
    if after.status is PageStatus.SUPERSEDED and before.status is not PageStatus.SUPERSEDED:
        return "superseded"
    return "revised"


def _absorbed(
    page: Page, desired: Sequence[Run], ids: Mapping[str, str], horizon: datetime | None
) -> dict[str, object]:
    """An old run page no longer in the timeline's runs: late evidence moved its start, or its
    evidence is dated beyond the cycle's horizon."""
    start = page.revision.valid_from or page.created_at
    cover = next((r for r in reversed(desired) if r.start <= start), desired[0])
    reason = f"absorbed into {ids[cover.topic_key]}: earlier evidence moved the run's start"
    if horizon is not None and start > horizon:
        reason = (
            f"dated {start.isoformat()}, after this cycle's clock ({horizon.isoformat()});"
            f" {ids[cover.topic_key]} holds the current value"
        )
    return {
        "status": PageStatus.SUPERSEDED,
        "valid_until": page.revision.valid_from,
        "superseded_by": ids[cover.topic_key],
        "reason": reason,
    }


def _within(found: Iterable[Assertion], horizon: datetime | None) -> list[Assertion]:
    return [a for a in found if horizon is None or a.episode.created_at <= horizon]


def slot_writes(
    ctx: WriteContext,
    new: Sequence[Assertion],
    pages: Sequence[Page],
    past: Sequence[Assertion],
    horizon: datetime | None = None,
) -> FactResult:
    """Writes for one fact (one slot, or several aliased ones, :mod:`reverie.dream.aliases`):
    ``pages`` are its pages and ``past`` what the episodes they cite assert about it.
    Assertions dated after ``horizon`` are ignored (see the module docstring)."""
    new = _within(new, horizon)
    if not new:
        return FactResult()
    desired = runs(_as_setting([*_within(past, horizon), *new]))
    ids = {r.topic_key: page_id_for(ctx.scope, r.topic_key) for r in desired}
    by_id = {p.id: p for p in pages}
    out = FactResult(marks=[a.episode.id for a in new])
    new_ids = {a.episode.id for a in new}
    for i, run in enumerate(desired):
        successor = desired[i + 1] if i + 1 < len(desired) else None
        page_id = ids[run.topic_key]
        fresh = [a.episode for a in run.assertions if a.episode.id in new_ids]
        fields = _fields(run, successor, ids, desired[:i])
        made = _write(ctx, by_id.get(page_id), page_id, run.topic_key, fields)
        if made is not None:
            out.writes.append((made[0], made[1], len(fresh)))
        if fresh:
            last = max(e.created_at for e in fresh)
            out.observations.append(Observation(page_id, len(fresh), last))
    for page in pages:
        if page.id in ids.values() or page.status is PageStatus.RETIRED:
            continue
        fields = _absorbed(page, desired, ids, horizon)
        made = _write(ctx, page, page.id, page.topic_key, fields)
        if made is not None:
            out.writes.append((made[0], made[1], 0))
    return out


def _as_setting(timeline: Sequence[Assertion]) -> list[Assertion]:
    """Bare fields read as the setting they print (its subject and attribute, from its newest
    keyed assertion): ``legal_fax=…`` from a lookup is ``directory.legal_fax``."""
    keyed = [a for a in timeline if not a.field]
    if not keyed:
        return list(timeline)
    name = max(keyed, key=_timeline_key)
    return [
        replace(a, subject=name.subject, attribute=name.attribute) if a.field else a
        for a in timeline
    ]


def split(episodes: Sequence[Episode]) -> tuple[dict[str, list[Assertion]], list[Episode]]:
    """New assertions by slot, and the episodes for clustering: those that assert nothing and
    turns whose assertions are all spoken (see the module docstring)."""
    slots: dict[str, list[Assertion]] = defaultdict(list)
    rest = []
    for ep in episodes:
        found = _readings(ep)
        for a in found:
            slots[a.slot].append(a)
        if all(a.said is not None or a.read for a in found):  # none, spoken, or read in text
            rest.append(ep)
    return dict(sorted(slots.items())), rest


def _readings(ep: Episode) -> list[Assertion]:
    """What ``ep`` asserts, and the bare fields of its output that may name a setting."""
    found = assertions(ep)
    taken = {a.slot for a in found}
    return [*found, *(f for f in fields(ep) if f.slot not in taken)]


def fact_writes(
    ctx: WriteContext,
    slots: Mapping[str, Sequence[Assertion]],
    scope_pages: Sequence[Page],
    cited: Mapping[str, Episode],
    horizon: datetime | None = None,
    earlier: Sequence[Episode] = (),
) -> FactResult:
    """The fact path of a cycle: ``scope_pages`` are the scope's pages (any status) and ``cited``
    the episodes their fact pages cite, by id; ``earlier`` are stored episodes no page cites
    yet that may be a new setting's history (bare fields printing its name). ``slots`` must
    hold no assertion dated after ``horizon`` (the caller defers those); cited ones beyond it
    are ignored."""
    out = FactResult()
    read = {ep.id: _readings(ep) for ep in (*cited.values(), *earlier)}
    timelines: dict[str, list[Assertion]] = defaultdict(list)
    for a in chain(*read.values(), *slots.values()):
        timelines[a.slot].append(a)
    for members in alias_classes(timelines, slots, scope_pages):
        new = [a for slot in sorted(members) for a in slots.get(slot, ())]
        mine = [p for p in scope_pages if slot_of_topic(p.topic_key) in members]
        live = [p for p in mine if p.status is not PageStatus.RETIRED]
        history = [e for p in live for e in p.citations if e in cited]
        history += [ep.id for ep in earlier]
        past = [a for e in history for a in read[e] if a.slot in members]
        part = slot_writes(ctx, new, mine, past, horizon)
        out.writes += part.writes
        out.marks += part.marks
        out.observations += part.observations
    out.marks = list(dict.fromkeys(out.marks))
    return out
