"""Durable statements: what a speaker says once about themselves, their world or their wishes.

"I'm a vegetarian and allergic to nuts", "my daughter is called Ana", "our staging db is on
db2.internal", "I now work at Stripe", "please reply in Spanish" are knowledge from one mention;
"how are you?", "thanks!", "I'm so glad" and "suggest some courses" are not. The reading is
linguistic, by the shape of the sentence, never by the topic's words:

* **first person, stative**: a first-person subject (``I``, ``we``) with a copula ("I'm a
  vegetarian"), a present-tense verb with an object ("I use neovim", "we deploy on Fridays"),
  a negated one ("I don't eat meat"), a wish ("I'd like…"), a plan ("I'm going to…", "I plan
  to…", "I'll…" with content), an ongoing pursuit ("I'm learning Rust"), or a past change of
  state ("I moved to Lisbon", "I joined Stripe");
* **possessive copula**: ``my|our X is|are Y`` ("my daughter is called Ana"), or a possessive
  subject with a present-tense verb ("our CI runs on a Buildkite agent");
* **standing instruction**: an imperative about how to reply ("reply in Spanish", "call me
  Sam"), or any imperative marked as standing ("always…", "never…", "from now on…").
* **inside a longer sentence**: the clause of a leading subordinator ("Since I'm vegan, skip
  the cheese", "Now that we live in Ghent, …"), a statement after a conjunction ("Long story,
  but I work for a bakery"), an instruction worded as a wish ("I'd rather you reply in
  Dutch"), and a name set beside what it is to the speaker, an apposition ("my manager, Dana,",
  "Rex, our dog,", "Juno (my cat)"), which holds whatever the rest of the sentence tells of
  the day.

Not durable: questions (a ``?`` or a leading interrogative or auxiliary), a clause in place of
an object ("I think it's fine", "I know what you mean"), intensified feelings ("I'm so
excited"), a verb with no content word after it ("I'm doing well"), one-off requests, and other
past events ("I went to the store"), which the dialogue page keeps as dated statements.

Each statement names an *attribute* of its speaker. Relations that hold one value at a time are
normalised to one attribute so a later statement supersedes an earlier one: where the speaker
lives (``lives in``: "live in", "based in", "moved to"), works (``works at``: "work at|for",
"joined"), how replies are worded (``replies in``), their name (``name``), and ``my X`` for a
possessive copula. Any other statement is its own attribute (the predicate as said), so
statements accumulate and one said again reinforces itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["SENTENCE_BREAK", "Stated", "durable_statements", "sentences"]

MAX_SENTENCE = 400
MAX_VALUE = 120
SENTENCE_BREAK = re.compile(r"(?<!\b[A-Z][a-z]\.)(?<=[.!?])\s+|\n+")
"""Where one sentence ends and the next begins: after ``.``, ``!`` or ``?`` and a space, or at
a line break; not after a two-letter title ("Dr. Okonkwo", "St. Louis", "Mr. Ito")."""
_SINCE = "since|now that|because|as|given that|seeing as"
_LEAD = re.compile(  # "Oh, " / "By the way, " / "Hey Mel, " / "Last month " / "In 2024 " / "but "
    rf"^(?:(?:but|and|so|anyway)\s+|(?!(?:i|we|my|our|{_SINCE})\b)[^,.!?:]{{1,24}}[,:]\s+"
    r"|(?:last|this|next) \w+\s+|in \d{4}\s+|recently\s+|lately\s+)+"
)
_SUBORDINATE = re.compile(  # "since I'm vegan, …" / "now that I live in Oslo, …": the clause
    rf"^(?:{_SINCE})\s+((?:i|we|my|our)\b[^,;]+)[,;]\s+\S"
)
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_QUESTION = re.compile(
    r"^(?:what|who|whom|whose|where|when|why|how|which|do|does|did|can|could|would|will|"
    r"shall|should|is|are|was|were|am|have|has|may|might|must)\b",
)
_CLAUSE = re.compile(
    r"^(?:you|your|it|it's|that|this|these|those|he|she|they|we|i|so|what|how|if|whether|why|"
    r"when|where|there|which)\b"
)
_DEGREE = re.compile(
    r"^(?:so|really|very|too|super|pretty|totally|quite|such|just|kinda|kind of|sort of|"
    r"a bit|a little|sure|not sure|sorry|glad|happy|thankful|grateful|here|back|done|"
    r"fine|good|great|ok|okay|well)\b"
)
_ADVERB = (
    r"(?:now|still|also|currently|really|usually|always|mostly|only|actually|"
    r"recently|just|generally|normally|often|mainly|definitely|even)"
)
_SUBJECT = re.compile(r"^(i|we)(?=['\s])\s*(.+)$")
_ADVERBS = re.compile(rf"(?<![\w'])(?:{_ADVERB})\s+")
_NEGATION = re.compile(r"\b(?:not|no longer|never|n't)\b|n't\b")
_COPULA = re.compile(r"^(?:'m|am|are|'re|have been|'ve been)\s+(.+)$")
_MODAL = re.compile(r"^(?:'d|would)\s+(like|love|prefer|rather|hate)\b\s*(.*)$")
_FUTURE = re.compile(r"^(?:plan to|intend to|am going to|'m going to|hope to|want to)\s+(.+)$")
_PAST = frozenset(
    """
    made took found won went came saw got had did said told thought bought brought caught
    taught felt kept lost met paid put ran read sat sent spent stood understood wrote gave ate
    drank drove flew forgot grew knew rode sang spoke swam threw wore woke began broke chose
    fell heard held hurt led meant sold shot slept built lit tried 've 're 'm 'll will
    couldn't wouldn't shouldn't haven't hasn't didn't wasn't weren't
    """.split()  # noqa: SIM905
)
_NEAR = re.compile(
    r"\b(?:tonight|today|tomorrow|yesterday|last night|this (?:morning|afternoon|evening|"
    r"weekend)|right now|at the moment)\b"
)
_NEGATED = re.compile(r"^(?:don't|do not|can't|cannot|won't|never|no longer)\s+(\w+)\s*(.*)$")
_AUX = frozenset(
    """
    will would could should might may can must shall did was were had do does 'd 'll
    got guess think know mean hope wish bet suppose see agree feel understand wonder
    believe remember forgot heard saw told said went came
    """.split()  # noqa: SIM905
)
_CHANGE = frozenset(
    """
    moved relocated switched joined started quit left became changed adopted married
    retired graduated got
    """.split()  # noqa: SIM905
)
_POSSESSIVE = re.compile(
    r"^(my|our)\s+((?:[\w-]+\s+){0,3}?[\w-]+?)(?:'s\s+name|\s+name)?\s+"
    r"(is|are|'s)\s+(?:(called|named)\s+)?(.+)$"
)
_OWNED_VERB = re.compile(r"^(?:my|our)\s+(?:[\w-]+\s+){0,3}?[\w-]+\s+(\w+s)\s+(.+)$")
_STANDING = re.compile(
    r"^(?:please\s+|kindly\s+)?(always|never|from now on|going forward|in (?:the )?future|"
    r"every time|whenever)\b"
)
_REPLY = re.compile(
    r"^(?:please\s+|kindly\s+)?(?:(?:always|from now on|going forward)\s*,?\s+)?"
    r"(?:reply|respond|answer|write|talk|speak)(?:\s+(?:to\s+)?me)?\s+in\s+([\w-]+)"
)
_CALL_ME = re.compile(r"^(?:please\s+)?call\s+me\s+([\w-]+)")
_NAME = re.compile(r"^(?:'m|am)\s+called\s+([\w-]+)")
_WHERE = re.compile(
    r"^(?:live|'m living|am living|'m based|am based|(?:'ve |have )?lived|reside"
    r"|(?:'ve |have )?(?:moved|relocated))\s+"
    r"(?:in|to|at)\s+(.+)$"
)
_EMPLOYER = re.compile(
    r"^(?:work|'m working|am working|'ve worked|started working|started)\s+(?:at|for)\s+(.+)$"
    r"|^(?:(?:'ve |have )?joined|got a job at)\s+(.+)$"
    r"|^(?:(?:'ve |have )?(?:started|begun|began|taken|took|got|landed|accepted))\s+(?:an?\s+)?"
    r"(?:new\s+)?(?:job|position|role|post|offer)\s+(?:at|with|from)\s+(.+)$"
)
_CLAUSE_END = re.compile(
    r"[,;!?(]|[.:](?=\s|$)|\s(?:and|but|because|since|so|which|where|as|for|with|from|until|"
    r"after|before|now|these days|currently|recently|last|this|next|ago|in|on|at|by|when|"
    r"while|to)\b"
)
_PARTICLES = frozenset(
    """
    out off over about for with from into onto upon down back away around through again
    then than too also well yet
    """.split()  # noqa: SIM905
)
_ING = re.compile(r"^(\w+ing)\b\s*(.*)$")
_WISH_YOU = re.compile(  # "I'd rather you reply in Dutch": an instruction worded as a wish
    r"^(?:'d|would)\s+(?:like|love|prefer|rather|appreciate it if)\s+"
    r"(?:it\s+if\s+)?you\s+(?:to\s+)?(.+)$"
)
_NAMED = r"([A-Z][\w-]*(?:\s[A-Z][\w-]*)?)"
_THING = r"((?:[a-z][\w-]*\s){0,2}[a-z][\w-]*)"
_APPOSITIONS = (  # a name beside what it is to the speaker: (pattern, group of the thing)
    re.compile(rf"(?i:\b(?:my|our)\s){_THING},\s{_NAMED},"),  # "my employer, Cyberdyne,"
    re.compile(rf"(?:^|,\s){_NAMED},\s(?i:(?:my|our)\s){_THING},"),  # "Ines, my kid,"
    re.compile(rf"\b{_NAMED}\s\((?i:(?:my|our)\s){_THING}\)"),  # "Pepper (our cat)"
)
_RELATIONS = {
    "employer": "works at", "company": "works at", "workplace": "works at",
    "city": "lives in", "home town": "lives in", "hometown": "lives in",
}  # fmt: skip
"""What a possessive names that is one of the normalised relations: "my employer, Initech,"
and "I work at Initech" are one attribute, so either supersedes the other."""
_PREFER = re.compile(r"\b(?:like|love|prefer|rather|hate|enjoy|favou?rite|dislike|can't stand)\b")


@dataclass(frozen=True)
class Stated:
    """One durable statement: ``attribute`` of the speaker is ``value``; ``sentence`` is how it
    was said; ``preference`` for a wish, a like or a standing instruction; ``single`` when the
    attribute holds one value at a time (a later value supersedes this one)."""

    sentence: str
    attribute: str
    value: str
    preference: bool = False
    single: bool = False


def sentences(text: str) -> list[str]:
    """``text`` split into sentences, whitespace collapsed, curly apostrophes made plain."""
    flat = text.replace("\u2019", "'").replace("\u2018", "'")
    return [" ".join(s.split()) for s in SENTENCE_BREAK.split(flat) if s.strip()]


def _content(text: str) -> list[str]:
    """Words that carry content: longer than two letters, not a pronoun or a particle."""
    return [
        w
        for w in _WORD.findall(text)
        if len(w) > 2 and w not in _PARTICLES and not _CLAUSE.fullmatch(w)
    ]


def _complement(rest: str) -> bool:
    """A copula's complement carries content: not a feeling ("so glad"), not a clause, and
    an ``-ing`` verb needs content after it ("doing well" has none)."""
    if re.match(r"^\w+ly\b|^\w+ed\b(?! to (?:a|an|the|my)\b)", rest):
        return False  # "truly grateful", "excited to see": a feeling of the moment
    if (m := _ING.match(rest)) is not None:
        rest = m.group(2)
    return not _DEGREE.match(rest) and not _CLAUSE.match(rest) and bool(_content(rest))


def _value(rest: str) -> str:
    """The object of a single-valued relation: up to the end of its clause."""
    cut = _CLAUSE_END.search(rest)
    return (rest[: cut.start()] if cut else rest).strip(" .,!?\"'")[:MAX_VALUE]


def _single(body: str) -> tuple[str, str] | None:
    """``(attribute, value)`` of a single-valued relation (where, employer, name), if any."""
    for pattern, attribute in ((_WHERE, "lives in"), (_EMPLOYER, "works at"), (_NAME, "name")):
        m = pattern.match(body)
        if m is not None:
            value = _value(next(g for g in m.groups() if g))
            if value:
                return attribute, value
    return None


def _first_person(body: str) -> bool:
    """Whether the predicate after ``I``/``we`` is durable (see the module docstring); one
    about the listener ("I'm proud of you") is the conversation's, not the speaker's."""
    if re.search(r"\byour?\b", body):
        return False
    if (m := _COPULA.match(body)) is not None:
        return _complement(m.group(1))
    if (m := _MODAL.match(body)) is not None:
        return bool(_content(m.group(2)))
    if (m := _FUTURE.match(body)) is not None:
        return len(_content(m.group(1))) >= 2
    if (m := _NEGATED.match(body)) is not None:
        verb, rest = m.groups()
        return verb not in _AUX and not _CLAUSE.match(rest) and bool(_content(rest))
    verb, _, rest = body.partition(" ")
    if verb in _AUX or verb in _PAST or not rest or _CLAUSE.match(rest) or _DEGREE.match(rest):
        return False
    return (not verb.endswith("ed") or verb in _CHANGE) and bool(_content(rest))


def _instruction(sentence: str, low: str) -> Stated | None:
    """A standing instruction to the listener: how to reply, what to call the speaker."""
    if (m := _REPLY.match(low)) is not None:
        return Stated(sentence, "replies in", m.group(1), preference=True, single=True)
    if (m := _CALL_ME.match(low)) is not None:
        return Stated(sentence, "name", m.group(1), preference=True, single=True)
    rest = _STANDING.sub("", low).split() if _STANDING.match(low) else []
    verb = rest[0] if rest else ""  # "always" alone is an adverb with no instruction after it
    if verb and verb not in _PAST and not verb.endswith("ed") and len(_content(low)) >= 2:
        return Stated(sentence, low.rstrip(".!"), low.rstrip(".!"), preference=True)
    return None


def _possessive(low: str) -> tuple[str, str] | None:
    m = _POSSESSIVE.match(low)
    if m is None:
        return None
    _owner, thing, _verb, named, rest = m.groups()
    rest = re.sub(rf"^(?:{_ADVERB}\s+)+", "", rest)
    if _DEGREE.match(rest) or re.match(r"^\w+ing\b", rest) or not _content(rest):
        return None
    attribute = thing + (" name" if named or "name" in low.split(" is ", maxsplit=1)[0] else "")
    return _relation(attribute), _value(rest) or rest[:MAX_VALUE]


def _relation(attribute: str) -> str:
    """``attribute`` as the relation it names, where it names one (:data:`_RELATIONS`)."""
    return _RELATIONS.get(attribute, attribute)


def _apposition(sentence: str) -> Stated | None:
    """A name set beside what it is to the speaker ("my youngest, Oskar,", "Ines, my kid,",
    "Pepper (our cat)"): that relation holds whatever the sentence tells of the day."""
    for i, pattern in enumerate(_APPOSITIONS):
        if (m := pattern.search(sentence)) is not None:
            thing, name = (m.group(1), m.group(2)) if i == 0 else (m.group(2), m.group(1))
            if _content(thing.lower()) and name.lower() not in ("i", "i'm"):
                return Stated(sentence, _relation(thing.lower()), name, single=True)
    return None


def _read(sentence: str) -> Stated | None:
    if sentence.endswith("?") or len(sentence) > MAX_SENTENCE:
        return None
    low = _LEAD.sub("", sentence.lower()).strip()
    low = re.sub(r"^i(?='|\s)", "i", low)
    if _QUESTION.match(low):
        return None
    if (clause := _SUBORDINATE.match(low)) is not None:
        return _read_clause(sentence, clause.group(1).strip())
    if _NEAR.search(low):
        return _apposition(sentence)
    return _read_clause(sentence, low) or _apposition(sentence)


def _read_clause(sentence: str, low: str) -> Stated | None:
    """The statement of ``low``, the lowercased clause of ``sentence`` that may hold one."""
    if (instruction := _instruction(sentence, low)) is not None:
        return instruction
    if (owned := _possessive(low)) is not None:
        return Stated(sentence, owned[0], owned[1], bool(_PREFER.search(owned[0])), single=True)
    if (m := _OWNED_VERB.match(low)) is not None and m.group(1) not in ("was", "is"):
        if _complement(m.group(2)) and not _NEAR.search(low):  # "our CI runs on Buildkite"
            return Stated(sentence, low.rstrip(" .!"), low.rstrip(" .!"))
        return None
    m = _SUBJECT.match(_ADVERBS.sub("", low).replace("'ve got ", " have "))
    if m is None:
        return None
    body = m.group(2)
    if (wish := _WISH_YOU.match(body)) is not None:
        return _instruction(sentence, wish.group(1))
    single = None if _NEGATION.search(body) else _single(body)
    preference = bool(_PREFER.search(body))
    if single is not None:
        return Stated(sentence, single[0], single[1], preference, single=True)
    if not _first_person(body):
        return None
    predicate = low.rstrip(" .!")
    return Stated(sentence, predicate, predicate, preference)


def durable_statements(text: str) -> list[Stated]:
    """The durable statements of ``text``, in order (see the module docstring)."""
    out = []
    for sentence in sentences(text):
        found = _read(sentence)
        if found is not None:
            out.append(_cased(found))
    return out


def _cased(found: Stated) -> Stated:
    """A single value as the sentence wrote it ("Lisbon", not "lisbon")."""
    m = re.search(re.escape(found.value), found.sentence, re.IGNORECASE)
    if m is None or found.value == found.attribute:
        return found
    return Stated(found.sentence, found.attribute, m.group(0), found.preference, found.single)
