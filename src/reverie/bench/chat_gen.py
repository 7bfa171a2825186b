"""Generated people and their short chats for ``reverie bench chat``, deterministic from a seed.

The words come from :mod:`reverie.bench.chat_data`; this module decides who says what, and when.
Each person:

* states a handful of **slots** (diet, city, reply language, a child's or pet's name, an editor,
  a database host, a standup time, an employer, a day kept free, an allergy, a hobby, a race),
  each **once**, in one of several wordings, sometimes inside a longer message, amid chit-chat
  that states nothing about them;
* over several **short chats** on different simulated days (one to six user turns each, every
  turn answered by the assistant);
* **changes** one or two slots that can change (city, employer): a later chat states a new value
  in a wording that never names the old one;
* is **asked back** each stated slot in other words, twice where the slot's questions allow: once
  with a question that shares a content word with what they said, once with one that shares
  none (:func:`shares_word`); and is asked two questions about slots they never stated and one
  about something no one ever says (both should come back empty).

Beside the people, the **mem0 quickstart**: ``alice`` adds one text and one chat, and is asked
its three questions. The generator records the truth (who said what, where) in the data set,
never in the chats.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from reverie.bench.chat_data import Slot, Talk, load_talk
from reverie.bench.lexical import content_tokens
from reverie.errors import InvalidInput
from reverie.recall.query import stem

__all__ = [
    "Chat",
    "ChatConfig",
    "ChatData",
    "Person",
    "Question",
    "Said",
    "generate",
    "shares_word",
]

START = datetime(2026, 3, 2, tzinfo=UTC)
WRAP_SHARE = 0.4
"""How often a statement is sent inside a longer message (an opener before or a closer after)."""


@dataclass(frozen=True)
class ChatConfig:
    seed: int = 0
    people: int = 12
    chats: int = 5
    """Chats per person, each on its own day."""
    days: int = 14
    slots: int = 8
    """Slots each person states."""


@dataclass(frozen=True)
class Said:
    """One statement: ``value`` of ``slot`` in ``chat`` (turn ``turn``); ``change``: it replaces
    an earlier value of the slot."""

    slot: str
    value: str
    chat: str
    turn: int
    text: str
    change: bool = False


@dataclass(frozen=True)
class Chat:
    """One conversation as a user's app would add it: messages, dated ``when``."""

    id: str
    user: str
    when: datetime
    messages: tuple[dict[str, str], ...]

    @property
    def user_texts(self) -> list[str]:
        return [m["content"] for m in self.messages if m["role"] == "user"]


@dataclass(frozen=True)
class Person:
    user: str
    name: str
    said: tuple[Said, ...]
    unstated: tuple[str, ...]

    def current(self, slot: str) -> Said | None:
        """The newest statement of ``slot`` (a change beats the first statement)."""
        found = [s for s in self.said if s.slot == slot]
        return max(found, key=lambda s: s.change) if found else None


@dataclass(frozen=True)
class Question:
    """A question and how its section is scored (:mod:`reverie.bench.chat`).

    ``kind``: ``said`` (a slot stated once), ``changed`` (a slot whose value changed: ``keys``
    holds the new value, ``stale`` the old), ``unstated`` (a slot this person never stated) and
    ``never`` (what no one says) should come back empty; ``quickstart``: any of ``keys``.
    """

    kind: str
    user: str
    slot: str
    query: str
    keys: tuple[str, ...] = ()
    stale: tuple[str, ...] = ()
    shared: bool = False
    """The question shares a content word with what was said of its slot."""


@dataclass(frozen=True)
class ChatData:
    config: ChatConfig
    people: tuple[Person, ...]
    chats: tuple[Chat, ...]
    """Every chat, the quickstart's included, in time order."""
    questions: tuple[Question, ...]
    final: datetime
    """When the questions are asked: an hour after the last day."""

    @property
    def users(self) -> list[str]:
        return sorted({c.user for c in self.chats})

    def day_of(self, when: datetime) -> int:
        return (when - START).days

    def day_end(self, day: int) -> datetime:
        return START + timedelta(days=day + 1) - timedelta(seconds=1)


def _marks(text: str) -> set[str]:
    """Each content word's stem and its first five letters: two words that share either are one
    word for :func:`shares_word` (``allergies`` and ``allergic``, ``lived`` and ``live``)."""
    return {m for t in content_tokens(text) for m in (stem(t), t[:5])}


def shares_word(question: str, texts: Sequence[str]) -> bool:
    """Whether ``question`` shares a content word with any of ``texts`` (stop words aside)."""
    marks = _marks(question)
    return any(marks & _marks(t) for t in texts)


# -- one person -----------------------------------------------------------------------------------


def _fill(template: str, value: str, *, inside: bool = False) -> str:
    """``template`` with ``value``: a sentence of its own, or (``inside``) the rest of one an
    opener began, where only the template's own first word loses its capital ("I" keeps it)."""
    if inside and not template.startswith(("{value}", "I ", "I'")):
        template = template[0].lower() + template[1:]
    text = template.replace("{value}", value)
    return text if inside else text[0].upper() + text[1:]


def _worded(rng: random.Random, talk: Talk, template: str, value: str) -> str:
    """One statement as sent: alone, or inside a longer message (:data:`WRAP_SHARE`)."""
    if rng.random() >= WRAP_SHARE:
        return _fill(template, value)
    if rng.random() < 0.5:
        opener = rng.choice(talk.openers)
        return f"{opener} {_fill(template, value, inside=not opener.endswith(('!', '.')))}"
    return f"{_fill(template, value)} {rng.choice(talk.closers)}"


def _chosen_slots(rng: random.Random, talk: Talk, count: int) -> list[Slot]:
    """``count`` slots, at least one of which can change."""
    changing = [s for s in talk.slots if s.changing]
    first = rng.choice(changing)
    rest = rng.sample([s for s in talk.slots if s is not first], min(count, len(talk.slots)) - 1)
    return [first, *rest]


def _plan(
    rng: random.Random, slots: Sequence[Slot], chats: int
) -> list[tuple[Slot, str, int, bool]]:
    """(slot, value, chat position, change?) for every statement; a change comes in a later chat
    than the first statement of its slot."""
    plan = []
    for slot in slots:
        value = rng.choice(slot.values)
        if slot.changing and chats > 1:
            at = rng.randrange(chats - 1)
            plan.append((slot, value, at, False))
            new = rng.choice([v for v in slot.values if v != value])
            plan.append((slot, new, rng.randrange(at + 1, chats), True))
        else:
            plan.append((slot, value, rng.randrange(chats), False))
    return plan


def _chat_times(rng: random.Random, config: ChatConfig) -> list[datetime]:
    days = sorted(rng.sample(range(config.days), min(config.chats, config.days)))
    return [START + timedelta(days=d, hours=rng.randrange(8, 21), minutes=rng.randrange(60))
            for d in days]  # fmt: skip


_Meaning = tuple[Slot, str, bool]
"""What a statement says: (slot, value, change?)."""


def _turns(
    rng: random.Random, talk: Talk, statements: list[_Meaning]
) -> list[tuple[str, _Meaning | None]]:
    """The user turns of one chat: one to three of chit-chat and the statements, shuffled."""
    turns: list[tuple[str, _Meaning | None]] = [
        (rng.choice(talk.chitchat), None) for _ in range(rng.randint(1, 3))
    ]
    for slot, value, change in statements:
        template = rng.choice(slot.changes if change else slot.statements)
        turns.append((_worded(rng, talk, template, value), (slot, value, change)))
    rng.shuffle(turns)
    return turns


def _person(
    rng: random.Random, talk: Talk, config: ChatConfig, index: int
) -> tuple[Person, list[Chat]]:
    name = talk.names[index % len(talk.names)]
    user = f"{name.lower()}-{index:02d}"
    slots = _chosen_slots(rng, talk, config.slots)
    plan = _plan(rng, slots, config.chats)
    chats, said = [], []
    for pos, when in enumerate(_chat_times(rng, config)):
        chat_id = f"{user}-chat{pos + 1}"
        messages: list[dict[str, str]] = []
        here = [(slot, value, change) for slot, value, at, change in plan if at == pos]
        for turn, (text, meaning) in enumerate(_turns(rng, talk, here)):
            reply = rng.choice(talk.acknowledgements if meaning else talk.replies)
            messages += [{"role": "user", "content": text}, {"role": "assistant", "content": reply}]
            if meaning is not None:
                slot, value, change = meaning
                said.append(Said(slot.key, value, chat_id, turn, text, change))
        chats.append(Chat(chat_id, user, when, tuple(messages)))
    unstated = tuple(s.key for s in talk.slots if s not in slots)
    return Person(user, name, tuple(said), unstated), chats


# -- questions ------------------------------------------------------------------------------------


def _pick_two(rng: random.Random, questions: list[str], texts: list[str]) -> list[str]:
    """One question that shares a word with ``texts`` and one that does not, where the slot has
    both; otherwise two of either."""
    shared = [q for q in questions if shares_word(q, texts)]
    apart = [q for q in questions if q not in shared]
    picked = [rng.choice(group) for group in (shared, apart) if group]
    if len(picked) < 2:
        picked += rng.sample([q for q in questions if q not in picked], 1)
    return picked


def _about(rng: random.Random, slot: Slot, person: Person, current: Said) -> list[Question]:
    """Two questions about ``slot``, which ``person`` stated (``current`` is the newest)."""
    texts = [s.text for s in person.said if s.slot == slot.key]
    old = tuple(s.value for s in person.said if s.slot == slot.key and not s.change)
    kind, stale = ("changed", old) if current.change else ("said", ())
    asked = _pick_two(rng, [q.replace("{name}", person.name) for q in slot.questions], texts)
    return [Question(kind, person.user, slot.key, query, (current.value,), stale,
                     shares_word(query, texts)) for query in asked]  # fmt: skip


def _asked(rng: random.Random, talk: Talk, person: Person) -> list[Question]:
    out = []
    for slot in talk.slots:
        current = person.current(slot.key)
        if current is not None:
            out += _about(rng, slot, person, current)
    for key in rng.sample(person.unstated, min(2, len(person.unstated))):
        query = rng.choice(talk.slot(key).questions).replace("{name}", person.name)
        out.append(Question("unstated", person.user, key, query))
    query = rng.choice(talk.never).replace("{name}", person.name)
    return [*out, Question("never", person.user, "", query)]


def _quickstart(talk: Talk) -> tuple[list[Chat], list[Question]]:
    qs = talk.quickstart
    text = ({"role": "user", "content": qs.text},)
    chats = [
        Chat(f"{qs.user}-chat1", qs.user, START + timedelta(hours=10), text),
        Chat(f"{qs.user}-chat2", qs.user, START + timedelta(days=1, hours=10), qs.messages),
    ]
    questions = [Question("quickstart", qs.user, "", q, keys) for q, keys in qs.questions]
    return chats, questions  # fmt: skip


def generate(config: ChatConfig | None = None) -> ChatData:
    """The people, chats and questions for ``config`` (module docstring); same seed, same data."""
    config = config or ChatConfig()
    if config.days < config.chats:
        raise InvalidInput("days", f"{config.days} days cannot hold {config.chats} chats a person")
    talk = load_talk()
    people, chats, questions = [], *_quickstart(talk)
    for index in range(config.people):
        rng = random.Random(f"bench-chat:{config.seed}:{index}")
        person, theirs = _person(rng, talk, config, index)
        people.append(person)
        chats += theirs
        questions += _asked(rng, talk, person)
    chats.sort(key=lambda c: (c.when, c.id))
    final = START + timedelta(days=config.days, hours=1)
    return ChatData(config, tuple(people), tuple(chats), tuple(questions), final)
