"""What runs of one kind of request teach: the procedure that succeeded, the moves that failed.

A task episode (:mod:`reverie.adapters.task`) is one whole agent run: its request, the tool
calls it made in order (``metadata["calls"]``) and the run's result as outcome. The problem
grouping puts runs of the same kind of request on one page (their request is all that is
compared, :func:`reverie.dream.problems.problem_text`); this module compares them, successes
against failures, without a model:

* the **procedure** — the tool sequence most successful runs followed (consecutive repeats of
  one tool folded), and the steps failing runs left out, citing the successful runs;
* **warnings** — a tool only failing runs called, a step they skipped, or an argument value
  only failing runs passed where successful runs passed another, each citing those runs.

A step or value counts when at least half of one side shows it and the other side does not
(:data:`MAJORITY`), so one odd run is no pattern. The page's title names the action asked
for, not any one utterance: the action most of the group's requests ask for, as a gerund and
the head of its object (:func:`task_title`), "Canceling flights", "Changing the passenger
name on a flight reservation".
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from reverie.dream.cluster import STOP_WORDS
from reverie.dream.lessons import FAILING
from reverie.models import Claim, ClaimRole, Episode, Outcome
from reverie.recall.query import stem
from reverie.text.calls import ToolCall, calls_of, compact_value

__all__ = ["TASK_CATEGORY", "is_task", "task_claims", "task_title"]

TASK_CATEGORY = "task"
"""The category of a task episode, and so the head of its problem's topic key."""

MAJORITY = 0.5
MAX_WARNINGS = 3
TITLE_WORDS = 3
"""The words most shared by a group's requests that its title's span must hold."""
SPAN_WORDS = 9
_WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")


def is_task(ep: Episode) -> bool:
    """Whether an episode is a whole run with its result (``metadata["task"]``)."""
    return isinstance(ep.metadata, dict) and ep.metadata.get("task") is True


@dataclass(frozen=True)
class _Run:
    ep: Episode
    calls: tuple[ToolCall, ...]

    @property
    def steps(self) -> tuple[str, ...]:
        """The tools in call order, consecutive repeats of one tool folded."""
        out: list[str] = []
        for call in self.calls:
            if not out or out[-1] != call.tool:
                out.append(call.tool)
        return tuple(out)

    @property
    def tools(self) -> frozenset[str]:
        return frozenset(c.tool for c in self.calls)

    def values(self) -> frozenset[tuple[str, str, str]]:
        return frozenset(
            (c.tool, k, compact_value(v)) for c in self.calls for k, v in c.args.items()
        )


def _runs(work: Sequence[Episode]) -> tuple[list[_Run], list[_Run]]:
    unique = {ep.id: ep for ep in work if is_task(ep)}
    runs = [_Run(ep, tuple(calls_of(ep))) for ep in unique.values()]
    ok = [r for r in runs if r.ep.outcome is Outcome.SUCCESS]
    return ok, [r for r in runs if r.ep.outcome in FAILING]


def task_claims(work: Sequence[Episode]) -> list[Claim]:
    """The procedure and the warnings of a group's runs (module docstring); ``[]`` without
    task episodes."""
    ok, failed = _runs(work)
    claims: list[Claim] = []
    if ok:
        claims.append(_procedure(ok, failed))
    if failed:
        claims += _warnings(ok, failed)[:MAX_WARNINGS]
    return claims


def _share(runs: Sequence[_Run], has: object) -> list[_Run]:
    return [r for r in runs if has in r.tools]


def _procedure(ok: Sequence[_Run], failed: Sequence[_Run]) -> Claim:
    sequences = Counter(r.steps for r in ok)
    latest = {r.steps: r.ep.created_at for r in ok}
    steps = max(sequences, key=lambda s: (sequences[s], latest[s], s))
    followed = [r for r in ok if r.steps == steps]
    shown = " → ".join(steps) if steps else "answered without any tool call"
    text = f"Procedure that succeeded ({len(followed)} of {len(ok)} successful runs): {shown}."
    if skipped := _skipped(ok, failed):
        text += f" Failing runs did not call {', '.join(skipped)}."
    return _claim(text, followed, ClaimRole.PROCEDURE)


def _skipped(ok: Sequence[_Run], failed: Sequence[_Run]) -> list[str]:
    """Tools most successful runs called and most failing runs did not."""
    if not failed:
        return []
    tools = sorted({t for r in ok for t in r.tools})
    return [
        t
        for t in tools
        if len(_share(ok, t)) >= MAJORITY * len(ok)
        and len(_share(failed, t)) < MAJORITY * len(failed)
    ]


def _warnings(ok: Sequence[_Run], failed: Sequence[_Run]) -> list[Claim]:
    if not ok:
        steps = Counter(r.steps for r in failed).most_common(1)[0][0]
        shown = " → ".join(steps) if steps else "no tool call"
        text = f"Every run failed ({len(failed)}); the most common course: {shown}."
        return [_claim(text, failed, ClaimRole.WARNING)]
    out = [*_only_failing_tools(ok, failed), *_values(ok, failed)]
    return sorted(out, key=lambda c: (-(c.support or 0), c.text))


def _only_failing_tools(ok: Sequence[_Run], failed: Sequence[_Run]) -> list[Claim]:
    used = {t for r in ok for t in r.tools}
    out = []
    for tool in sorted({t for r in failed for t in r.tools} - used):
        runs = _share(failed, tool)
        if len(runs) >= MAJORITY * len(failed):
            text = (
                f"Runs that called {tool} failed ({len(runs)} of {len(failed)}); "
                "no successful run called it."
            )
            out.append(_claim(text, runs, ClaimRole.WARNING))
    return out


def _values(ok: Sequence[_Run], failed: Sequence[_Run]) -> list[Claim]:
    """An argument value at least half the failing runs passed, where every successful run
    that passed the argument (two at least) passed one other value."""
    agreed = _agreed_values(ok)
    bad = Counter(v for r in failed for v in r.values())
    out = []
    for (tool, key, value), n in sorted(bad.items()):
        good = agreed.get((tool, key))
        if good is None or good == value or n < MAJORITY * len(failed):
            continue
        runs = [r for r in failed if (tool, key, value) in r.values()]
        text = (
            f"{tool} with {key}: {_short(value)} failed ({len(runs)} of {len(failed)} failing "
            f"runs); successful runs passed {key}: {_short(good)}."
        )
        out.append(_claim(text, runs, ClaimRole.WARNING))
    return out


def _agreed_values(ok: Sequence[_Run]) -> dict[tuple[str, str], str]:
    """``(tool, argument) -> value`` for the arguments every successful run passing them
    passed alike, seen in two runs at least: a value that varies from run to run (an id, a
    date) is the run's own, not what made it succeed."""
    seen: dict[tuple[str, str], Counter[str]] = {}
    for run in ok:
        for tool, key, value in run.values():
            seen.setdefault((tool, key), Counter())[value] += 1
    return {
        k: next(iter(values))
        for k, values in seen.items()
        if len(values) == 1 and sum(values.values()) >= 2
    }


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _claim(text: str, runs: Sequence[_Run], role: ClaimRole) -> Claim:
    eps = sorted((r.ep for r in runs), key=lambda e: (e.created_at, e.seq or 0, e.id))
    return Claim(
        text=text,
        episode_ids=tuple(e.id for e in eps),
        role=role,
        support=len(eps),
        first_seen=eps[0].created_at,
        last_seen=eps[-1].created_at,
    )


# --- the title ---------------------------------------------------------------------------------


def _content(words: Sequence[str]) -> list[str | None]:
    """Each word's stem when it is a content word, else None."""
    out: list[str | None] = []
    for w in words:
        low = w.lower().replace("’", "'")
        head = low.split("'", 1)[0]  # "i'm", "i'd": a stop word contracted
        content = head not in STOP_WORDS and len(low) > 2 and not low.isdigit()
        out.append(stem(low) if content else None)
    return out


def task_title(work: Sequence[Episode], limit: int = 120) -> str | None:
    """What the group's runs were asked to do, named as an activity and never quoted.

    Each request says what it asks for where a verb is *asked* (:meth:`_Request.asked`): after
    a verb of wanting and ``to`` ("I need to *change* …", never "I'm going to *miss* …"), after
    "can you" or "please", as an imperative that opens a sentence ("*Cancel* my …"), after a
    "help" that asks for it ("help me *cancel* …"), or as an -ing word after a preposition
    ("help with *changing* …"). A verb that opens the name of a tool the runs called is
    preferred (``cancel`` for ``cancel_reservation``; of several, the one fewest tools open).
    What is asked is the verb as a gerund and the head of its object
    (:meth:`_Request.object`): the object's article and its content words, without the
    speaker's pronouns, places, names, dates or codes, and at most one phrase attached to it
    that names a thing ("the passenger name *on my flight reservation*"): "I need to cancel my
    flights from MCO to CLT" asks for "Canceling flights". A pronoun object names what it
    points back to; "make changes to X", where the group's requests also ask to change, is
    "Changing X".

    The group's title is the activity most of its runs ask for (by verb and head noun), worded
    as its most typical request words it (the one holding most of the content words the
    requests share, a word the runs' tools also name counting as shared). Without an activity,
    the most typical request is titled by what it is about (:meth:`_Request.topic`, "Delayed
    flight"), else by the content words of its span holding the :data:`TITLE_WORDS` words the
    group's requests share most. None without task episodes."""
    runs = Counter(" ".join(ep.situation.split()) for ep in work if is_task(ep))
    if not runs:
        return None
    parsed = [_Request.of(r) for r in runs]
    df: dict[str, float] = dict(Counter(s for p in parsed for s in set(p.stems) if s))
    named = _tool_stems(work)
    for term in df:  # what the runs did names the request
        df[term] += len(runs) / named[term] if term in named else 0
    typical = [_typicality(p.stems, df) for p in parsed]
    phrase = _asked(parsed, [runs[r] for r in runs], _tool_verbs(work), df, typical)
    if phrase is None:
        best = max(range(len(parsed)), key=lambda i: (typical[i], -i))
        phrase = parsed[best].topic(df) or parsed[best].gist(df)
    if not phrase:
        return None
    phrase = phrase[0].upper() + phrase[1:]
    return phrase if len(phrase) <= limit else phrase[: limit - 1].rstrip() + "…"


def _asked(
    parsed: Sequence[_Request],
    runs: Sequence[int],
    verbs: Mapping[str, int],
    df: Mapping[str, float],
    typical: Sequence[float],
) -> str | None:
    """The activity most of the group's runs ask for, worded by its most typical request."""
    said = {a.verb for p in parsed for a in p.asked(frozenset(), df) if a}
    found = [(i, a) for i, p in enumerate(parsed) if (a := p.activity(verbs, said, df))]
    shared: Counter[tuple[str, str]] = Counter()
    for i, activity in found:
        shared[activity.key] += runs[i]
    best = max(found, key=lambda f: (shared[f[1].key], typical[f[0]], -f[0]), default=None)
    return best[1].phrase if best else None


PERSONAL = frozenset(
    ["i", "me", "my", "mine", "myself", "we", "us", "our", "ours", "you", "your", "yours"]
)
"""The speaker's and the listener's pronouns: a title names the problem, not who has it."""
POSSESSIVE = frozenset(["my", "our", "your", "his", "her", "their", "its"])
CLAUSE_WORDS = frozenset(
    [
        "and",
        "but",
        "or",
        "so",
        "because",
        "that",
        "which",
        "who",
        "since",
        "while",
        "if",
        "as",
        "when",
        "than",
    ]
)
"""Words that open another clause: the action's object ends before them."""
ACTIVITY_AFTER = frozenset(["with", "in", "on", "about", "for", "at", "by"])
"""Prepositions after which an -ing word is an activity: "help with changing my flight"."""
ATTACHED = frozenset(["on", "of", "for", "to", "in", "with", "from", "about"])
"""Prepositions whose phrase may complete an object: "the passenger name on a reservation"."""
DETERMINERS = frozenset(
    [
        *("a", "an", "the", "this", "that", "these", "those", "my", "our", "your", "his", "her"),
        *("their", "its", "some", "all", "any", "both", "each", "every", "few", "several"),
        *("many", "more", "most", "same", "other", "another", "of", "couple", "one", "two"),
        *("three", "four", "five", "six", "seven", "eight", "nine", "ten"),
    ]
)
"""Words that open a noun phrase before its content words: articles, possessives, quantities
("a couple of", "one of my", "all of the"). A title keeps only its article."""
PRONOUNS = frozenset(["it", "them", "this", "that", "these", "those", "one"])
"""An object that only points back ("cancel *one of them*") names what it points to."""
PARTICLES = frozenset(["out", "up", "back", "off", "down", "over"])
"""The particle of a phrasal verb ("figure *out*", "move *back*"): the verb's, not its object's."""
WANTING = frozenset(
    stem(w)
    for w in (
        *("want", "wanted", "need", "needed", "like", "love", "wish", "hope", "hoping"),
        *("try", "trying", "look", "looking", "plan", "planning", "help", "prefer", "able"),
    )
)
"""Verbs of wanting: an infinitive after one is what the speaker asks for ("I'd like to
*change*"); any other infinitive is something else ("I'm going to *miss*", "led me to *miss*")."""
HELPING = frozenset(stem(w) for w in ("help", "assist", "assistance"))
"""Verbs that ask for help with what follows them: "help me *cancel*", never the task itself."""
MODALS = frozenset(["can", "could", "would", "will", "may"])
"""Before "you", "I" or "we", they open a request: "Can you *cancel* …", "Can I *split* …"."""
AUXILIARIES = frozenset(
    ["is", "are", "was", "were", "be", "been", "being", "has", "have", "had", "got"]
)
"""The auxiliaries of a passive: "my flight *has been* delayed"."""
ADVERB_ENDINGS = ("lly", "tly", "ely", "kly", "bly", "dly", "sly")
"""Endings of adverbs ("really", "recently", "quickly"), not of nouns ("family", "supply")."""
NEGATIONS = frozenset(["not", "never", "no"])
"""Before a verb of wanting, they say what is *not* asked: "I don't want to cancel"."""
LIGHT = frozenset(["make", "do"])
"""Verbs whose object names the action: "make some *changes* to my reservation"."""
LIGHT_FORMS = frozenset(["make", "makes", "made", "making", "do", "does", "did", "done"])
"""Their forms: what follows one is an act ("I made *a mistake*"), never a thing it points to."""


@dataclass(frozen=True)
class _Activity:
    """What one request asks for: its verb's stem, its object's head, and the phrase."""

    verb: str
    head: str
    phrase: str

    @property
    def key(self) -> tuple[str, str]:
        return self.verb, self.head


@dataclass(frozen=True)
class _Phrase:
    """A noun phrase of a request: its words as a title says them, where it ends, its head."""

    words: tuple[str, ...]
    start: int
    end: int
    head: str
    whole: bool
    """Whether it ends where the request's phrase ends (a pause, a function word), not before
    a name, a number or a modifier that was left out."""


@dataclass(frozen=True)
class _Request:
    words: tuple[str, ...]
    stems: tuple[str | None, ...]
    breaks: frozenset[int]
    """Positions of the words a clause or sentence ends after (punctuation follows them)."""
    names: frozenset[str]
    """Words written capitalised where no sentence starts: names and acronyms."""

    @classmethod
    def of(cls, text: str) -> _Request:
        found = list(_WORD.finditer(text))
        words = tuple(m.group() for m in found)
        breaks = {
            i
            for i, m in enumerate(found[:-1])
            if _PUNCT.search(text[m.end() : found[i + 1].start()])
        }
        names = {
            m.group()
            for i, m in enumerate(found)
            if m.group()[:1].isupper() and i > 0 and i - 1 not in breaks
        }
        return cls(words, tuple(_content(words)), frozenset(breaks), frozenset(names))

    def low(self, i: int) -> str:
        """The word at ``i`` in lowercase (empty past either end)."""
        return self.words[i].lower().replace("’", "'") if 0 <= i < len(self.words) else ""

    def asked(self, said: frozenset[str], df: Mapping[str, float]) -> list[_Activity | None]:
        """The activities the request asks for, in order (:func:`task_title`); a verb it asks
        for without an object it names is None."""
        return [self._activity_at(i, said, df) for i in self._verbs()]

    def activity(
        self, verbs: Mapping[str, int], said: set[str], df: Mapping[str, float]
    ) -> _Activity | None:
        """The activity the request asks for: the first one whose verb a tool names (the one
        fewest tools open), else the first. ``said``: the verbs the group's requests ask for,
        which a light verb's object may name."""
        found = [a for a in self.asked(frozenset(said) | set(verbs), df) if a is not None]
        tooled = [a for a in found if a.verb in verbs]
        if tooled:
            return min(tooled, key=lambda a: verbs[a.verb])
        return found[0] if found else None

    def _verbs(self) -> list[int]:
        """Where the request asks for a verb (:func:`task_title`), helping verbs resolved."""
        out: list[int] = []
        for i in range(len(self.words)):
            at = self._asks_at(i)
            if at is not None and (at := self._helped(at)) is not None and at not in out:
                out.append(at)
        return out

    def _asks_at(self, i: int) -> int | None:
        low, before = self.low(i), self.low(i - 1)
        if low == "to" and self._is_verb(i + 1) and self._wants(i):
            return i + 1
        if low in ("you", "i", "we") and before in MODALS and i - 1 not in self.breaks:
            at = i + 2 if self.low(i + 1) == "please" else i + 1
            return at if self._is_verb(at) else None
        if low == "please" and i not in self.breaks and self._is_verb(i + 1):
            return i + 1
        opens = i == 0 or i - 1 in self.breaks
        if opens and self.stems[i] and self.low(i + 1) in DETERMINERS | POSSESSIVE:
            return i  # an imperative: "Cancel my booking"
        if i > 0 and before in ACTIVITY_AFTER and _is_activity(self.words[i], self.stems[i]):
            return i
        return None

    def _is_verb(self, i: int) -> bool:
        word = self.words[i] if i < len(self.words) else ""
        return word.islower() and (bool(self.stems[i]) or word in LIGHT) and not _has_digit(word)

    def _wants(self, to: int) -> bool:
        """Whether the ``to`` at ``to`` follows a verb of wanting ("like to", "help me to")."""
        before = to - 1 if self.low(to - 1) not in PERSONAL else to - 2
        if before < 0 or stem(self.low(before)) not in WANTING:
            return False
        denied = self.low(before - 1)
        return denied not in NEGATIONS and not denied.endswith("n't")

    def _helped(self, at: int) -> int | None:
        """The verb a helping verb asks help with ("help me *cancel*", "assist with
        *changing*"), or the verb itself when it helps nobody."""
        if self.stems[at] not in HELPING:
            return at
        i = at + 1
        while self.low(i) in PERSONAL and i - 1 not in self.breaks:
            i += 1
        if i - 1 in self.breaks:
            return None
        if self.low(i) == "to" and self._is_verb(i + 1):
            return i + 1
        if self.low(i) in ACTIVITY_AFTER and _is_activity(self.low(i + 1), self.stems[i + 1]):
            return i + 1 if i not in self.breaks else None
        return i if self._is_verb(i) else None

    def _activity_at(
        self, at: int, said: frozenset[str], df: Mapping[str, float]
    ) -> _Activity | None:
        """The activity of the verb at ``at``: the verb, its particle, and what it is done to;
        None when a pause follows the verb or its object names nothing."""
        if at in self.breaks:
            return None
        verb, i = self.words[at].lower(), at + 1
        if self.low(i) in PARTICLES:
            verb, i = f"{verb} {self.low(i)}", i + 1
        elif self.low(i) in ("or", "and") and i not in self.breaks and self._is_verb(i + 1):
            verb, i = f"{verb} {self.low(i)} {gerund(self.low(i + 1)).lower()}", i + 2
        if verb in LIGHT and (named := self._named_action(i, said)) is not None:
            return named
        head = self.object(i, at, df)
        if head is None:
            return None
        return _Activity(stem(verb.split()[0]), stem(head.head), _phrased(verb, head))

    def _named_action(self, i: int, said: frozenset[str]) -> _Activity | None:
        """The action a light verb's object names ("make some *changes* to my reservation"),
        when the group's requests ask for it as a verb too, done to what follows."""
        action = self._phrase(i)
        if action is None or not action.whole or self.low(action.end) not in ATTACHED:
            return None
        verb = _singular(action.head)
        done_to = self._phrase(action.end + 1)
        if stem(verb) not in said or done_to is None or not self._plain_end(done_to.end):
            return None
        return _Activity(stem(verb), stem(done_to.head), _phrased(verb, done_to))

    def object(self, i: int, at: int, df: Mapping[str, float]) -> _Phrase | None:
        """The object of the verb at ``at``, starting at ``i``: its noun phrase and at most one
        phrase attached to it; a pronoun names the phrase before the verb it points to."""
        if i >= len(self.words) or i - 1 in self.breaks:
            return None
        first = self._attached(i)
        if first is None:
            return self._pointed(at, df) if self._points_back(i) else None
        return first

    def _attached(self, i: int) -> _Phrase | None:
        """The noun phrase at ``i`` and the one a preposition attaches to it, when that one
        opens with a determiner (a thing: "on *my* reservation", not "for tomorrow") and names
        no one in particular (not "for my friend *Ivan*")."""
        first = self._phrase(i)
        if first is None or not first.whole or first.end - 1 in self.breaks:
            return first
        if self.low(first.end) not in ATTACHED or self.low(first.end + 1) not in DETERMINERS:
            return first
        attached = self._phrase(first.end + 1)
        if attached is None or not self._plain_end(attached.end):
            return first
        words = (*first.words, self.low(first.end), *attached.words)
        return _Phrase(words, first.start, attached.end, first.head, attached.whole)

    def _points_back(self, i: int) -> bool:
        """Whether the phrase at ``i`` is a pronoun ("it", "one of them", "that one")."""
        while self.low(i) in DETERMINERS and not self._is_pronoun(i):
            i += 1
        return self._is_pronoun(i)

    def _is_pronoun(self, i: int) -> bool:
        """Whether the word at ``i`` stands for a phrase ("it", "one of them", "that" alone)."""
        low, after = self.low(i), self.low(i + 1)
        if low in ("it", "them"):
            return True
        named = i + 1 < len(self.words) and i not in self.breaks and self._in_phrase(i + 1, i)
        return low in PRONOUNS and not named and after != "of"

    def _pointed(self, at: int, df: Mapping[str, float]) -> _Phrase | None:
        """What a pronoun object points back to: of the noun phrases opened by a determiner
        before the verb (not an act, "I made *a mistake*", nor help asked for), the one whose
        head the group's requests share most, then one no preposition governs ("a camera
        *from your store*"), then the nearest ("I booked two *flights* by mistake; cancel one
        of them")."""
        before = [
            p
            for p in self._phrases(at)
            if self.low(p.start - 1) not in LIGHT_FORMS and stem(p.head) not in HELPING
        ]

        def rank(p: _Phrase) -> tuple[float, bool, int]:
            argument = self.low(p.start - 1) not in ATTACHED | ACTIVITY_AFTER  # not "from *it*"
            return df.get(stem(p.head), 0.0), argument, p.end

        return max(before, key=rank, default=None)

    def _phrases(self, end: int) -> list[_Phrase]:
        """The noun phrases opened by a determiner that end before ``end``."""
        found = [self._phrase(k) for k in self._starts() if k < end]
        return [p for p in found if p is not None and p.end <= end]

    def _phrase(self, i: int) -> _Phrase | None:
        """The noun phrase at ``i``: its opening determiners (a title keeps the article, a
        possessive becomes one) and its run of lowercase content words, without a trailing
        participle ("a passenger *named* …"); None when it names nothing."""
        lead: list[str] = []
        lead_at = i
        while self.low(i) in DETERMINERS and not self._is_pronoun(i):
            lead.append(self.low(i))
            if i in self.breaks:
                return None
            i += 1
        if self.low(i) == "how" and self.low(i + 1) in ("many", "much"):
            lead, i = ["how", self.low(i + 1)], i + 2  # "figure out *how many* suitcases"
        start = i
        while i < len(self.words) and self._in_phrase(i, start):
            i += 1
        run = [k for k in range(start, i) if not _has_digit(self.words[k])]  # "a 500ml bottle"
        kept = list(run)
        if len(kept) > 1 and i - 1 not in self.breaks and self.low(i) in DETERMINERS - {"of"}:
            kept.pop()  # a word before another phrase qualifies the verb: "earlier *this* month"
        while len(kept) > 1 and _is_participle(self.words[kept[-1]]):
            kept.pop()
        kept = [k for k in kept[:-1] if not _is_adverb(self.low(k))] + kept[-1:]
        if not kept:
            return None
        words = [self.words[k].lower() for k in kept]
        whole = kept[-1:] == run[-1:] and self._plain_end(i)
        if whole and (done := self._done_by_speaker(i)):
            words, i = [done, *words], i + 2
        article = lead if lead[:1] == ["how"] else _article(lead, words)
        return _Phrase((*article, *words), lead_at, i, words[-1], whole)

    def _done_by_speaker(self, i: int) -> str:
        """The participle of a clause by the speaker that follows a phrase ("a flight *I
        booked*" → "a booked flight"), or empty."""
        said_by = self.low(i) in ("i", "we") and i not in self.breaks
        done = self.words[i + 1] if said_by and i + 1 < len(self.words) else ""
        return done if done.islower() and _is_participle(done) else ""

    def _in_phrase(self, i: int, start: int) -> bool:
        word = self.words[i]
        if i > start and i - 1 in self.breaks:
            return False
        low = word.lower()
        if word[:1].isdigit():
            return True  # a quantity inside the phrase, left out of it
        return (
            bool(self.stems[i])
            and word.islower()
            and not _has_digit(word)
            and low not in CLAUSE_WORDS | PARTICLES | PRONOUNS
        )

    def _plain_end(self, i: int) -> bool:
        """Whether a phrase ending before ``i`` ends at a pause or a function word, not before a
        name, a number or a code it would leave out."""
        if i >= len(self.words) or i - 1 in self.breaks:
            return True
        word = self.words[i]
        if self.low(i).split("'", 1)[0] in PERSONAL:  # "a flight *I* booked": no name
            return True
        return not (word[:1].isupper() or _has_digit(word) or word in self.names)

    def topic(self, df: Mapping[str, float]) -> str:
        """What a request that asks for nothing is about: the noun phrase it says something
        befell ("my flight HAT045 has been delayed" → "Delayed flight"), else the one whose
        words the group's requests share most; empty without one."""
        found = [self._attached(k) for k in self._starts()]
        phrases = [p for p in found if p is not None]
        if not phrases:
            return ""
        befell = {p.end: self._befell(p.end) for p in phrases}
        best = max(
            phrases,
            key=lambda p: (bool(befell[p.end]), _typicality(_content(p.words), df), -p.end),
        )
        words = list(best.words[1:] if best.words[0] in ("a", "an", "the") else best.words)
        return " ".join([befell[best.end], *words] if befell[best.end] else words)

    def _starts(self) -> list[int]:
        """Where noun phrases open: a determiner not after another."""
        return [
            k
            for k in range(len(self.words))
            if self.low(k) in DETERMINERS and (k == 0 or self.low(k - 1) not in DETERMINERS)
        ]

    def _befell(self, i: int) -> str:
        """The participle of a passive that follows a phrase in its clause ("… *has been
        delayed*"), or empty."""
        while i < len(self.words) and self.low(i) not in CLAUSE_WORDS:
            if self.low(i) in AUXILIARIES:
                j = i + 1
                while self.low(j) in AUXILIARIES or (j < len(self.words) and not self.stems[j]):
                    if j - 1 in self.breaks:
                        return ""
                    j += 1
                word = self.low(j)
                ok = j < len(self.words) and j - 1 not in self.breaks and _is_participle(word)
                return word if ok else ""
            if i in self.breaks:
                return ""
            i += 1
        return ""

    def gist(self, df: Mapping[str, float]) -> str:
        """The content words of the request's most shared span."""
        span, start = _span(self.words, self.stems, df)
        return " ".join(
            self._plain(start + i)
            for i, w in enumerate(span)
            if self.stems[start + i] and not _has_digit(w)
        )

    def _plain(self, i: int) -> str:
        word = self.words[i]
        return word if word in self.names or (len(word) > 1 and word.isupper()) else word.lower()


_PUNCT = re.compile(r"[.,;:!?()\[\]—–]")


def _phrased(verb: str, obj: _Phrase) -> str:
    head, *particle = verb.split()
    return " ".join([gerund(head), *particle, *obj.words])


def _article(lead: Sequence[str], words: Sequence[str]) -> list[str]:
    """The article a title gives a noun phrase: the one it had, else ``a`` for a singular
    phrase the speaker owned ("my flight" → "a flight"), else none ("all of my flights")."""
    if "the" in lead or "another" in lead:
        return ["the" if "the" in lead else "another"]
    owned = any(w in POSSESSIVE for w in lead)
    if ("a" in lead or "an" in lead or owned) and not _is_plural(words[-1]):
        return ["an" if _vowel_sound(words[0]) else "a"]
    return []


def _vowel_sound(word: str) -> bool:
    """Whether a word is said opening with a vowel, as "an" wants ("an upcoming", "a one-way",
    "a user")."""
    return word[:1] in _VOWELS and not word.startswith(("one", "uni", "use", "eu"))


def _is_plural(word: str) -> bool:
    return len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is"))


def _singular(word: str) -> str:
    return word[:-1] if _is_plural(word) else word


def _is_adverb(word: str) -> bool:
    """An adverb inside a noun phrase ("a *really* tough time"): what it says is the speaker's
    tone, not the thing."""
    return len(word) > 4 and word.endswith(ADVERB_ENDINGS)


def _is_participle(word: str) -> bool:
    """A past participle after a noun ("a passenger *named* …", "a flight *booked* …")."""
    low = word.lower()
    return len(low) > 4 and low.endswith("ed") and not low.endswith("eed")


def _is_activity(word: str, stemmed: str | None) -> bool:
    """Whether ``word``, after a preposition, names an activity already ("help with
    *changing* my flight"): a lowercase content word in the gerund form (after "my" or "an",
    an -ing word is a thing: "my booking", "an upcoming trip")."""
    return bool(stemmed) and word.islower() and len(word) > 5 and word.endswith("ing")


def _has_digit(word: str) -> bool:
    return any(c.isdigit() for c in word)


def _tool_verbs(work: Sequence[Episode]) -> Counter[str]:
    """The stems of the words that open the names of the tools the group's runs called, each
    with the number of those tools it opens: a tool's name is its action, then its object
    (``cancel_reservation``), and an action many tools share (``get``) is a read, not what a
    request asks for."""
    tools = {t for ep in work if is_task(ep) for t in ep.tools}
    heads = (_WORD.findall(t.replace("_", " ").replace("-", " ")) for t in tools)
    return Counter(s for s in (_content(h[:1])[0] if h else None for h in heads) if s)


def _tool_stems(work: Sequence[Episode]) -> Counter[str]:
    """The stems of the words in the names of the tools the group's runs called, each with the
    number of those tools naming it: a word in one tool's name says what that tool does
    (``exchange``), one in many is the domain every tool is about (``order`` in
    ``get_order_details``, ``cancel_pending_order``, ``exchange_delivered_order_items``)."""
    tools = {t for ep in work if is_task(ep) for t in ep.tools}
    return Counter(s for t in tools for s in set(_content(_WORD.findall(t.replace("_", " ")))) if s)


def _typicality(row: Sequence[str | None], df: Mapping[str, float]) -> float:
    found = [s for s in set(row) if s]
    return sum(df.get(s, 0.0) for s in found) / math.sqrt(len(found)) if found else 0.0


def _span(
    words: Sequence[str], stems: Sequence[str | None], df: Mapping[str, float]
) -> tuple[list[str], int]:
    """The words from the first to the last of the request's most shared content words (at
    most :data:`SPAN_WORDS`, kept around the most shared one), and where they start."""
    content = [i for i, s in enumerate(stems) if s]
    if not content:
        return list(words[:SPAN_WORDS]), 0
    top = min(content, key=lambda i: (-df[stems[i] or ""], i))
    # then the most shared, nearest the most shared: a phrase, not words strewn apart
    ranked = sorted(content, key=lambda i: (-df[stems[i] or ""], abs(i - top), i))
    keep = sorted(ranked[:TITLE_WORDS])
    if not keep:
        return list(words[:SPAN_WORDS]), 0
    while keep[-1] - keep[0] + 1 > SPAN_WORDS and len(keep) > 1:
        keep.remove(max(keep, key=lambda i: (abs(i - ranked[0]), i)))
    start, end = keep[0], keep[-1]
    if start == end:  # one word names nothing: run on to the next content word, or back
        end = next((i for i in range(end + 1, len(words)) if stems[i]), end)
        if end == start:
            start = next((i for i in range(start - 1, -1, -1) if stems[i]), start)
        start, end = max(start, end - SPAN_WORDS + 1), min(end, start + SPAN_WORDS - 1)
    return list(words[start : end + 1]), start


_VOWELS = frozenset("aeiou")
_VOWEL_GROUPS = re.compile(r"[aeiouy]+")


def gerund(word: str) -> str:
    """``cancel`` → ``Canceling``, ``change`` → ``Changing``, ``split`` → ``Splitting``: a verb
    that opens a request, named as the activity (English spelling rules)."""
    low = word.lower()
    if low.endswith("ing") or not low.isalpha():
        return word
    if low.endswith("ie"):
        stemmed = low[:-2] + "y"
    elif low.endswith("e") and not low.endswith(("ee", "ye", "oe")):
        stemmed = low[:-1]
    elif (
        len(_VOWEL_GROUPS.findall(low)) == 1  # one syllable: "stop", "split", not "cancel"
        and len(low) >= 3
        and low[-1] not in _VOWELS | set("wxy")
        and low[-2] in _VOWELS
        and low[-3] not in _VOWELS
    ):
        stemmed = low + low[-1]
    else:
        stemmed = low
    return (stemmed + "ing").capitalize()
