"""The words of ``reverie bench chat``, read from ``reverie/data/bench_chat``.

Two TOML files hold everything a person says or is asked: ``slots.toml`` (what may be said once
about a person, in several wordings, and the questions asked back) and ``talk.toml`` (names,
chit-chat, the assistant's replies, wrappers, the mem0 quickstart). This module turns them into
frozen records and nothing else; :mod:`reverie.bench.chat_gen` decides who says what, and when.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

__all__ = ["Quickstart", "Slot", "Talk", "load_talk"]


def _strs(data: Mapping[str, Any], key: str) -> tuple[str, ...]:
    return tuple(str(item) for item in data.get(key, ()))


@dataclass(frozen=True)
class Slot:
    """One thing a person may state once: its values, wordings and the questions about it.

    ``changes`` are the wordings of a later statement of a new value; a slot without them never
    changes. No change wording names the old value.
    """

    key: str
    values: tuple[str, ...]
    statements: tuple[str, ...]
    changes: tuple[str, ...]
    questions: tuple[str, ...]

    @property
    def changing(self) -> bool:
        return bool(self.changes)

    @classmethod
    def parse(cls, data: Mapping[str, Any]) -> Slot:
        return cls(
            str(data["key"]), _strs(data, "values"), _strs(data, "statements"),
            _strs(data, "changes"), _strs(data, "questions"),
        )  # fmt: skip


@dataclass(frozen=True)
class Quickstart:
    """mem0's quickstart: one text and one chat added for ``user``, three questions with keys."""

    user: str
    name: str
    text: str
    messages: tuple[dict[str, str], ...]
    questions: tuple[tuple[str, tuple[str, ...]], ...]

    @classmethod
    def parse(cls, data: Mapping[str, Any]) -> Quickstart:
        messages = tuple({"role": str(m["role"]), "content": str(m["content"])}
                         for m in data["messages"])  # fmt: skip
        questions = tuple((str(q["question"]), _strs(q, "keys")) for q in data["questions"])
        return cls(str(data["user"]), str(data["name"]), str(data["text"]), messages, questions)


@dataclass(frozen=True)
class Talk:
    """Everything the generator draws words from."""

    slots: tuple[Slot, ...]
    never: tuple[str, ...]
    names: tuple[str, ...]
    chitchat: tuple[str, ...]
    replies: tuple[str, ...]
    acknowledgements: tuple[str, ...]
    openers: tuple[str, ...]
    closers: tuple[str, ...]
    quickstart: Quickstart

    def slot(self, key: str) -> Slot:
        return next(s for s in self.slots if s.key == key)


def _read(name: str) -> dict[str, Any]:
    text = files("reverie.data").joinpath(f"bench_chat/{name}").read_text(encoding="utf-8")
    return tomllib.loads(text)


@cache
def load_talk() -> Talk:
    """The packaged words (read once per process)."""
    slots, talk = _read("slots.toml"), _read("talk.toml")
    return Talk(
        slots=tuple(Slot.parse(s) for s in slots["slot"]),
        never=_strs(slots["never"], "questions"),
        names=_strs(talk, "names"),
        chitchat=_strs(talk, "chitchat"),
        replies=_strs(talk, "replies"),
        acknowledgements=_strs(talk, "acknowledgements"),
        openers=_strs(talk, "openers"),
        closers=_strs(talk, "closers"),
        quickstart=Quickstart.parse(talk["quickstart"]),
    )
