"""The hand-written world of ``reverie bench agent``, read from ``reverie/data/bench_agent``.

The words of the benchmark (lessons and their paraphrases, facts and their values, routine work,
one-off failures, questions about things that never happen) live in two TOML files so that a
person can read and extend them without reading code; this module turns them into frozen,
typed records and nothing else. Generation (:mod:`reverie.bench.agent_gen`) decides how often and
when each is met.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from importlib.resources import files
from typing import Any

__all__ = [
    "Channel",
    "Fact",
    "Lesson",
    "Question",
    "Statement",
    "Task",
    "World",
    "load_world",
]


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
    probe: str
    statements: tuple[Statement, ...]
    strays: tuple[Statement, ...]

    @classmethod
    def parse(cls, data: Mapping[str, Any]) -> Fact:
        return cls(
            str(data["key"]), str(data["scope"]), str(data["subject"]), str(data["attribute"]),
            _strs(data, "values"), bool(data["structured"]), _strs(data, "tools"),
            str(data["category"]), int(data["mentions"]), str(data["probe"]),
            tuple(Statement.parse(s) for s in data["statements"]),
            tuple(Statement.parse(s) for s in data["strays"]),
        )  # fmt: skip


@dataclass(frozen=True)
class Task:
    """Routine work (``details``, no error) or a one-off failure (``error``)."""

    tools: tuple[str, ...]
    category: str
    situation: str
    action: str
    details: str | None
    error: str | None

    @classmethod
    def parse(cls, data: Mapping[str, Any]) -> Task:
        return cls(
            _strs(data, "tools"), str(data["category"]), str(data["situation"]),
            str(data["action"]), _opt(data, "details"), _opt(data, "error"),
        )  # fmt: skip


@dataclass(frozen=True)
class Question:
    """A question about something no episode mentions; ``keys`` would be in its answer."""

    scope: str
    query: str
    keys: tuple[str, ...]


@dataclass(frozen=True)
class World:
    start: datetime
    template_lessons: tuple[str, ...]
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


def _read(name: str) -> dict[str, Any]:
    text = (files("reverie") / "data" / "bench_agent" / name).read_text(encoding="utf-8")
    return tomllib.loads(text)


@cache
def load_world() -> World:
    """The benchmark's world, parsed once per process."""
    world, lessons = _read("world.toml"), _read("lessons.toml")
    return World(
        start=datetime.fromisoformat(str(world["start"])),
        template_lessons=_strs(world, "template_lessons"),
        vocab={str(k): tuple(str(v) for v in vs) for k, vs in world["vocab"].items()},
        noise_per_day={str(s["name"]): int(s["noise_per_day"]) for s in world["scope"]},
        lessons=tuple(Lesson.parse(item) for item in lessons["lesson"]),
        facts=tuple(Fact.parse(item) for item in world["fact"]),
        routine=_tasks(world["routine"]),
        oneoff=_tasks(world["oneoff"]),
        never=_questions(world["never"]),
        leaks=tuple((str(x["lesson"]), str(x["scope"])) for x in world["leak"]),
    )
