"""What one problem's episodes teach: lessons synthesised across paraphrases, and fixes drawn
from failure then success.

Pure and deterministic; the input is one problem's work set in time order.

**Stated lessons.** Lessons that say the same thing become one claim. Two variants are one when
their normalised words (stop words out, stemmed) overlap enough
(:func:`reverie.dream.dedupe.same_lesson`, as for learnt-in-the-same-context lessons), or, with
an embedder, when their cosine reaches ``DreamConfig.lesson_cosine``. Each claim is worded by its
most central variant — the one most like the others, weighted by how many episodes taught each —
and carries its support (episodes, first and last seen) and every teaching episode's id. A
template ("approach worked", "N/A") is never a lesson.

**Unstated lessons.** A problem that failed and then succeeded with a *different* action teaches
that action: "When <situation> fails with <error>: <action> worked (k of n times since <date>)".
An action is the set of its words and flags; two actions are the same when they pass the same
flags and their sets overlap by :data:`SAME_ACTION` (Jaccard), so a flag added or changed
(``kubectl apply`` then ``kubectl apply --timeout=10m``) is another action: the usual fix. A
success is a retry, not a fix, when its action failed *before* it. Among candidate fixes the one
whose latest attempt succeeded most recently wins; a fix whose latest attempt failed has stopped
working and is superseded, not kept beside the newer one.

A tool call with JSON arguments (:mod:`reverie.text.calls`) is compared by its arguments: a
call is another action when one argument is added, removed or changed; after a failed call of
the *same* tool, the claim states what changed (``timeout: "10m" added``). An episode that
records several calls (a chat turn, a whole run) contributes each call as a try, in order, and
there only a call of the tool that failed can be its fix.

**The case, not the fix.** An argument whose value the problem's successful calls of a tool do
not agree on (``order_id``, ``sku``, an amount: two or more values among its successes) names
the case a call was about, not what made it work. Calls are compared, and a change is stated,
by whether they pass it, never by its value: ``lookup_stock {"sku": "A"}`` failing, then
``lookup_stock {"sku": "B"}`` working is a retry, and twelve return labels for twelve orders are
one fix, twelve times. What the successes agree on (``"timeout": "10m"``) stays in the action.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import lru_cache
from typing import TYPE_CHECKING

from reverie.config import DreamConfig
from reverie.dream.boilerplate import is_template_lesson
from reverie.dream.dates import resolve_relative_dates
from reverie.dream.dedupe import lesson_words, same_lesson
from reverie.models import Claim, ClaimRole, Episode, Outcome
from reverie.text.calls import ToolCall, arg_changes, calls_of, compact_value, parse_call
from reverie.text.slots import slot_of

if TYPE_CHECKING:
    from reverie.embed import Embedder

__all__ = [
    "FAILING",
    "SAME_ACTION",
    "Currency",
    "Fix",
    "LessonGroup",
    "current_fix",
    "current_values",
    "synthesize_lessons",
]

SAME_ACTION = 0.6
FAILING = frozenset({Outcome.FAILURE, Outcome.TIMEOUT, Outcome.PARTIAL})
MAX_VARIANTS = 120
"""Distinct lesson wordings compared pairwise within one problem; more are matched exactly."""

_WORDS = re.compile(r"[^\W_]+")
_ACTION_TOKEN = re.compile(r"--?[\w][\w.=:/-]*|[\w][\w.:/=-]*")
_WARNING = re.compile(r"^\s*(?:don'?t|do not|never|avoid|stop|beware|careful|must not)\b", re.I)


# --- stated lessons ----------------------------------------------------------------------------


@dataclass
class _Variant:
    text: str
    words: frozenset[str]
    episodes: list[Episode] = field(default_factory=list)


@dataclass(frozen=True)
class LessonGroup:
    """One lesson and every episode that taught it, worded by its most central variant."""

    text: str
    episodes: tuple[Episode, ...]

    @property
    def support(self) -> int:
        return len(self.episodes)

    def claim(self, limit: int) -> Claim:
        eps = self.episodes
        role = ClaimRole.WARNING if _WARNING.match(self.text) else ClaimRole.LESSON
        return Claim(
            text=_fit(self.text, limit),
            episode_ids=tuple(dict.fromkeys(e.id for e in eps)),
            role=role,
            support=len(eps),
            first_seen=min(e.created_at for e in eps),
            last_seen=max(e.created_at for e in eps),
        )


def _fit(text: str, limit: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def synthesize_lessons(
    work: Sequence[Episode],
    *,
    embedder: Embedder | None = None,
    config: DreamConfig | None = None,
) -> list[LessonGroup]:
    """The distinct lessons of ``work``, most supported first (ties: first taught); lesson
    identity uses ``config``'s overlap settings and ``lesson_cosine``."""
    variants: dict[str, _Variant] = {}
    teaching = (ep for ep in work if ep.lesson)
    for ep in sorted(teaching, key=_time_order):  # any input order: the first wording is oldest
        if not ep.lesson or is_template_lesson(ep.lesson):
            continue
        text = resolve_relative_dates(ep.lesson.strip(), ep.created_at)
        key = " ".join(_WORDS.findall(text.lower()))
        variant = variants.setdefault(key, _Variant(text=text, words=lesson_words(text)))
        variant.episodes.append(ep)
    ordered = list(variants.values())
    similar = _similarity(ordered, embedder, config or DreamConfig())
    groups = _components(ordered, similar)
    out = [_central_group(members, similar, ordered) for members in groups]
    return sorted(out, key=lambda g: (-g.support, min(e.created_at for e in g.episodes), g.text))


@dataclass(frozen=True)
class Currency:
    """Lessons after value changes: the ``current`` ones, and each ``superseded`` value with
    the time the value that replaced it was first taught."""

    current: list[LessonGroup]
    superseded: dict[str, datetime]


def current_values(groups: Sequence[LessonGroup]) -> Currency:
    """Lessons that state one slot with different values ("the index is X", later "the index
    is Y", :func:`reverie.text.slots.slot_of`): only the newest value's stays a claim; the
    older ones are superseded (their episodes stay cited by the page's evidence line)."""
    newest: dict[str, tuple[datetime, LessonGroup, str]] = {}
    read = [(g, slot_of(g.text)) for g in groups]
    for g, value in read:
        if value is not None:
            when = max(e.created_at for e in g.episodes)
            if value.key not in newest or when > newest[value.key][0]:
                newest[value.key] = (when, g, value.value_key)
    current: list[LessonGroup] = []
    gone: dict[str, datetime] = {}
    for g, v in read:
        if v is None or newest[v.key][2] == v.value_key:
            current.append(g)
            continue
        since = min(e.created_at for e in newest[v.key][1].episodes)
        kept = set(_value_of(newest[v.key][1]).split())
        for token in set(v.value.split()) - kept:
            gone[token] = max(gone.get(token, since), since)
    return Currency(current=current, superseded=gone)


def _value_of(group: LessonGroup) -> str:
    value = slot_of(group.text)
    return value.value if value is not None else ""


def _similarity(
    variants: Sequence[_Variant], embedder: Embedder | None, config: DreamConfig
) -> Callable[[int, int], float]:
    """A pairwise similarity in [0, 1] and, through it, the "same lesson" test (≥ 0.5)."""
    cosine = config.lesson_cosine
    vectors = None
    if embedder is not None and 1 < len(variants) <= MAX_VARIANTS:
        import numpy as np  # noqa: PLC0415 (numpy stays out of `import reverie`)

        vectors = np.asarray(embedder.embed([v.text for v in variants]), dtype=np.float32)

    known: dict[tuple[int, int], float] = {}

    def score(i: int, j: int) -> float:
        pair = (i, j) if i < j else (j, i)
        if pair not in known:
            known[pair] = pairwise(*pair)
        return known[pair]

    slots = [slot_of(v.text) for v in variants]

    def pairwise(i: int, j: int) -> float:
        one, two = slots[i], slots[j]
        if one is not None and two is not None and one.key == two.key:
            return 0.5 if one.value_key == two.value_key else 0.0  # a value changed: two claims
        a, b = variants[i].words, variants[j].words
        jaccard = len(a & b) / len(a | b) if a | b else 0.0
        if same_lesson(a, b, True, config):
            return max(0.5, jaccard)
        if vectors is not None and float(vectors[i] @ vectors[j]) >= cosine:
            return max(0.5, float(vectors[i] @ vectors[j]))
        return min(jaccard, 0.49)

    return score


def _components(
    variants: Sequence[_Variant], similar: Callable[[int, int], float]
) -> list[list[int]]:
    parent = list(range(len(variants)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    limit = min(len(variants), MAX_VARIANTS)
    for i in range(limit):
        for j in range(i + 1, limit):
            if root(i) != root(j) and similar(i, j) >= 0.5:
                parent[max(root(i), root(j))] = min(root(i), root(j))
    groups: dict[int, list[int]] = {}
    for i in range(len(variants)):
        groups.setdefault(root(i), []).append(i)
    return [groups[r] for r in sorted(groups)]


def _central_group(
    members: Sequence[int], similar: Callable[[int, int], float], variants: Sequence[_Variant]
) -> LessonGroup:
    def centrality(i: int) -> tuple[float, int, int]:
        weight = sum(similar(i, j) * len(variants[j].episodes) for j in members if j != i)
        return (weight + len(variants[i].episodes), len(variants[i].episodes), -i)

    best = max(members, key=centrality)
    eps = sorted((e for i in members for e in variants[i].episodes), key=_time_order)
    return LessonGroup(text=variants[best].text, episodes=tuple(eps))


def _time_order(ep: Episode) -> tuple[datetime, int, str]:
    return (ep.created_at, ep.seq or 0, ep.id)


# --- failure then fix --------------------------------------------------------------------------


@dataclass(frozen=True)
class Fix:
    """What worked after a problem failed: the action, its successes and attempts since, and,
    for a tool call with JSON arguments, what changed from the call that failed."""

    action: str
    error: str | None
    situation: str
    successes: tuple[Episode, ...]
    attempts: int
    since: datetime
    change: str = ""

    def claim(self, limit: int) -> Claim:
        when = f"When {self.situation}" if self.situation else "When this"
        fails = f" fails with {self.error}" if self.error else " fails"
        tally = f"{len(self.successes)} of {self.attempts} times since {self.since.date()}"
        changed = f"{self.change}; " if self.change else ""
        text = f"{when}{fails}: {self.action} worked ({changed}{tally})."
        return Claim(
            text=_fit(text, limit),
            episode_ids=tuple(dict.fromkeys(e.id for e in self.successes)),
            role=ClaimRole.FIX,
            support=len(self.successes),
            first_seen=self.successes[0].created_at,
            last_seen=self.successes[-1].created_at,
        )


@lru_cache(maxsize=1 << 14)
def action_words(action: str) -> frozenset[str]:
    """An action's words and flags; a tool call with JSON arguments is its tool and one flag
    per argument (``--key=value``), so calls are the same only with the same arguments."""
    call = parse_call(action)
    if call is not None:
        return _call_words(call[0], call[1])
    return frozenset(t.lower().strip(".,;:") for t in _ACTION_TOKEN.findall(action) if len(t) > 1)


def _call_words(
    tool: str, args: Mapping[str, object], varying: frozenset[tuple[str, str]] = frozenset()
) -> frozenset[str]:
    return frozenset(
        {tool.lower(), *(f"--{k}={_value(tool, k, v, varying)}" for k, v in args.items())}
    )


_CASE = "…"
"""What a call's argument reads as when its value names the case (module docstring)."""


def _value(tool: str, key: str, value: object, varying: frozenset[tuple[str, str]]) -> str:
    return _CASE if (tool, key) in varying else compact_value(value)


def _varying_args(calls: Sequence[ToolCall]) -> frozenset[tuple[str, str]]:
    """The ``(tool, argument)`` pairs whose value the successful calls do not agree on: two or
    more values among them, so the value names the case, not the fix (module docstring)."""
    seen: dict[tuple[str, str], set[str]] = {}
    for call in calls:
        if call.ok:
            for key, value in call.args.items():
                seen.setdefault((call.tool, key), set()).add(compact_value(value))
    return frozenset(pair for pair, values in seen.items() if len(values) >= 2)


def _masked(call: ToolCall, varying: frozenset[tuple[str, str]]) -> dict[str, object]:
    return {k: _CASE if (call.tool, k) in varying else v for k, v in call.args.items()}


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 1.0


@lru_cache(maxsize=1 << 16)
def _same_action(a: frozenset[str], b: frozenset[str]) -> bool:
    flags = {w for w in a if w.startswith("-")} == {w for w in b if w.startswith("-")}
    return flags and _jaccard(a, b) >= SAME_ACTION


@dataclass(frozen=True)
class _Attempt:
    """One try within a problem's history: an episode's action, or one call it records."""

    ep: Episode
    action: str
    words: frozenset[str]
    outcome: Outcome
    call: ToolCall | None = None
    listed: bool = False  # one of several calls the episode records (``metadata["calls"]``)


def _attempts(ep: Episode) -> list[_Attempt]:
    calls = calls_of(ep)
    if not calls:
        return [_Attempt(ep, ep.action.strip(), action_words(ep.action), ep.outcome)]
    listed = isinstance(ep.metadata.get("calls"), list)
    out = []
    for call in calls:
        outcome = ep.outcome if call.ok is None else _OK[call.ok]
        words = _call_words(call.tool, call.args)
        out.append(_Attempt(ep, call.text, words, outcome, call, listed))
    return out


def _of_the_case(tries: list[_Attempt]) -> list[_Attempt]:
    """``tries`` compared without the argument values that name the case (module docstring)."""
    calls = [
        ToolCall(t.call.tool, t.call.args, t.outcome is Outcome.SUCCESS)
        for t in tries
        if t.call is not None
    ]
    varying = _varying_args(calls)
    if not varying:
        return tries
    return [t if t.call is None else _case_free(t, t.call, varying) for t in tries]


def _case_free(t: _Attempt, call: ToolCall, varying: frozenset[tuple[str, str]]) -> _Attempt:
    masked = ToolCall(call.tool, _masked(call, varying), call.ok)
    words = _call_words(call.tool, call.args, varying)
    return replace(t, words=words, call=masked, action=masked.text)


_OK = {True: Outcome.SUCCESS, False: Outcome.FAILURE}


@dataclass
class _Candidate:
    words: frozenset[str]
    action: str
    change: str = ""
    successes: list[Episode] = field(default_factory=list)
    attempts: list[Episode] = field(default_factory=list)


@dataclass
class _History:
    """What failed so far: action words, sessions, and each tool's latest failed call."""

    failed: set[frozenset[str]]
    sessions: set[str | None]
    calls: dict[str, ToolCall] = field(default_factory=dict)

    def add(self, attempt: _Attempt) -> None:
        self.failed.add(attempt.words)
        self.sessions.add(attempt.ep.session_id)
        if attempt.call is not None:
            self.calls[attempt.call.tool] = attempt.call


def current_fix(work: Sequence[Episode], error_of: Callable[[Episode], str | None]) -> Fix | None:
    """The fix this problem's history supports now, or ``None`` (module docstring)."""
    ordered = sorted(work, key=_time_order)
    tries = _of_the_case([a for ep in ordered for a in _attempts(ep)])
    first_failure = next((i for i, a in enumerate(tries) if a.outcome in FAILING), None)
    if first_failure is None:
        return None
    history = _History(set(), set())
    history.add(tries[first_failure])
    candidates: list[_Candidate] = []
    for i, now in enumerate(tries[first_failure + 1 :], first_failure + 1):
        if not now.words:
            continue
        cand = next((c for c in candidates if _same_action(c.words, now.words)), None)
        if now.outcome in FAILING:
            history.add(now)
        elif now.outcome is Outcome.SUCCESS and cand is None:
            cand = _new_candidate(tries[i - 1], now, history)
            if cand is None:
                continue
            candidates.append(cand)
        if cand is not None:
            cand.attempts.append(now.ep)
            if now.outcome is Outcome.SUCCESS:
                cand.successes.append(now.ep)
    working = [c for c in candidates if c.attempts[-1].outcome is Outcome.SUCCESS]
    if not working:
        return None
    best = max(working, key=lambda c: (c.successes[-1].created_at, len(c.successes), c.action))
    return _fix_of(best, ordered, error_of)


def _new_candidate(before: _Attempt, now: _Attempt, history: _History) -> _Candidate | None:
    """A success that may be the fix: it answers a failure and is not a retry of an action
    that failed. A tool call answers only a failed call of the same tool, and states what
    changed from it."""
    if not _answers_a_failure(before, now, history.sessions):
        return None  # a routine success of the problem, not what fixed it
    if any(_same_action(now.words, f) for f in history.failed):
        return None  # the same action that failed before: a retry, not a fix
    change = ""
    failed = history.calls.get(now.call.tool) if now.call is not None else None
    if failed is not None and now.call is not None:
        change = arg_changes(failed.args, now.call.args)
    elif now.listed:
        return None  # within a run, only a call of the tool that failed answers it
    return _Candidate(words=now.words, action=now.action, change=change)


def _answers_a_failure(before: _Attempt, now: _Attempt, sessions: set[str | None]) -> bool:
    """Whether a success answered a failure of the problem: one of its own session failed
    before it, or, for an episode with no session, the try before it failed."""
    if now.ep.session_id is None:
        return before.outcome in FAILING
    return now.ep.session_id in sessions


def _fix_of(
    cand: _Candidate, ordered: Sequence[Episode], error_of: Callable[[Episode], str | None]
) -> Fix:
    start = cand.successes[0].created_at
    before = [e for e in ordered if _failed_in(e) and e.created_at <= start]
    classes = Counter(c for e in before if (c := error_of(e)) and c != "error")
    error = min(classes, key=lambda c: (-classes[c], c)) if classes else None
    situation = _usual_situation([e.situation for e in before])
    return Fix(
        action=_fit(cand.action, 200).rstrip(" ."),
        error=error,
        situation=_fit(situation, 120).rstrip(" .:;"),
        successes=tuple({e.id: e for e in cand.successes}.values()),
        attempts=len(cand.attempts),
        since=start,
        change=cand.change,
    )


_ID = re.compile(r"\b[\w-]*\d[\w-]*\b")
"""A token with a digit: an order, a ticket, a date, a version (:func:`_usual_situation`)."""


def _usual_situation(texts: Sequence[str]) -> str:
    """The situation the failures were usually in, as a sentence of the problem, not of one
    case: the most common wording once tokens with digits are masked, each masked token given
    back where all its failures share it (a version, a port) and read ``…`` where they vary
    (an order, a ticket, a date)."""
    flat = [" ".join(t.split()) for t in texts if t.strip()]
    forms = Counter(_ID.sub(_CASE, t) for t in flat)
    if not forms:
        return ""
    form = min(forms, key=lambda f: (-forms[f], f))
    tokens = [_ID.findall(t) for t in flat if _ID.sub(_CASE, t) == form]
    kept = iter([ts[0] if len(set(ts)) == 1 else _CASE for ts in zip(*tokens, strict=True)])
    return _ID.sub(lambda _m: next(kept), form.replace(_CASE, "0"))


def _failed_in(ep: Episode) -> bool:
    """Whether the episode failed, or one call it records did."""
    return ep.outcome in FAILING or any(c.ok is False for c in calls_of(ep))
