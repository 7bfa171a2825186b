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
for, not any one utterance: the most typical request's action as a gerund and its object
(:func:`task_title`), "Canceling flights from MCO to CLT".
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

    The most typical request of the group (the one holding most of the content words the
    requests share, a word the runs' tools also name counting as shared) gives the action:
    a word that opens the name of a tool the runs called (``return`` for
    ``return_delivered_order_items``; of several, the one fewest tools open), else the verb of
    its first infinitive ("I need to *change* …"), else its first word where it opens the
    request (an imperative), else its first gerund after a preposition ("help with
    *changing* my reservation"). The title is that action as a gerund and what it is done to, up
    to the end of the clause, without the speaker's pronouns: "I need to cancel my flights
    from MCO to CLT and get a refund" gives "Canceling flights from MCO to CLT". A request
    with no action is titled by the content words of its span holding the :data:`TITLE_WORDS`
    words the group's requests share most. None without task episodes."""
    requests = list(dict.fromkeys(" ".join(ep.situation.split()) for ep in work if is_task(ep)))
    if not requests:
        return None
    words = [_WORD.findall(r) for r in requests]
    stems = [_content(w) for w in words]
    df: dict[str, float] = dict(Counter(s for row in stems for s in set(row) if s))
    named = _tool_stems(work)
    for term in df:  # what the runs did names the request
        df[term] += len(requests) / named[term] if term in named else 0
    best = max(range(len(requests)), key=lambda i: (_typicality(stems[i], df), -i))
    request = _Request.of(requests[best])
    at = request.action(_tool_verbs(work))
    phrase = (request.activity(at) if at is not None else "") or request.gist(df)
    if not phrase:
        return None
    phrase = phrase[0].upper() + phrase[1:]
    return phrase if len(phrase) <= limit else phrase[: limit - 1].rstrip() + "…"


PERSONAL = frozenset(
    ["i", "me", "my", "mine", "myself", "we", "us", "our", "ours", "you", "your", "yours"]
)
"""The speaker's and the listener's pronouns: a title names the problem, not who has it."""
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
    ]
)
"""Words that open another clause: the action's object ends before them."""
ACTIVITY_AFTER = frozenset(["with", "in", "on", "about", "for", "at", "by"])
"""Prepositions after which an -ing word is an activity: "help with changing my flight"."""


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

    def action(self, verbs: Mapping[str, int]) -> int | None:
        """Where the request says what it wants done (:func:`task_title`)."""
        named = [i for i, s in enumerate(self.stems) if s and s in verbs]
        if named:
            return min(named, key=lambda i: (verbs[self.stems[i] or ""], i))
        for i, w in enumerate(self.words[:-1]):
            if w.lower() == "to" and self.stems[i + 1] and self.words[i + 1].islower():
                return i + 1
        if self.stems and self.stems[0]:
            return 0
        return next(
            (
                i
                for i, w in enumerate(self.words[1:], 1)
                if self.words[i - 1].lower() in ACTIVITY_AFTER and _is_activity(w, self.stems[i])
            ),
            None,
        )

    def activity(self, at: int) -> str:
        """The action at ``at`` as a gerund and its object, to the end of its clause; empty
        when the clause names no object."""
        end = at
        for i in range(at + 1, min(len(self.words), at + SPAN_WORDS)):
            if at + 1 < i and (i - 1 in self.breaks or self.words[i].lower() in CLAUSE_WORDS):
                break
            if self.stems[i]:
                end = i
        kept = [
            self._plain(i)
            for i in range(at + 1, end + 1)
            if self.words[i].lower() not in PERSONAL and not _has_digit(self.words[i])
        ]
        return " ".join([gerund(self.words[at]), *kept]) if kept else ""

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
    return sum(df[s] for s in found) / math.sqrt(len(found)) if found else 0.0


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


def gerund(word: str) -> str:
    """``cancel`` → ``Canceling``, ``change`` → ``Changing``, ``stop`` → ``Stopping``: a verb
    that opens a request, named as the activity (English spelling rules)."""
    low = word.lower()
    if low.endswith("ing") or not low.isalpha():
        return word
    if low.endswith("ie"):
        stemmed = low[:-2] + "y"
    elif low.endswith("e") and not low.endswith(("ee", "ye", "oe")):
        stemmed = low[:-1]
    elif (
        len(low) <= 4
        and len(low) >= 3
        and low[-1] not in _VOWELS | set("wxy")
        and low[-2] in _VOWELS
        and low[-3] not in _VOWELS
    ):
        stemmed = low + low[-1]
    else:
        stemmed = low
    return (stemmed + "ing").capitalize()
