"""Turn an agent's free-text question into the content terms recall searches for.

Full-text search ORs the terms together, so one function word in the list ("the", "what") would
match every page and every episode; that is the bug that makes a naive recall return the whole
brain. Stop words are therefore removed here, before the store sees anything, and the same
terms later decide each unit's *coverage* (the share of terms it contains), which is what the
relevance floor in :mod:`reverie.recall.search` tests.

Terms split like SQLite FTS5's ``unicode61`` tokenizer (letters and digits; ``_``, ``-`` and
punctuation separate), so what we count is what the index holds. :func:`stem` is a deliberately
light suffix stripper, enough to let "deploys", "deploying" and "deployed" meet "deploy".

Some words are the *frame* of a question rather than its topic, and only in that frame: "work"
in "how do password resets work?", "process" in "what is the process for refunds?". Counted,
such a word is a term no stored line holds (nobody writes "password resets work"), so it is the
rarest of the question's terms and outweighs the ones that name the topic in the coverage floor.
Outside the frame the same word is content ("Where does Ana work?", "kill the process"), so
:data:`FRAMES` removes it only where a question is shaped around it.

A brain of one person (a scope with a ``user``) is that person: a question that names them
("Where does Priya live?" in ``priya``'s scope) asks about the scope itself, and they never say
their own name, so their name is no term to search for (:func:`owner_words`). Nor is it a
meaning to match: every statement of the brain is theirs, in the first person, and none holds
the name, so :func:`unnamed` takes it out of what the embedder reads ("Where does live?").
Measured on ``bench chat`` (MiniLM, seed 0, before a dream): with the name, answered 0.578 and
never-said empty 0.722; without it 0.656 and 0.778; with the question put in the first person
("Where does I live?", "What is my city?") 0.667 and 0.694, which brings unrelated first-person
lines nearer too.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = [
    "FRAMES",
    "MAX_TERMS",
    "STOP_WORDS",
    "owner_words",
    "query_terms",
    "stem",
    "stems",
    "unnamed",
]

MAX_TERMS = 16
_WORD = re.compile(r"[^\W_]+")

_STOP_TEXT = """
    a about above after again against all also am an and any are aren as at be because been
    before being below between both but by can cannot could couldn did didn do does doesn doing
    don down during each either else etc ever few for from further get gets got had hadn has hasn
    have haven having he her here hers herself him himself his how however i if in into is isn it
    its itself just let ll me might more most much must mustn my myself need no nor not now of off
    on once only or other ought our ours ourselves out over own per please re same shall shan she
    should shouldn so some such than that the their theirs them themselves then there these they
    this those through thus to too under until up upon us ve very via was wasn we were weren what
    whatever when whenever where wherever whether which while who whom whose why will with won
    would wouldn yes yet you your yours yourself yourselves
    tell give know remember recall keeps still
"""
STOP_WORDS = frozenset(_STOP_TEXT.split())
"""English function words, question words, the verbs agents wrap questions in, and the aspect
words of a complaint ("keeps timing out", "still fails"), which say how often, not what ("keep"
itself stays: "keep the lock file", "keep busy")."""

_FRAME_VERBS = "work|works|working|function|functions|happen|happens|go|goes|handled|managed|done"
_AFTER_FRAME = "here|there|now|today|again|exactly|actually|nowadays"
FRAMES = (
    # "how do password resets work (here)?", "how are refunds handled?": the last verb asks for
    # an explanation; "how do I get to work?" is about a place, so "to work" stays
    re.compile(
        r"(?<=\bhow\s)\s*(?:do|does|did|can|could|should|would|will|is|are)\b[^?.!]+?(?<!\bto)\s"
        rf"(?P<frame>{_FRAME_VERBS})\b(?=(?:\s+(?:{_AFTER_FRAME}))?\s*(?:[?.!]|$))"
    ),
    # "what is the process / procedure / way for …", "the steps to …": the noun asks for one
    re.compile(r"\bthe\s+(?P<frame>process|procedure|steps|way)\s+(?=for\b|to\b|of\b)"),
)
"""Question frames, each with a ``frame`` group: the word the question is shaped around, not
about (module docstring)."""

_SUFFIXES = ("ing", "ed", "es", "s", "ly")
_KEEP_DOUBLE = frozenset("lsz")


def query_terms(text: str) -> list[str]:
    """The content terms of ``text``: lowercased, frame words (:data:`FRAMES`), stop words and
    1-character tokens removed, numbers kept, first occurrence order, at most :data:`MAX_TERMS`."""
    terms: dict[str, None] = {}
    for word in _WORD.findall(_unframed(text.lower())):
        if len(word) > 1 and word not in STOP_WORDS:
            terms.setdefault(word, None)
            if len(terms) == MAX_TERMS:
                break
    return list(terms)


def owner_words(user: str | None) -> frozenset[str]:
    """The words of a scope's ``user`` id that name the person ("priya-00" -> "priya"): the
    runs of two letters or more of the id, of its local part for an address ("j.smith@acme"
    -> "smith": the domain names an organisation, not the person), lowercased; none for a
    scope without a user."""
    if not user:
        return frozenset()
    local = user.split("@", 1)[0]
    return frozenset(w.lower() for w in re.findall(r"[^\W\d_]{2,}", local))


def unnamed(text: str, owner: frozenset[str]) -> str:
    """``text`` without the owner's name (:func:`owner_words`), its possessive included
    ("What is Priya's city?" -> "What is city?"); unchanged when it does not name them."""
    if not owner:
        return text
    names = "|".join(re.escape(w) for w in sorted(owner, key=len, reverse=True))
    text = re.sub(rf"\b(?:{names})(?:'s|\u2019s|')?(?!\w)", "", text, flags=re.IGNORECASE)
    return " ".join(text.split())


def _unframed(text: str) -> str:
    """``text`` without the frame words of :data:`FRAMES`."""
    for frame in FRAMES:
        text = frame.sub(lambda m: m.group(0)[: m.start("frame") - m.start()] + " ", text)
    return text


@lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    """Strip one common English suffix (and a final ``e``; ``y`` becomes ``i``) so inflections meet.

    Not Porter: it only has to make a query term and the words of a claim meet, both sides
    passing through the same function. Cached: recall stems the same words over and over.
    ``stem("deploying") == stem("deploys") == stem("deploy")``.
    """
    w = word.lower()
    for suffix in _SUFFIXES:
        if len(w) - len(suffix) >= 3 and w.endswith(suffix):
            if suffix == "s" and w.endswith("ss"):
                break
            w = w[: -len(suffix)]
            if len(w) > 3 and w[-1] == w[-2] and w[-1] not in _KEEP_DOUBLE and w[-1].isalpha():
                w = w[:-1]
            break
    if len(w) > 3 and w[-1] in "ey":
        w = w[:-1] + ("i" if w[-1] == "y" else "")
    return w


_ARGUMENT_NAMES = re.compile(
    r"""--[A-Za-z][\w-]*        # a flag's name: --patient
      | "[A-Za-z_]\w*"\s*:     # a JSON key: "patient":
      | (?<=[(,])\s*[A-Za-z_]\w*=(?!=)  # a keyword argument: (patient=
    """,
    re.VERBOSE,
)


def spoken_stems(text: str) -> frozenset[str]:
    """The stems of ``text`` without the names of a call's arguments (``--patient``,
    ``"patient":``, ``patient=``): every call of a tool repeats them, so they say what the
    tool takes, not what the case was about. A unit must share a question's terms in what it
    says, not in its calls' schema; its coverage still counts every word."""
    return stems(_ARGUMENT_NAMES.sub(" ", text))


def stems(text: str) -> frozenset[str]:
    """The stems of every word in ``text`` (stop words included; they never match a term).

    Cached by text: recall stems the same claims and episodes on query after query, and a text
    is its own key, so a revised claim is simply a new entry."""
    return _stems(text) if len(text) <= _CACHED_CHARS else _stems.__wrapped__(text)


_CACHED_CHARS = 2000


@lru_cache(maxsize=16_384)
def _stems(text: str) -> frozenset[str]:
    return frozenset(stem(w) for w in _WORD.findall(text.lower()))
