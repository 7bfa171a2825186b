"""A chat set on disk: ``chats.jsonl`` and ``questions.json``, written and read back.

``reverie bench chat --dump DIR`` writes the generated people this way, and ``--from DIR`` scores
Reverie and the baselines on any set in the same shape, written by someone who never read the
generator, so that a held-out check needs no code of ours to produce its data.

* ``chats.jsonl``: one chat a line, ``{id, user, when, messages: [{role, content}]}``, each chat
  going in as one ``Reverie.add`` call for its ``user``;
* ``questions.json``: ``{"config": {…}, "asked_at": ISO time, "questions": [{kind, user, slot,
  query, keys, stale, shared}]}``. ``config``, ``asked_at`` (default: an hour after the last
  chat) and ``people`` (what each person said, as the generator records it) may be absent; a
  question's kinds and scoring are :class:`reverie.bench.chat_gen.Question`'s.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from reverie.bench.chat_gen import Chat, ChatConfig, ChatData, Person, Question, Said
from reverie.errors import InvalidInput

__all__ = ["CHATS", "QUESTIONS", "dump", "load"]

CHATS, QUESTIONS = "chats.jsonl", "questions.json"
KINDS = ("said", "changed", "unstated", "never", "quickstart")
_ANSWERED = ("said", "changed", "quickstart")
ROLES = ("user", "assistant", "system")


def _json(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value


def dump(data: ChatData, directory: Path) -> list[Path]:
    """Write ``chats.jsonl`` (one chat a line, time order: user, when, messages) and
    ``questions.json`` (the config, every question, and what each person said) under
    ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    chats, questions = directory / CHATS, directory / QUESTIONS
    with chats.open("w", encoding="utf-8") as out:
        for chat in data.chats:
            row = {k: _json(v) for k, v in asdict(chat).items()}
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    body = {
        "config": asdict(data.config), "asked_at": data.final.isoformat(),
        "questions": [asdict(q) for q in data.questions],
        "people": [asdict(p) for p in data.people],
    }  # fmt: skip
    questions.write_text(json.dumps(body, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return [chats, questions]


def load(directory: Path) -> ChatData:
    """The set under ``directory`` (module docstring); a clear :class:`InvalidInput` naming the
    file and line for anything that cannot be scored."""
    path = directory / QUESTIONS
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise InvalidInput(str(path), "not found: a set is chats.jsonl and questions.json") from exc
    except json.JSONDecodeError as exc:
        raise InvalidInput(str(path), f"is not JSON ({exc})") from exc
    if not isinstance(body, dict):
        raise InvalidInput(str(path), "must hold a JSON object with a 'questions' list")
    chats = sorted(_chats(directory / CHATS), key=lambda c: (c.when, c.id))
    users = {c.user for c in chats}
    questions = tuple(_question(i, q, users) for i, q in enumerate(body.get("questions") or []))
    if not questions:
        raise InvalidInput(str(path), "holds no questions: nothing to score")
    asked = body.get("asked_at")
    final = _when(asked, f"{path}: asked_at") if asked else chats[-1].when + timedelta(hours=1)
    people = tuple(_person(i, p) for i, p in enumerate(body.get("people") or ()))
    seed = int((body.get("config") or {}).get("seed") or 0)
    config = ChatConfig(seed=seed, people=len(users))
    return ChatData(config, people, tuple(chats), questions, final)


def _when(value: object, where: str) -> datetime:
    try:
        when = datetime.fromisoformat(str(value))
    except ValueError as exc:
        raise InvalidInput(where, f"not an ISO 8601 time ({exc})") from exc
    return when.astimezone(UTC) if when.tzinfo else when.replace(tzinfo=UTC)


def _chats(path: Path) -> list[Chat]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError as exc:
        raise InvalidInput(str(path), "not found: a set is chats.jsonl and questions.json") from exc
    chats = [_chat(line, f"{path}:{n}") for n, line in enumerate(lines, start=1) if line.strip()]
    if not chats:
        raise InvalidInput(str(path), "holds no chats")
    return chats


def _chat(line: str, where: str) -> Chat:
    try:
        row = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InvalidInput(where, f"is not JSON ({exc})") from exc
    if not isinstance(row, dict) or not all(row.get(k) for k in ("id", "user", "when")):
        raise InvalidInput(where, "a chat needs an 'id', a 'user', a 'when' and 'messages'")
    messages = row.get("messages")
    if not isinstance(messages, list) or not messages:
        raise InvalidInput(where, "'messages' must be a non-empty list of {role, content}")
    for message in messages:
        ok = isinstance(message, dict) and isinstance(message.get("content"), str)
        if not ok or message.get("role") not in ROLES:
            raise InvalidInput(where, f"a message is {{role: {'|'.join(ROLES)}, content: text}}")
    kept = tuple({"role": m["role"], "content": m["content"]} for m in messages)
    return Chat(str(row["id"]), str(row["user"]), _when(row["when"], where), kept)


def _question(index: int, item: object, users: set[str]) -> Question:
    where = f"question {index}"
    if not isinstance(item, dict):
        raise InvalidInput(where, "must be an object (kind, user, query, keys)")
    kind, user = item.get("kind"), item.get("user")
    if kind not in KINDS:
        raise InvalidInput(where, f"kind {kind!r}: choose one of {', '.join(KINDS)}")
    if user not in users:
        raise InvalidInput(where, f"user {user!r} has no chat in the set")
    if not item.get("query"):
        raise InvalidInput(where, "needs a 'query'")
    if kind in _ANSWERED and not item.get("keys"):
        raise InvalidInput(where, f"a {kind} question needs 'keys' (its answer)")
    return Question(
        str(kind), str(user), str(item.get("slot") or ""), str(item["query"]),
        tuple(str(k) for k in item.get("keys") or ()),
        tuple(str(s) for s in item.get("stale") or ()), bool(item.get("shared", False)),
    )  # fmt: skip


def _person(index: int, item: object) -> Person:
    """A person of the optional ``people`` list (what ``--dump`` writes of what each said; no
    score reads it)."""
    where = f"{QUESTIONS}: people[{index}]"
    if not isinstance(item, Mapping) or not item.get("user"):
        raise InvalidInput(where, _PEOPLE_SHAPE)
    try:
        said = tuple(Said(**s) for s in item.get("said") or ())
    except TypeError as exc:
        raise InvalidInput(where, _PEOPLE_SHAPE) from exc
    return Person(str(item["user"]), str(item.get("name", "")), said,
                  tuple(item.get("unstated") or ()))  # fmt: skip


_PEOPLE_SHAPE = (
    "'people' is optional; each entry is {user, name, said: [{slot, value, chat, turn, text, "
    "change}], unstated: [slot]}: leave it out, or write it in that shape"
)
