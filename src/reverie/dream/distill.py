"""The extractive distiller: a page from a group of episodes without any model.

It runs when no LLM is configured, and its output is the baseline every other distiller must beat.
It only restates what the episodes say — outcome tallies, lessons, recurring errors, one typical
episode, what last worked — and every claim cites exactly the episodes it was taken from, so the
plan always passes :func:`reverie.dream.plan.validate_plan`.

Invariants:

* Deterministic: the same evidence gives the same plan, in any process. The work set is the new
  episodes plus the history of the page for the topic, unique by id, ordered by
  ``(created_at, seq or 0, id)``.
* Template lessons ("approach worked", "n/a", ...) carry no information and never become claims.
* Relative dates are anchored to each episode's own ``created_at`` (:mod:`reverie.dream.dates`).
* Confidence grows with the number of distinct episodes and the consistency of their outcomes;
  below ``DreamConfig.lesson_min_confidence`` a page is always a ``note``.
* A revision identical to the page as it stands is not proposed: the plan is empty.
* Linear cost in the number of episodes (centrality uses token document frequencies, lesson
  de-duplication uses prefix-filtered Jaccard), so large groups stay cheap.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache

from reverie.config import DreamConfig
from reverie.dream.cluster import content_words, error_class, salient_terms
from reverie.dream.dates import resolve_relative_dates
from reverie.dream.dialogue import conversation_plan, is_conversation
from reverie.dream.plan import CreatePage, Evidence, MergePages, Plan, RevisePage
from reverie.models import Claim, Episode, Outcome, Page, PageKind, PageStatus

__all__ = ["ExtractiveDistiller", "is_template_lesson"]

CLAIM_LIMIT = 400
TITLE_LIMIT = 200
MAX_LESSONS = 8
MAX_ERRORS = 3

_WORDS = re.compile(r"[^\W_]+")
_TEMPLATE_TEXTS = (
    "approach worked",
    "it worked",
    "worked",
    "success",
    "succeeded",
    "failed",
    "n/a",
    "na",
    "none",
    "null",
    "nothing",
    "ok",
    "done",
    "task completed",
    "no lesson",
    "no lessons",
)
_FAILING = frozenset({Outcome.FAILURE, Outcome.TIMEOUT, Outcome.PARTIAL})
_TALLY = (
    (Outcome.FAILURE, "Failed"),
    (Outcome.TIMEOUT, "Timed out"),
    (Outcome.PARTIAL, "Partially succeeded"),
    (Outcome.SUCCESS, "Succeeded"),
    (Outcome.UNKNOWN, "Ended with an unknown outcome"),
)
_RESULT = {
    Outcome.SUCCESS: "succeeded",
    Outcome.FAILURE: "failed",
    Outcome.TIMEOUT: "timed out",
    Outcome.PARTIAL: "partially succeeded",
    Outcome.UNKNOWN: "outcome unknown",
}
_ERROR_MASKS = (
    (re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.I), "<url>"),
    (re.compile(r"(?:\b[A-Za-z]:|~)?(?:[\\/][\w.@-]+){2,}[\\/]?"), "<path>"),
    (re.compile(r"\b[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}\b", re.I), "<id>"),
    (
        re.compile(r"\b0x[0-9a-f]+\b|\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{8,}\b", re.I),
        "<hex>",
    ),
    (re.compile(r"\d+(?:\.\d+)*"), "N"),
)


def _normal_words(text: str) -> str:
    """Lowercased words only: case, punctuation and spacing do not matter."""
    return " ".join(_WORDS.findall(text.lower()))


_TEMPLATES = frozenset(_normal_words(t) for t in _TEMPLATE_TEXTS)


def is_template_lesson(text: str | None) -> bool:
    """True for a lesson that says nothing ("approach worked", "N/A.", "", ...)."""
    normal = _normal_words(text or "")
    return not normal or normal in _TEMPLATES


@dataclass(frozen=True)
class _Draft:
    title: str
    kind: PageKind
    confidence: float
    claims: tuple[Claim, ...]
    valid_from: datetime


class ExtractiveDistiller:
    """Distils a group by extraction and counting; needs no model. See the module docstring."""

    name = "extractive"

    def __init__(self, config: DreamConfig | None = None) -> None:
        self.config = config or DreamConfig()

    def distill(self, evidence: Evidence) -> Plan:
        """A create (new topic) or revise (known topic) plan; empty when nothing would change."""
        if is_conversation(evidence.episodes):  # dialogue turns: dated statements per person
            return conversation_plan(evidence, self.name)
        page = _matching_page(evidence)
        sources = _duplicates(evidence, page)  # issue 5: pages holding the same lesson
        work = _work_set(evidence, page, sources)
        if not work:
            return Plan(distiller=self.name)
        draft = _draft(evidence.topic_key, work, self.config)
        if page is not None and sources:
            return Plan(operations=(_merge(page, sources, draft),), distiller=self.name)
        if page is None:
            create = CreatePage(
                topic_key=evidence.topic_key,
                title=draft.title,
                kind=draft.kind,
                confidence=draft.confidence,
                claims=draft.claims,
                valid_from=draft.valid_from,
            )
            return Plan(operations=(create,), distiller=self.name)
        if _unchanged(page, draft):
            return Plan(distiller=self.name)
        revise = RevisePage(
            page_id=page.id,
            expected_hash=page.revision.hash,
            title=draft.title,
            kind=draft.kind,
            confidence=draft.confidence,
            claims=draft.claims,
            valid_from=draft.valid_from,
        )
        return Plan(operations=(revise,), distiller=self.name)


def _matching_page(evidence: Evidence) -> Page | None:
    return next((p for p in evidence.pages if p.topic_key == evidence.topic_key), None)


def _duplicates(evidence: Evidence, page: Page | None) -> list[Page]:
    """Issue 5: other active pages shown with the topic's page hold the same lesson (the cycle
    shows them only then, :mod:`reverie.dream.dedupe`): they are merged into it."""
    if page is None or page.status is not PageStatus.ACTIVE:
        return []
    return [p for p in evidence.pages if p.id != page.id and p.status is PageStatus.ACTIVE]


def _merge(page: Page, sources: Sequence[Page], draft: _Draft) -> MergePages:
    return MergePages(
        page_id=page.id,
        expected_hash=page.revision.hash,
        sources={p.id: p.revision.hash for p in sources},
        title=draft.title,
        kind=draft.kind,
        confidence=draft.confidence,
        claims=draft.claims,
        valid_from=draft.valid_from,
    )


def _work_set(evidence: Evidence, page: Page | None, sources: Sequence[Page] = ()) -> list[Episode]:
    history = evidence.history.get(page.id, ()) if page is not None else ()
    for source in sources:  # a merge restates the evidence of every page it absorbs
        history = (*history, *evidence.history.get(source.id, ()))
    unique: dict[str, Episode] = {}
    for ep in (*history, *evidence.episodes):
        unique.setdefault(ep.id, ep)
    return sorted(unique.values(), key=lambda e: (e.created_at, e.seq or 0, e.id))


def _unchanged(page: Page, draft: _Draft) -> bool:
    current = page.revision
    return (
        current.status is PageStatus.ACTIVE
        and current.title == draft.title
        and current.kind == draft.kind
        and round(current.confidence, 3) == draft.confidence
        and current.claims == draft.claims
    )


def _draft(topic_key: str, work: Sequence[Episode], config: DreamConfig) -> _Draft:
    lessons = _lesson_claims(work)
    claims = [
        *_tally_claims(work),
        *lessons,
        *_error_claims(work),
        _representative_claim(work),
        *_worked_claim(work),
    ]
    confidence = _confidence(work)
    return _Draft(
        title=_title(topic_key, work),
        kind=_kind(confidence, bool(lessons), work, config),
        confidence=confidence,
        claims=tuple(claims),
        valid_from=work[0].created_at,
    )


# --- confidence, kind, title -------------------------------------------------------------------


def _confidence(work: Sequence[Episode]) -> float:
    """``0.95 (1 - 0.6^s) (0.5 + 0.5 consistency)``: support saturates, mixed outcomes halve.

    Support ``s`` counts each episode by its importance (importance 5 counts once, 10 twice, and
    nothing counts less than half), so one emphatic episode outweighs one routine one.
    """
    support = sum(max(0.5, (ep.importance or 5) / 5) for ep in work)
    consistency = max(Counter(ep.outcome for ep in work).values()) / len(work)
    return round(0.95 * (1 - 0.6**support) * (0.5 + 0.5 * consistency), 3)


def _kind(
    confidence: float, has_lessons: bool, work: Sequence[Episode], config: DreamConfig
) -> PageKind:
    if confidence < config.lesson_min_confidence:
        return PageKind.NOTE
    if any("prefer" in (ep.category or "").lower() for ep in work):
        return PageKind.PREFERENCE
    if has_lessons:
        return PageKind.LESSON
    if sum(ep.outcome in _FAILING for ep in work) / len(work) >= 0.5:
        return PageKind.WARNING
    if any(ep.outcome is Outcome.SUCCESS for ep in work):
        return PageKind.PROCEDURE
    return PageKind.FACT


def _title(topic_key: str, work: Sequence[Episode]) -> str:
    """``category · tools[ · terms]`` from a pattern key, plus the dominant error when failing."""
    parts = topic_key.split("|")
    if len(parts) < 2:
        return _fit(topic_key, TITLE_LIMIT) or "untitled"
    category, tools = parts[:2]
    terms = parts[2] if len(parts) > 2 else ""
    if category == "general" and tools == "-" and not terms:
        terms = "+".join(sorted(salient_terms(" ".join(ep.situation for ep in work[:200]), 2)))
    head = [category] + [p.replace("+", ", ") for p in (tools, terms) if p and p != "-"]
    failing = [ep for ep in work if ep.outcome in _FAILING]
    classes = Counter(c for ep in failing if (c := error_class(ep.error)))
    classes.pop("error", None)  # "fails with error" says nothing
    label = ""
    if any("prefer" in (ep.category or "").lower() for ep in work):
        label = ""
    elif classes and len(failing) * 2 >= len(work):
        label = f": fails with {min(classes, key=lambda c: (-classes[c], c))}"
    elif failing and len(failing) * 2 >= len(work):
        label = ": often fails"
    return _fit(" · ".join(head) + label, TITLE_LIMIT)


# --- claims ------------------------------------------------------------------------------------


def _fit(text: str, limit: int = CLAIM_LIMIT) -> str:
    """One line of at most ``limit`` characters, cut with "…" when longer."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def _day(ep: Episode) -> str:
    return ep.created_at.date().isoformat()


def _ids(eps: Iterable[Episode]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(ep.id for ep in eps))


def _times(count: int, total: int) -> str:
    return f"{count} of {total} {'time' if total == 1 else 'times'}"


def _span(eps: Sequence[Episode]) -> str:
    first, last = _day(eps[0]), _day(eps[-1])
    return f"({first})" if first == last else f"({first} to {last})"


def _tally_claims(work: Sequence[Episode]) -> list[Claim]:
    """ "Failed 4 of 6 times with TimeoutError (2026-11-02 to 2026-11-05)." and the like."""
    claims = []
    for outcome, verb in _TALLY:
        eps = [ep for ep in work if ep.outcome is outcome]
        if not eps:
            continue
        text = f"{verb} {_times(len(eps), len(work))}"
        classes = Counter(c for ep in eps if (c := error_class(ep.error)))
        if outcome is Outcome.FAILURE and classes:
            top = sorted(classes, key=lambda c: (-classes[c], c))[:2]
            text += f" with {' or '.join(top)}"
        if outcome is not Outcome.SUCCESS:
            text += f" {_span(eps)}"
        claims.append(Claim(text=_fit(text + "."), episode_ids=_ids(eps)))
    return claims


@dataclass
class _Lesson:
    text: str
    tokens: frozenset[str]
    first: int
    ids: list[str] = field(default_factory=list)


def _lesson_claims(work: Sequence[Episode]) -> list[Claim]:
    """Distinct lessons, most supported first (ties: earliest), each citing all who taught it."""
    taught = [
        (ep.id, resolve_relative_dates(ep.lesson.strip(), ep.created_at))
        for ep in work
        if ep.lesson and not is_template_lesson(ep.lesson)
    ]
    lessons = _merge_lessons(taught)
    ranked = sorted(lessons, key=lambda lesson: (-len(lesson.ids), lesson.first))
    return [Claim(text=_fit(ls.text), episode_ids=tuple(ls.ids)) for ls in ranked[:MAX_LESSONS]]


def _prefix(tokens: frozenset[str], df: Counter[str]) -> list[str]:
    """The rarest tokens any set with Jaccard ≥ 0.8 to ``tokens`` must share one of."""
    need = len(tokens) - (4 * len(tokens) + 4) // 5 + 1  # |A| - ceil(0.8 |A|) + 1
    return sorted(tokens, key=lambda t: (df[t], t))[:need]


def _merge_lessons(taught: Sequence[tuple[str, str]]) -> list[_Lesson]:
    """Merge equal (normalised) and near-equal (Jaccard ≥ 0.8) lessons, keeping the first wording.

    Candidates come from a prefix filter over tokens ordered rarest first, which is exact for a
    Jaccard threshold and keeps the work near linear.
    """
    token_sets = [frozenset(_normal_words(text).split()) for _, text in taught]
    df = Counter(t for tokens in token_sets for t in tokens)
    lessons: list[_Lesson] = []
    exact: dict[frozenset[str], int] = {}
    index: dict[str, list[int]] = defaultdict(list)
    for position, ((ep_id, text), tokens) in enumerate(zip(taught, token_sets, strict=True)):
        target = exact.get(tokens)
        if target is None:
            target = _similar(tokens, lessons, index, df)
        if target is None:
            target = len(lessons)
            lessons.append(_Lesson(text=text, tokens=tokens, first=position))
            for token in _prefix(tokens, df):
                index[token].append(target)
        exact[tokens] = target
        lessons[target].ids.append(ep_id)
    return lessons


def _similar(
    tokens: frozenset[str], lessons: list[_Lesson], index: dict[str, list[int]], df: Counter[str]
) -> int | None:
    candidates = sorted({i for t in _prefix(tokens, df) for i in index.get(t, ())})
    for i in candidates:
        other = lessons[i].tokens
        if 5 * len(tokens & other) >= 4 * len(tokens | other):  # Jaccard ≥ 0.8, exactly
            return i
    return None


@lru_cache(maxsize=4096)
def _normal_error(error: str) -> str:
    """The telling line of an error with numbers, hex, ids, paths and URLs collapsed."""
    lines = [line.strip() for line in error.strip().splitlines() if line.strip()]
    if not lines:
        return ""
    line = lines[-1] if lines[0].startswith("Traceback") else lines[0]
    for pattern, mask in _ERROR_MASKS:
        line = pattern.sub(mask, line)
    return _fit(line, 200)


def _error_claims(work: Sequence[Episode]) -> list[Claim]:
    """The most common normalised error messages, with counts (ties: first seen)."""
    seen: dict[str, list[Episode]] = {}
    for ep in work:
        if ep.error and (message := _normal_error(ep.error)):
            seen.setdefault(message, []).append(ep)
    top = sorted(seen.items(), key=lambda item: -len(item[1]))[:MAX_ERRORS]
    return [
        Claim(text=_fit(f'Error seen {_count(len(eps))}: "{message}".'), episode_ids=_ids(eps))
        for message, eps in top
    ]


def _count(n: int) -> str:
    return "once" if n == 1 else "twice" if n == 2 else f"{n} times"


def _central(work: Sequence[Episode]) -> Episode:
    """The episode sharing most words with the others (ties: earliest), in linear time.

    Score: the summed document frequency (minus itself) of the episode's content words, divided
    by ``sqrt(len(words))`` so neither very short nor very long episodes win by length alone.
    """
    if len(work) < 3:
        return work[0]
    token_sets = [frozenset(content_words(f"{ep.situation} {ep.action}")) for ep in work]
    df = Counter(t for tokens in token_sets for t in tokens)

    def score(i: int) -> float:
        tokens = token_sets[i]
        return sum(df[t] - 1 for t in tokens) / math.sqrt(len(tokens)) if tokens else 0.0

    best = max(range(len(work)), key=lambda i: (score(i), -i))
    return work[best]


def _clause(text: str | None, ep: Episode, limit: int) -> str:
    resolved = resolve_relative_dates(text or "", ep.created_at)
    return _fit(resolved, limit).rstrip(" .:;")


def _representative_claim(work: Sequence[Episode]) -> Claim:
    """ "When <situation>: <action> -> <outcome> (<date>)." for the most central episode."""
    ep = _central(work)
    situation, action = _clause(ep.situation, ep, 150), _clause(ep.action, ep, 150)
    result = _RESULT[ep.outcome]
    if details := _clause(ep.outcome_details, ep, 90):
        result += f": {details}"
    elif klass := error_class(ep.error):
        result += f" with {klass}"
    if situation:
        head = f"When {situation}: {action}" if action else f"When {situation}"
    else:
        head = action
    return Claim(text=_fit(f"{head} -> {result} ({_day(ep)})."), episode_ids=(ep.id,))


def _worked_claim(work: Sequence[Episode]) -> list[Claim]:
    """ "Worked: <action of the latest success> (<date>)." when anything succeeded."""
    successes = [ep for ep in work if ep.outcome is Outcome.SUCCESS]
    if not successes:
        return []
    ep = successes[-1]
    what = _clause(ep.action, ep, 300) or _clause(ep.situation, ep, 300)
    return [Claim(text=_fit(f"Worked: {what} ({_day(ep)})."), episode_ids=(ep.id,))]
