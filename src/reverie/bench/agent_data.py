"""The hand-written worlds of ``reverie bench agent``, read from ``reverie/data/bench_agent``.

A **world** is a directory ``bench_agent/<name>/`` of TOML files (``world.toml``, ``lessons.toml``)
and nothing else: its scopes and tenants, the words placeholders take, its lessons and their
paraphrases, facts and their values, routine work (with the notes an agent writes on it), one-off
failures, the framework's filler lines for a success, a failure and a timeout, questions about
things that never happen, cross-tenant probes, and the **rates** of its noise. The worlds share no
vocabulary, so that a mechanism fitted to the words of one shows on the others. This module turns
the files into frozen, typed records; generation (:mod:`reverie.bench.agent_gen`) is the same code
for every world and decides how often and when each thing is met.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from importlib.resources import files
from typing import Any

from reverie.errors import InvalidInput

__all__ = [
    "WORLDS",
    "Channel",
    "Fact",
    "Lesson",
    "Question",
    "Rates",
    "Statement",
    "Task",
    "World",
    "load_world",
]

WORLDS = ("ops", "pipelines", "support", "coding")
"""Every world, in the order the family table prints them."""


def _strs(data: Mapping[str, Any], key: str) -> tuple[str, ...]:
    return tuple(str(item) for item in data.get(key, ()))


def _opt(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    return None if value is None else str(value)


@dataclass(frozen=True)
class Channel:
    """One way a lesson is met: the tools and category of its episodes and how they read."""

    tools: tuple[str, ...]
    category: str
    situations: tuple[str, ...]
    attempts: tuple[str, ...]
    errors: tuple[str, ...]

    @classmethod
    def parse(cls, data: Mapping[str, Any]) -> Channel:
        return cls(
            _strs(data, "tools"), str(data["category"]), _strs(data, "situations"),
            _strs(data, "attempts"), _strs(data, "errors"),
        )  # fmt: skip


@dataclass(frozen=True)
class Lesson:
    """A recurring problem with its fix; ``keys`` are the fix's distinctive tokens."""

    key: str
    scope: str
    count: int
    fail: str
    probe: str
    keys: tuple[str, ...]
    fixes: tuple[str, ...]
    lessons: tuple[str, ...]
    results: tuple[str, ...]
    channels: tuple[Channel, ...]

    @property
    def stated(self) -> bool:
        """False for a lesson the agent never writes down, only shows."""
        return bool(self.lessons)

    @classmethod
    def parse(cls, data: Mapping[str, Any]) -> Lesson:
        return cls(
            str(data["key"]), str(data["scope"]), int(data["count"]),
            str(data.get("fail", "failure")), str(data["probe"]), _strs(data, "keys"),
            _strs(data, "fixes"), _strs(data, "lessons"), _strs(data, "results"),
            tuple(Channel.parse(c) for c in data["channel"]),
        )  # fmt: skip


@dataclass(frozen=True)
class Statement:
    """An episode that asserts a fact's value (``{value}``); a stray has ``error`` and uses
    an older value (``{old}``) without asserting anything."""

    situation: str
    action: str
    details: str | None = None
    lesson: str | None = None
    error: str | None = None

    @classmethod
    def parse(cls, data: Mapping[str, Any]) -> Statement:
        return cls(
            str(data["situation"]), str(data["action"]), _opt(data, "details"),
            _opt(data, "lesson"), _opt(data, "error"),
        )  # fmt: skip


@dataclass(frozen=True)
class Fact:
    """A value that changes over the period: ``values`` in the order they hold."""

    key: str
    scope: str
    subject: str
    attribute: str
    values: tuple[str, ...]
    structured: bool
    tools: tuple[str, ...]
    category: str
    mentions: int
    probes: tuple[str, ...]
    """Paraphrases of the question about its current value, each one probe."""
    statements: tuple[Statement, ...]
    strays: tuple[Statement, ...]

    @classmethod
    def parse(cls, data: Mapping[str, Any]) -> Fact:
        probes = _strs(data, "probes") or (str(data["probe"]),)
        return cls(
            str(data["key"]), str(data["scope"]), str(data["subject"]), str(data["attribute"]),
            _strs(data, "values"), bool(data["structured"]), _strs(data, "tools"),
            str(data["category"]), int(data["mentions"]), probes,
            tuple(Statement.parse(s) for s in data["statements"]),
            tuple(Statement.parse(s) for s in data["strays"]),
        )  # fmt: skip


@dataclass(frozen=True)
class Task:
    """Routine work (``details``, no error) or a one-off failure (``error``). ``note`` is what
    the agent writes as the lesson of a routine success ("Posting the weekly uptime summary"):
    a recurring text that teaches nothing, met on many episodes of one routine."""

    tools: tuple[str, ...]
    category: str
    situation: str
    action: str
    details: str | None
    error: str | None
    note: str | None = None

    @classmethod
    def parse(cls, data: Mapping[str, Any]) -> Task:
        return cls(
            _strs(data, "tools"), str(data["category"]), str(data["situation"]),
            str(data["action"]), _opt(data, "details"), _opt(data, "error"), _opt(data, "note"),
        )  # fmt: skip


@dataclass(frozen=True)
class Question:
    """A question about something no episode mentions; ``keys`` would be in its answer."""

    scope: str
    query: str
    keys: tuple[str, ...]


@dataclass(frozen=True)
class Rates:
    """How noisy a world is; every rate is a probability per episode (or event) it names."""

    channel_switch: float = 0.35
    """A lesson occurrence met through one of its other channels."""
    oneoff: float = 0.12
    """A noise episode that is a one-off failure rather than routine work."""
    timeout: float = 0.2
    """A one-off failure whose outcome is ``timeout``."""
    filler: float = 0.2
    """A routine success whose lesson is a success filler line."""
    filler_failure: float = 0.0
    """A failure (one-off, or a failed attempt of a lesson) whose lesson is the framework's
    failure or timeout filler line."""
    note: float = 0.0
    """A routine success of a task with a ``note`` whose lesson is that note."""
    late: float = 0.0
    """An episode that arrives with the next day's batch (its ``created_at`` unchanged)."""

    @classmethod
    def parse(cls, data: Mapping[str, Any]) -> Rates:
        return cls(**{str(k): float(v) for k, v in data.items()})


@dataclass(frozen=True)
class World:
    name: str
    start: datetime
    filler: Mapping[str, tuple[str, ...]]
    """The framework's lines that say nothing, by outcome: ``success``, ``failure``,
    ``timeout``."""
    rates: Rates
    entities: tuple[str, ...]
    """The placeholders whose values an episode lists as its entities."""
    vocab: Mapping[str, tuple[str, ...]]
    noise_per_day: Mapping[str, int]
    lessons: tuple[Lesson, ...]
    facts: tuple[Fact, ...]
    routine: Mapping[str, tuple[Task, ...]]
    oneoff: Mapping[str, tuple[Task, ...]]
    never: tuple[Question, ...]
    leaks: tuple[tuple[str, str], ...]
    """(lesson key, the scope of the other tenant it is asked in)."""

    @property
    def scopes(self) -> tuple[str, ...]:
        return tuple(self.noise_per_day)

    @property
    def fillers(self) -> frozenset[str]:
        """Every filler line of the world, whatever the outcome."""
        return frozenset(line for lines in self.filler.values() for line in lines)

    def lesson(self, key: str) -> Lesson:
        return next(item for item in self.lessons if item.key == key)


def _tasks(blocks: list[dict[str, Any]]) -> dict[str, tuple[Task, ...]]:
    return {str(b["scope"]): tuple(Task.parse(t) for t in b["items"]) for b in blocks}


def _questions(blocks: list[dict[str, Any]]) -> tuple[Question, ...]:
    return tuple(
        Question(str(b["scope"]), str(q["query"]), _strs(q, "keys"))
        for b in blocks
        for q in b["items"]
    )


def _read(world: str, name: str) -> dict[str, Any]:
    path = files("reverie") / "data" / "bench_agent" / world / name
    return tomllib.loads(path.read_text(encoding="utf-8"))


@cache
def load_world(name: str = "ops") -> World:
    """The world ``name`` (one of :data:`WORLDS`), parsed once per process."""
    if name not in WORLDS:
        raise InvalidInput("world", f"unknown {name!r}; choose from {', '.join(WORLDS)}")
    world, lessons = _read(name, "world.toml"), _read(name, "lessons.toml")
    filler = world.get("filler", {})
    return World(
        name=name,
        start=datetime.fromisoformat(str(world["start"])),
        filler={k: _strs(filler, k) for k in ("success", "failure", "timeout")},
        rates=Rates.parse(world.get("rates", {})),
        entities=_strs(world, "entities"),
        vocab={str(k): tuple(str(v) for v in vs) for k, vs in world["vocab"].items()},
        noise_per_day={str(s["name"]): int(s["noise_per_day"]) for s in world["scope"]},
        lessons=tuple(Lesson.parse(item) for item in lessons["lesson"]),
        facts=tuple(Fact.parse(item) for item in world["fact"]),
        routine=_tasks(world["routine"]),
        oneoff=_tasks(world["oneoff"]),
        never=_questions(world["never"]),
        leaks=tuple((str(x["lesson"]), str(x["scope"])) for x in world["leak"]),
    )
