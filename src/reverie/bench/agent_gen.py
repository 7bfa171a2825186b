"""Realistic multi-agent tool episodes for ``reverie bench agent``, deterministic from a seed.

The same code generates every world; the words and the rates come from the world's data
(:mod:`reverie.bench.agent_data`, ``GenConfig.world``), and this module decides when and how often
each is met. Over ``days`` simulated days, each scope of the world (agents of two tenants) works
in a few sessions a day. Into those sessions go:

* **lesson occurrences**: each lesson is met ``count × scale`` times on days spread from a random
  first day to the end, in one of three shapes: a failure whose lesson the agent writes down
  (*reflect*); one or two failures, then a success with the fix (*retry*); the fix used right
  away (*known*). An unstated lesson is always *retry*, its lesson field empty or a template.
  Situations and stated lessons rotate through every phrasing, channels (tools, category) too;
* **facts**: each value of a changing fact is asserted a few times from the day it starts to
  hold, in free text, some also as ``metadata.fact``; after each change, a stray failure still
  uses the previous value (a mention, not an assertion);
* **noise**: routine work with the same tools and one-off failures with unique details. A
  routine success may carry the framework's success filler or the routine's own *note* as its
  lesson, a failure the framework's failure or timeout filler (each at the world's rate);
* **late arrivals**: at the world's ``late`` rate, an episode is ingested with the next day's
  batch, its ``created_at`` unchanged.

Last, a **backfill**: one early day of sessions (lesson occurrences, noise, and the fact values
of that day) that arrives after everything else. The generator records the truth of each episode
(:class:`Truth`) and the probes it is scored by (:class:`Probe`), never in the episodes.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from reverie.bench.agent_data import Channel, Fact, Lesson, Statement, Task, World, load_world

__all__ = ["Dataset", "GenConfig", "Probe", "Truth", "generate"]

_Event = list["_Draft"]


@dataclass(frozen=True)
class GenConfig:
    seed: int = 0
    world: str = "ops"
    """Which world of :data:`reverie.bench.agent_data.WORLDS` to generate."""
    scale: float = 1.0
    """Multiplies every count (lesson occurrences, fact mentions, noise per day)."""
    days: int = 60
    backfill_day: int = 2


@dataclass(frozen=True)
class Truth:
    """What an episode is: ``lesson``, ``fact``, ``stray``, ``routine`` or ``oneoff``."""

    label: str
    key: str = ""
    wording: str = ""
    backfill: bool = False


@dataclass(frozen=True)
class Probe:
    """A question and how its section is scored (see :mod:`reverie.bench.agent`).

    ``kind`` ``lesson``: ``keys`` are the fix's tokens; ``fact``: ``keys`` holds the current
    value and ``stale`` the older ones; ``never``: nothing should come back; ``leak``: a lesson
    of ``home`` asked in another tenant's ``scope``.
    """

    kind: str
    key: str
    scope: str
    query: str
    keys: tuple[str, ...]
    stale: tuple[str, ...] = ()
    home: str | None = None


@dataclass(frozen=True)
class Dataset:
    config: GenConfig
    start: datetime
    scopes: tuple[str, ...]
    days: tuple[tuple[dict[str, Any], ...], ...]
    """Per simulated day, every scope's episodes in ``created_at`` order."""
    backfill: tuple[dict[str, Any], ...]
    truth: Mapping[str, Truth]
    probes: tuple[Probe, ...]

    def episodes(self) -> list[dict[str, Any]]:
        """Every episode in the order it is ingested: day by day, the backfill last."""
        return [ep for day in self.days for ep in day] + list(self.backfill)

    def day_end(self, day: int) -> datetime:
        return self.start + timedelta(days=day + 1)

    @property
    def final(self) -> datetime:
        """When the final dream runs and the probes are asked: an hour after the last day."""
        return self.day_end(len(self.days) - 1) + timedelta(hours=1)


@dataclass
class _Draft:
    situation: str
    action: str
    outcome: str
    tools: tuple[str, ...]
    category: str
    truth: Truth
    details: str | None = None
    error: str | None = None
    lesson: str | None = None
    entities: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)


_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")


class _Picks(dict[str, str]):
    """Placeholder values for one event; remembers which names its templates used.

    Only ``{name}`` of a known placeholder is replaced, so JSON arguments (``{"id": 3}``) in a
    template stay as they are."""

    def __init__(self, values: Mapping[str, str], entities: Sequence[str]) -> None:
        super().__init__(values)
        self.used: set[str] = set()
        self.entity_names = tuple(entities)

    def fill(self, template: str) -> str:
        def one(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in self:
                return match.group(0)
            self.used.add(name)
            return self[name]

        return _PLACEHOLDER.sub(one, template)

    def maybe(self, template: str | None) -> str | None:
        return None if template is None else self.fill(template)

    @property
    def entities(self) -> tuple[str, ...]:
        return tuple(self[n] for n in self.entity_names if n in self.used)


_STATED_SHAPES = (("reflect", 0.35), ("retry", 0.85), ("known", 1.0))


class _Generator:
    """One run of generation: the world, the config, the random stream, the rotations."""

    def __init__(self, world: World, config: GenConfig) -> None:
        self.world, self.config, self.rates = world, config, world.rates
        self.rng = random.Random(config.seed)
        self.turns: dict[str, int] = {}
        self.fact_bounds: dict[str, list[int]] = {}

    def count(self, base: float) -> int:
        return max(1, round(base * self.config.scale))

    def turn(self, name: str, size: int) -> int:
        """The next of ``size`` phrasings for ``name``, from a random start: every phrasing is
        used once ``size`` occurrences have been generated."""
        if name not in self.turns:
            self.turns[name] = self.rng.randrange(size)
        self.turns[name] += 1
        return self.turns[name] % size

    def picks(self) -> _Picks:
        values = {name: self.rng.choice(options) for name, options in self.world.vocab.items()}
        values.update(n=str(self.rng.randint(2, 97)), m=str(self.rng.randint(100, 9000)),
                      sha=f"{self.rng.getrandbits(28):07x}")  # fmt: skip
        return _Picks(values, self.world.entities)

    def chance(self, rate: float) -> bool:
        """True with probability ``rate``; a zero rate draws nothing from the stream."""
        return rate > 0 and self.rng.random() < rate

    def filler(self, outcome: str, rate: float) -> str | None:
        """A filler line of the world for ``outcome`` with probability ``rate``, else None."""
        lines = self.world.filler.get(outcome, ())
        return self.rng.choice(lines) if lines and self.chance(rate) else None

    # -- lessons ---------------------------------------------------------------------------

    def lesson_event(self, lesson: Lesson, backfill: bool = False) -> _Event:
        ch_index = 0
        if len(lesson.channels) > 1 and self.rng.random() < self.rates.channel_switch:
            ch_index = self.rng.randrange(1, len(lesson.channels))
        channel = lesson.channels[ch_index]
        si = self.turn(f"{lesson.key}/{ch_index}/situation", len(channel.situations))
        li = self.turn(f"{lesson.key}/lesson", len(lesson.lessons)) if lesson.stated else -1
        shape = self.shape(lesson)
        truth = Truth("lesson", lesson.key, f"{shape} c{ch_index} s{si} l{li}", backfill)
        picks = self.picks()
        said = picks.fill(lesson.lessons[li]) if li >= 0 else None
        situation = picks.fill(channel.situations[si])
        fails = {"reflect": 1, "retry": self.rng.choice((1, 1, 2)), "known": 0}[shape]
        event = [self.failure(lesson, channel, picks, situation, truth, k) for k in range(fails)]
        if shape == "reflect":
            event[0].lesson = said
        else:
            event.append(self.success(lesson, channel, picks, situation, truth, said))
        for draft in event:
            draft.entities = picks.entities
        return event

    def shape(self, lesson: Lesson) -> str:
        if not lesson.stated:
            return "retry"
        r = self.rng.random()
        return next(name for name, upto in _STATED_SHAPES if r < upto)

    def failure(
        self, lesson: Lesson, channel: Channel, picks: _Picks, situation: str, truth: Truth, k: int
    ) -> _Draft:
        attempt = self.rng.randrange(len(channel.attempts))
        outcome = lesson.fail if k == 0 else "failure"
        return _Draft(
            situation, picks.fill(channel.attempts[(attempt + k) % len(channel.attempts)]),
            outcome, channel.tools, channel.category, truth,
            error=picks.fill(self.rng.choice(channel.errors)),
            lesson=self.filler(outcome, self.rates.filler_failure),
        )  # fmt: skip

    def success(
        self, lesson: Lesson, channel: Channel, picks: _Picks, situation: str, truth: Truth,
        said: str | None,
    ) -> _Draft:  # fmt: skip
        if said is None:
            said = self.rng.choice((None, None, *self.world.filler["success"]))
        return _Draft(
            situation, picks.fill(self.rng.choice(lesson.fixes)), "success", channel.tools,
            channel.category, truth, details=picks.fill(self.rng.choice(lesson.results)),
            lesson=said,
        )  # fmt: skip

    def lesson_plan(self) -> Iterator[tuple[str, int, _Event]]:
        days = self.config.days
        for lesson in self.world.lessons:
            first = self.rng.randrange(max(1, days // 4))
            for _ in range(self.count(lesson.count)):
                day = self.rng.randrange(first, days)
                yield lesson.scope, day, self.lesson_event(lesson)

    # -- facts -----------------------------------------------------------------------------

    def bounds(self, fact: Fact) -> list[int]:
        """The day each value starts to hold (the first is day 0), then ``days``."""
        days, n = self.config.days, len(fact.values)
        out = [0]
        for j in range(1, n):
            day = round(j * days / n) + self.rng.randint(-2, 2)
            out.append(min(max(day, out[-1] + 1), days - (n - j)))
        return [*out, days]

    def statement(self, fact: Fact, j: int, backfill: bool = False) -> _Draft:
        k = self.turn(f"{fact.key}/statement", len(fact.statements))
        said: Statement = fact.statements[k]
        picks = self.picks()
        picks["value"] = fact.values[j]
        draft = _Draft(
            picks.fill(said.situation), picks.fill(said.action), "success", fact.tools,
            fact.category, Truth("fact", fact.key, f"v{j} s{k}", backfill),
            details=picks.maybe(said.details), lesson=picks.maybe(said.lesson),
        )  # fmt: skip
        if fact.structured and (k == 0 or backfill or self.rng.random() < 0.5):
            draft.metadata = {
                "fact": {"subject": fact.subject, "attribute": fact.attribute,
                         "value": fact.values[j]}
            }  # fmt: skip
        draft.entities = picks.entities
        return draft

    def stray(self, fact: Fact, j: int) -> _Draft:
        said = self.rng.choice(fact.strays)
        picks = self.picks()
        picks["old"] = fact.values[j - 1]
        draft = _Draft(
            picks.fill(said.situation), picks.fill(said.action), "failure", fact.tools,
            fact.category, Truth("stray", fact.key, f"v{j - 1}"), error=picks.maybe(said.error),
        )  # fmt: skip
        draft.entities = picks.entities
        return draft

    def fact_plan(self) -> Iterator[tuple[str, int, _Event]]:
        for fact in self.world.facts:
            bounds = self.fact_bounds[fact.key] = self.bounds(fact)
            for j in range(len(fact.values)):
                lo, hi = bounds[j], bounds[j + 1]
                for i in range(self.count(fact.mentions)):
                    day = lo if i == 0 else self.rng.randrange(lo, hi)
                    yield fact.scope, day, [self.statement(fact, j)]
                if j > 0 and hi - lo > 1:
                    yield fact.scope, self.rng.randrange(lo + 1, hi), [self.stray(fact, j)]

    def value_on(self, fact: Fact, day: int) -> int:
        """The index of the value that holds on ``day`` (after :meth:`fact_plan`)."""
        bounds = self.fact_bounds[fact.key]
        return max(j for j in range(len(fact.values)) if bounds[j] <= day)

    # -- noise and the backfill ------------------------------------------------------------

    def task(self, task: Task, label: str, backfill: bool) -> _Event:
        picks = self.picks()
        failed = task.error is not None
        outcome = "success"
        if failed:
            outcome = "timeout" if self.rng.random() < self.rates.timeout else "failure"
            lesson = self.filler(outcome, self.rates.filler_failure)
        else:
            lesson = self.filler("success", self.rates.filler)
            if task.note is not None and self.chance(self.rates.note):
                lesson = task.note
        draft = _Draft(
            picks.fill(task.situation), picks.fill(task.action), outcome, task.tools,
            task.category, Truth(label, backfill=backfill), details=picks.maybe(task.details),
            error=picks.maybe(task.error), lesson=lesson,
        )  # fmt: skip
        draft.entities = picks.entities
        return [draft]

    def noise(self, scope: str, backfill: bool = False) -> list[_Event]:
        base = self.world.noise_per_day[scope] * self.config.scale
        out = []
        for _ in range(max(1, round(base * self.rng.uniform(0.7, 1.3)))):
            if self.rng.random() < self.rates.oneoff:
                out.append(self.task(self.rng.choice(self.world.oneoff[scope]), "oneoff", backfill))
            else:
                out.append(
                    self.task(self.rng.choice(self.world.routine[scope]), "routine", backfill)
                )
        return out

    def backfill(self, scope: str) -> list[_Event]:
        """One old day of ``scope``: noise, three lesson occurrences, the facts as they were."""
        day = self.config.backfill_day
        events = self.noise(scope, backfill=True)
        lessons = [item for item in self.world.lessons if item.scope == scope]
        for lesson in self.rng.sample(lessons, min(3, len(lessons))):
            events.append(self.lesson_event(lesson, backfill=True))
        for fact in self.world.facts:
            if fact.scope == scope:
                events.append([self.statement(fact, self.value_on(fact, day), backfill=True)])
        return events

    # -- sessions --------------------------------------------------------------------------

    def sessions(self, events: list[_Event]) -> list[list[_Draft]]:
        """Events shuffled into sessions of four to nine episodes, an event never split."""
        self.rng.shuffle(events)
        out: list[list[_Draft]] = [[]]
        target = self.rng.randint(4, 9)
        for event in events:
            if len(out[-1]) >= target:
                out.append([])
                target = self.rng.randint(4, 9)
            out[-1].extend(event)
        return [s for s in out if s]

    def timed(self, day: int, events: list[_Event]) -> Iterator[tuple[datetime, int, _Draft]]:
        """(time, session number, draft): sessions spread over 07:00-19:00 of ``day``."""
        sessions = self.sessions(events)
        window = timedelta(hours=12) / max(len(sessions), 1)
        midnight = self.world.start + timedelta(days=day)
        for k, session in enumerate(sessions):
            when = midnight + timedelta(hours=7) + window * k + window * self.rng.random() * 0.3
            for draft in session:
                when += timedelta(seconds=self.rng.randint(60, 360))
                yield when, k, draft


class _Builder:
    """Turns timed drafts into episode dicts with ids numbered per scope in arrival order."""

    def __init__(self) -> None:
        self.numbers: dict[str, int] = defaultdict(int)
        self.truth: dict[str, Truth] = {}

    def add(
        self, scope: str, day: int, timed: Iterator[tuple[datetime, int, _Draft]], base: int = 0
    ) -> list[dict[str, Any]]:
        prefix = scope.replace("/", ".")
        rows = []
        for when, session, draft in sorted(timed, key=lambda row: row[0]):
            self.numbers[scope] += 1
            ident = f"{prefix}.{self.numbers[scope]:05d}"
            self.truth[ident] = draft.truth
            rows.append(
                _episode(draft, ident, scope, when, f"{prefix}.d{day:02d}.s{session + base}")
            )
        return rows


def _episode(draft: _Draft, ident: str, scope: str, when: datetime, session: str) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": ident, "scope": scope, "session_id": session,
        "created_at": when.replace(microsecond=0).isoformat(),
        "situation": draft.situation, "action": draft.action, "outcome": draft.outcome,
    }  # fmt: skip
    optional = (("outcome_details", draft.details), ("error", draft.error),
                ("lesson", draft.lesson))  # fmt: skip
    row.update((name, value) for name, value in optional if value is not None)
    row.update(tools=list(draft.tools), category=draft.category, entities=list(draft.entities))
    if draft.metadata:
        row["metadata"] = draft.metadata
    return row


def _probes(world: World) -> tuple[Probe, ...]:
    out = [Probe("lesson", item.key, item.scope, item.probe, item.keys) for item in world.lessons]
    out += [
        Probe("fact", f.key if len(f.probes) == 1 else f"{f.key}#{i}", f.scope, query,
              (f.values[-1],), f.values[:-1])
        for f in world.facts
        for i, query in enumerate(f.probes)
    ]  # fmt: skip
    out += [
        Probe("never", f"{q.scope}#{i}", q.scope, q.query, q.keys)
        for i, q in enumerate(world.never)
    ]
    for key, scope in world.leaks:
        lesson = world.lesson(key)
        out.append(Probe("leak", key, scope, lesson.probe, lesson.keys, home=lesson.scope))
    return tuple(out)


def _by_time(rows: Sequence[dict[str, Any]]) -> tuple[dict[str, Any], ...]:
    return tuple(sorted(rows, key=lambda row: (row["created_at"], row["id"])))


def generate(config: GenConfig | None = None) -> Dataset:
    """The data set and its probes for ``config`` (the same config, the same bytes)."""
    config = config or GenConfig()
    world = load_world(config.world)
    gen = _Generator(world, config)
    plan: dict[tuple[str, int], list[_Event]] = defaultdict(list)
    for scope, day, event in [*gen.lesson_plan(), *gen.fact_plan()]:
        plan[(scope, day)].append(event)
    builder = _Builder()
    days: list[tuple[dict[str, Any], ...]] = []
    held: list[dict[str, Any]] = []
    for day in range(config.days):
        rows = []
        for scope in world.scopes:
            events = plan[(scope, day)] + gen.noise(scope)
            rows += builder.add(scope, day, gen.timed(day, events))
        last = day == config.days - 1
        late = [] if last else [row for row in rows if gen.chance(world.rates.late)]
        days.append(_by_time([row for row in rows if row not in late] + held))
        held = late
    old = config.backfill_day
    late = [
        row for scope in world.scopes
        for row in builder.add(scope, old, gen.timed(old, gen.backfill(scope)), base=100)
    ]  # fmt: skip
    return Dataset(
        config, world.start, world.scopes, tuple(days), _by_time(late), builder.truth,
        _probes(world),
    )  # fmt: skip
