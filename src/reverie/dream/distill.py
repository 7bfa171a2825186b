"""The extractive distiller: a page from one problem's episodes without any model.

It runs when no LLM is configured, and its output is the baseline every other distiller must beat.
It only restates what the episodes say, and every claim cites exactly the episodes it was taken
from, so the plan always passes :func:`reverie.models.plan.validate_plan`. A page holds, in this
order (:mod:`reverie.dream.lessons`):

* for runs of one kind of request (task episodes), the **procedure** the successful runs
  followed and **warnings** of what failing runs did (:mod:`reverie.dream.tasks`), first;
* the problem's **lessons**, each synthesised across its paraphrases and worded by its most
  central variant, and the **fix** its history shows (failure, then a different action that
  worked) — the actionable claims, most supported first;
* one **anecdote**: the failure as it happened, its error line verbatim (numbers that matter,
  such as status codes, ports and versions, are kept);
* an **also seen** line folding the weakest lessons beyond :data:`MAX_CLAIMS`.

Tallies (episodes, successes, failures, error classes, first and last seen) are page metadata
(:class:`~reverie.models.PageSupport`), never claims: they do not spend the recall budget. They
accumulate: a revision adds the new episodes to the support of the page as it stands.

Invariants:

* Deterministic: the same evidence gives the same plan, in any process. The work set is the new
  episodes plus the history of the page, unique by id, ordered by ``(created_at, seq or 0, id)``;
  a person's edits (:func:`reverie.dream.pins.is_human_edit`) are not outcomes and are left
  out of it.
* Template lessons ("approach worked", "n/a", ...) never become claims.
* The title is the canonical lesson or problem, as a person would write it, never a topic key.
* Confidence grows with the number of distinct episodes and the consistency of their outcomes;
  below ``DreamConfig.lesson_min_confidence`` a page is always a ``note``.
* A revision identical to the page as it stands is not proposed: the plan is empty.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import TYPE_CHECKING

from reverie.config import DreamConfig
from reverie.dream.boilerplate import is_template_lesson
from reverie.dream.cluster import content_words, error_class, telling_line
from reverie.dream.dates import resolve_relative_dates
from reverie.dream.dialogue import conversation_plan
from reverie.dream.lessons import (
    FAILING,
    Fix,
    current_fix,
    current_values,
    synthesize_lessons,
)
from reverie.dream.pins import is_human_edit
from reverie.dream.tasks import task_claims, task_title
from reverie.models import (
    Claim,
    ClaimRole,
    Episode,
    Outcome,
    Page,
    PageKind,
    PageStatus,
    PageSupport,
)
from reverie.models.plan import CreatePage, Evidence, MergePages, Plan, RevisePage
from reverie.text.calls import parse_call
from reverie.text.turns import is_conversation, is_run_part

if TYPE_CHECKING:
    from reverie.embed import Embedder

__all__ = ["ExtractiveDistiller", "evidence_line", "is_template_lesson", "page_support", "tally"]

CLAIM_LIMIT = 400
TITLE_LIMIT = 120
MAX_CLAIMS = 12
"""A page's claims at most; lessons beyond it are folded into one "also seen" line."""
ALSO_SEEN = 4
"""Lessons folded into the "also seen" line at most (the rest stay cited by it)."""


@dataclass(frozen=True)
class _Draft:
    title: str
    kind: PageKind
    confidence: float
    claims: tuple[Claim, ...]
    valid_from: datetime
    support: PageSupport


class ExtractiveDistiller:
    """Distils a group by extraction and counting; needs no model. See the module docstring.

    With an ``embedder``, lesson paraphrases are also recognised by meaning.
    """

    name = "extractive"

    def __init__(self, config: DreamConfig | None = None, embedder: Embedder | None = None) -> None:
        self.config = config or DreamConfig()
        self.embedder = embedder

    def distill(self, evidence: Evidence) -> Plan:
        """A create (new topic) or revise (known topic) plan; empty when nothing would change."""
        if is_conversation(evidence.episodes):  # dialogue turns: dated statements per person
            return conversation_plan(evidence, self.name)
        page = _matching_page(evidence)
        sources = _duplicates(evidence, page)  # pages holding the same lesson
        work = _work_set(evidence, page, sources)
        if not work:
            return Plan(distiller=self.name)
        if evidence.split and page is not None and not sources:
            return Plan(operations=self._split(evidence, page, work), distiller=self.name)
        support = _support(evidence, page, sources, work)
        earlier = _machine_citations(page, *sources)
        draft = _draft(work, support, self.config, self.embedder, earlier)
        if page is not None and sources:
            return Plan(operations=(_merge(page, sources, draft),), distiller=self.name)
        if page is None:
            return Plan(operations=(_create(evidence.topic_key, draft),), distiller=self.name)
        if _unchanged(page, draft):
            return Plan(distiller=self.name)
        revise = RevisePage(
            page_id=page.id,
            expected_hash=page.revision.hash,
            **_fields(draft),
        )
        return Plan(operations=(revise,), distiller=self.name)

    def _split(
        self, evidence: Evidence, page: Page, work: Sequence[Episode]
    ) -> tuple[RevisePage | CreatePage, ...]:
        """The page rewritten without the problems it gives up, and a new page for each
        (:mod:`reverie.dream.split`); every citation stays on one of them."""
        moved = {e for part in evidence.split for e in part.episode_ids}
        gone = tally(ep for ep in work if ep.id in moved)
        support = _without(_support(evidence, page, (), work), gone)
        earlier = [e for e in _machine_citations(page) if e not in moved]
        kept = [ep for ep in work if ep.id not in moved]
        draft = _draft(kept, support, self.config, self.embedder, earlier)
        ops: list[RevisePage | CreatePage] = [
            RevisePage(page_id=page.id, expected_hash=page.revision.hash, **_fields(draft))
        ]
        for part in evidence.split:
            wanted = set(part.episode_ids)
            own = [ep for ep in work if ep.id in wanted]
            ops.append(_create(part.topic_key, _draft(own, tally(own), self.config, self.embedder)))
        return tuple(ops)


def _fields(draft: _Draft) -> dict[str, object]:
    return {
        "title": draft.title,
        "kind": draft.kind,
        "confidence": draft.confidence,
        "claims": draft.claims,
        "valid_from": draft.valid_from,
        "support": draft.support,
    }


def _create(topic_key: str, draft: _Draft) -> CreatePage:
    return CreatePage(topic_key=topic_key, **_fields(draft))


def _matching_page(evidence: Evidence) -> Page | None:
    return next((p for p in evidence.pages if p.topic_key == evidence.topic_key), None)


def _duplicates(evidence: Evidence, page: Page | None) -> list[Page]:
    """Other active pages shown with the topic's page hold the same lesson (the cycle shows
    them only then, :mod:`reverie.dream.dedupe`): they are merged into it."""
    if page is None or page.status is not PageStatus.ACTIVE:
        return []
    return [p for p in evidence.pages if p.id != page.id and p.status is PageStatus.ACTIVE]


def _merge(page: Page, sources: Sequence[Page], draft: _Draft) -> MergePages:
    return MergePages(
        page_id=page.id,
        expected_hash=page.revision.hash,
        sources={p.id: p.revision.hash for p in sources},
        **_fields(draft),
    )


def _work_set(evidence: Evidence, page: Page | None, sources: Sequence[Page] = ()) -> list[Episode]:
    history = evidence.history.get(page.id, ()) if page is not None else ()
    for source in sources:  # a merge restates the evidence of every page it absorbs
        history = (*history, *evidence.history.get(source.id, ()))
    unique: dict[str, Episode] = {}
    for ep in (*history, *evidence.episodes):
        if not is_human_edit(ep):
            unique.setdefault(ep.id, ep)
    return sorted(unique.values(), key=lambda e: (e.created_at, e.seq or 0, e.id))


def _machine_citations(*pages: Page | None) -> list[str]:
    """What the pages cite outside a person's pinned claims: those keep their own citations
    (:func:`reverie.dream.pins.keep_pins`), the episode recording a person's edit among them,
    which is no observation for the evidence line to count."""
    return [e for p in pages if p is not None for c in p.revision.claims if not c.pinned
            for e in c.episode_ids]  # fmt: skip


def _unchanged(page: Page, draft: _Draft) -> bool:
    current = page.revision
    return (
        current.status is PageStatus.ACTIVE
        and current.title == draft.title
        and current.kind == draft.kind
        and round(current.confidence, 3) == draft.confidence
        and current.claims == draft.claims
        and current.support == draft.support
    )


# --- tallies -----------------------------------------------------------------------------------


def tally(episodes: Iterable[Episode]) -> PageSupport:
    """The support of ``episodes`` alone."""
    eps = [ep for ep in episodes if not is_human_edit(ep)]
    return PageSupport(
        episodes=len(eps),
        successes=sum(ep.outcome is Outcome.SUCCESS for ep in eps),
        failures=sum(ep.outcome in FAILING for ep in eps),
        error_classes=_error_classes(eps),
        first_seen=min((ep.created_at for ep in eps), default=None),
        last_seen=max((ep.created_at for ep in eps), default=None),
    )


def _error_classes(eps: Iterable[Episode]) -> dict[str, int]:
    """How often each named error class failed ``eps`` (the unnamed ``"error"`` left out)."""
    classes = Counter(c for ep in eps if ep.outcome in FAILING and (c := error_class(ep.error)))
    classes.pop("error", None)
    return dict(classes)


def _add(a: PageSupport, b: PageSupport) -> PageSupport:
    """Two tallies summed; ``distilled_at`` is the first one's (the page as it stands)."""
    classes = Counter(a.error_classes)
    classes.update(b.error_classes)
    firsts = [t for t in (a.first_seen, b.first_seen) if t is not None]
    lasts = [t for t in (a.last_seen, b.last_seen) if t is not None]
    return PageSupport(
        episodes=a.episodes + b.episodes,
        successes=a.successes + b.successes,
        failures=a.failures + b.failures,
        error_classes=dict(classes),
        first_seen=min(firsts, default=None),
        last_seen=max(lasts, default=None),
        distilled_at=a.distilled_at,
        superseded={**b.superseded, **a.superseded},
    )


def _without(total: PageSupport, gone: PageSupport) -> PageSupport:
    """A tally less the part of it that moved to another page. First and last seen stay (the
    page's evidence spanned them); ``distilled_at`` goes, as the page is rewritten without a
    model."""
    classes = Counter(total.error_classes)
    classes.subtract(gone.error_classes)
    return total.model_copy(
        update={
            "episodes": max(total.episodes - gone.episodes, 0),
            "successes": max(total.successes - gone.successes, 0),
            "failures": max(total.failures - gone.failures, 0),
            "error_classes": {k: n for k, n in classes.items() if n > 0},
            "distilled_at": None,
        }
    )


def page_support(evidence: Evidence) -> PageSupport:
    """The support of the page ``evidence`` feeds once its new episodes are added."""
    page = _matching_page(evidence)
    sources = _duplicates(evidence, page)
    return _support(evidence, page, sources, _work_set(evidence, page, sources))


def _support(
    evidence: Evidence, page: Page | None, sources: Sequence[Page], work: Sequence[Episode]
) -> PageSupport:
    """Tallies accumulate: the support of the page(s) as they stand plus the new episodes. A
    page written before tallies existed is tallied from its work set."""
    shown = [p for p in (page, *sources) if p is not None]
    if not shown or any(p.revision.support is None for p in shown):
        return tally(work)
    supports = [p.revision.support for p in shown if p.revision.support is not None]
    total = supports[0]
    for more in supports[1:]:
        total = _add(total, more)
    cited = {e for p in shown for e in p.citations}
    return _add(total, tally(ep for ep in evidence.episodes if ep.id not in cited))


# --- the draft ---------------------------------------------------------------------------------


def _draft(
    work: Sequence[Episode],
    support: PageSupport,
    config: DreamConfig,
    embedder: Embedder | None,
    earlier: Sequence[str] = (),
) -> _Draft:
    currency = current_values(synthesize_lessons(work, embedder=embedder, config=config))
    lessons = currency.current
    if currency.superseded:
        gone = {**support.superseded, **currency.superseded}
        support = support.model_copy(update={"superseded": gone})
    # a run's turns repeat its task episode's calls; their replies are no actions
    fix = current_fix([ep for ep in work if not is_run_part(ep)], lambda ep: error_class(ep.error))
    actionable = [g.claim(CLAIM_LIMIT) for g in lessons]
    if fix is not None:
        actionable.append(fix.claim(CLAIM_LIMIT))
    actionable.sort(key=lambda c: (-(c.support or 0), c.first_seen or work[0].created_at, c.text))
    actionable[:0] = task_claims(work)  # runs compared: what succeeded, what failed
    anecdote = _anecdote(work)
    room = MAX_CLAIMS - (1 if anecdote else 0)
    claims = _fold(actionable, room)
    if anecdote is not None:
        claims.append(anecdote)
    if not claims:
        claims = [_example(work)]
    if rest := _evidence_claim(claims, work, earlier):
        claims.append(rest)
    confidence = _confidence(work)
    return _Draft(
        title=task_title(work, TITLE_LIMIT) or _title(claims, work, fix),
        kind=_kind(confidence, claims, work, config),
        confidence=confidence,
        claims=tuple(claims),
        valid_from=work[0].created_at,
        support=support,
    )


def _evidence_claim(
    claims: Sequence[Claim], work: Sequence[Episode], earlier: Sequence[str]
) -> Claim | None:
    """Every episode of the page that no other claim cites — routine runs of the problem, older
    evidence beyond the history shown — cited by one line recall never packs, so a page never
    loses a citation and every consolidated episode stays reachable from ``why``."""
    cited = {e for c in claims for e in c.episode_ids}
    ids = [e for e in dict.fromkeys([*earlier, *(ep.id for ep in work)]) if e not in cited]
    if not ids:
        return None
    wanted = set(ids)
    return evidence_line(ids, [ep for ep in work if ep.id in wanted])


def evidence_line(ids: Sequence[str], known: Sequence[Episode] = ()) -> Claim:
    """The claim citing a page's other evidence: "Also observed in N other episodes (k
    succeeded).", the count of successes among ``known``, those of ``ids`` at hand."""
    text = f"Also observed in {len(ids)} other episode{'s' if len(ids) != 1 else ''}"
    ok = sum(ep.outcome is Outcome.SUCCESS for ep in known)
    text += f" ({ok} succeeded)." if known else "."
    return Claim(text=text, episode_ids=tuple(ids), role=ClaimRole.EVIDENCE, support=len(ids))


def _fold(actionable: Sequence[Claim], room: int) -> list[Claim]:
    """The first ``room`` claims; when more, the last slot is one cited "also seen" line."""
    if len(actionable) <= room:
        return list(actionable)
    kept, rest = list(actionable[: room - 1]), actionable[room - 1 :]
    shown = "; ".join(c.text.rstrip(" .") for c in rest[:ALSO_SEEN])
    more = f" (+{len(rest) - ALSO_SEEN} more)" if len(rest) > ALSO_SEEN else ""
    ids = tuple(dict.fromkeys(e for c in rest for e in c.episode_ids))
    also = Claim(
        text=_fit(f"Also seen: {shown}{more}."),
        episode_ids=ids,
        role=ClaimRole.ALSO,
        support=sum(c.support or 0 for c in rest),
    )
    return [*kept, also]


def _confidence(work: Sequence[Episode]) -> float:
    """``0.95 (1 - 0.6^s) (0.5 + 0.5 consistency)``: support saturates, mixed outcomes halve.

    Support ``s`` counts each episode by its importance (importance 5 counts once, 10 twice, and
    nothing counts less than half), so one emphatic episode outweighs one routine one.
    """
    support = sum(max(0.5, (ep.importance or 5) / 5) for ep in work)
    consistency = max(Counter(ep.outcome for ep in work).values()) / len(work)
    return round(0.95 * (1 - 0.6**support) * (0.5 + 0.5 * consistency), 3)


_KIND_OF_ROLE = {
    ClaimRole.LESSON: PageKind.LESSON,
    ClaimRole.WARNING: PageKind.WARNING,
    ClaimRole.FIX: PageKind.PROCEDURE,
    ClaimRole.PROCEDURE: PageKind.PROCEDURE,
    ClaimRole.FACT: PageKind.FACT,
}


def _kind(
    confidence: float, claims: Sequence[Claim], work: Sequence[Episode], config: DreamConfig
) -> PageKind:
    """The kind follows the content: the lead claim's role, a preference when it says so."""
    if confidence < config.lesson_min_confidence:
        return PageKind.NOTE
    if any("prefer" in (ep.category or "").lower() for ep in work):
        return PageKind.PREFERENCE
    lead = claims[0]
    if lead.role is ClaimRole.LESSON and "prefer" in lead.text.lower():
        return PageKind.PREFERENCE
    if lead.role in _KIND_OF_ROLE:
        return _KIND_OF_ROLE[lead.role]
    if sum(ep.outcome in FAILING for ep in work) * 2 >= len(work):
        return PageKind.WARNING
    return PageKind.NOTE


def _title(claims: Sequence[Claim], work: Sequence[Episode], fix: Fix | None = None) -> str:
    """The canonical lesson or problem, as a person would write it: the lead claim's first
    sentence (a fix reads "<situation>: <action>")."""
    lead = claims[0]
    if lead.role is ClaimRole.FIX and fix is not None:
        return _fit(_fix_title(fix), TITLE_LIMIT) or "untitled"
    if lead.role in (ClaimRole.LESSON, ClaimRole.WARNING):
        return _fit(_first_sentence(lead.text), TITLE_LIMIT)
    situation = _fit(_central(work).situation, TITLE_LIMIT - 30).rstrip(" .:;")
    classes = _error_classes(ep for ep in work if not is_human_edit(ep))
    if classes and situation:
        top = min(classes, key=lambda c: (-classes[c], c))
        return _fit(f"{situation}: fails with {top}", TITLE_LIMIT)
    return situation or _fit(lead.text, TITLE_LIMIT)


def _fix_title(fix: Fix) -> str:
    """A fix names its problem and what worked: for a call whose arguments changed, the tool,
    how it failed and the change ("search fails with HTTP 429: max_qps: 2 added"), not the
    case it was first met in; otherwise "<situation>: <action>"."""
    call = parse_call(fix.action) if fix.change else None
    if call is not None:
        fails = f" fails with {fix.error}" if fix.error else ""
        return f"{call[0]}{fails}: {fix.change}"
    return f"{fix.situation}: {fix.action}" if fix.situation else fix.action


def _first_sentence(text: str) -> str:
    for end in (". ", "; ", "! ", "? "):
        head, sep, _ = text.partition(end)
        if sep and len(head) >= 20:
            return head.rstrip(" .")
    return text.rstrip(" .")


# --- anecdote and example ----------------------------------------------------------------------


def _fit(text: str, limit: int = CLAIM_LIMIT) -> str:
    """One line of at most ``limit`` characters, cut with "…" when longer."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def _day(ep: Episode) -> str:
    return ep.created_at.date().isoformat()


def _anecdote(work: Sequence[Episode]) -> Claim | None:
    """The newest failure of the most common error class, as it happened (error verbatim)."""
    failing = [ep for ep in work if ep.outcome in FAILING and ep.error and telling_line(ep.error)]
    if not failing:
        return None
    classes = Counter(error_class(ep.error) for ep in failing)
    top = min(classes, key=lambda c: (-classes[c], c or ""))
    same = [ep for ep in failing if error_class(ep.error) == top]
    ep = same[-1]
    situation = _clause(ep.situation, ep, 150)
    action = _clause(ep.action, ep, 120)
    head = f"{situation}: {action}" if situation and action else situation or action
    times = f"{len(same)} times, last {_day(ep)}" if len(same) > 1 else _day(ep)
    text = f'{head} -> failed with "{_fit(telling_line(ep.error), 160)}" ({times}).'
    return Claim(
        text=_fit(text),
        episode_ids=tuple(dict.fromkeys(e.id for e in same)),
        role=ClaimRole.ANECDOTE,
        support=len(same),
        first_seen=same[0].created_at,
        last_seen=ep.created_at,
    )


def _central(work: Sequence[Episode]) -> Episode:
    """The episode sharing most words with the others (ties: earliest), in linear time.

    Score: the summed document frequency (minus itself) of the episode's content words, divided
    by ``sqrt(len(words))`` so neither very short nor very long episodes win by length alone.
    """
    if len(work) < 3:
        return work[0]
    token_sets = [_word_set(f"{ep.situation} {ep.action}") for ep in work]
    df = Counter(t for tokens in token_sets for t in tokens)

    def score(i: int) -> float:
        tokens = token_sets[i]
        return sum(df[t] - 1 for t in tokens) / math.sqrt(len(tokens)) if tokens else 0.0

    best = max(range(len(work)), key=lambda i: (score(i), -i))
    return work[best]


@lru_cache(maxsize=1 << 14)
def _word_set(text: str) -> frozenset[str]:
    return frozenset(content_words(text))


def _clause(text: str | None, ep: Episode, limit: int) -> str:
    resolved = resolve_relative_dates(text or "", ep.created_at)
    return _fit(resolved, limit).rstrip(" .:;")


_RESULT = {
    Outcome.SUCCESS: "succeeded",
    Outcome.FAILURE: "failed",
    Outcome.TIMEOUT: "timed out",
    Outcome.PARTIAL: "partially succeeded",
    Outcome.UNKNOWN: "outcome unknown",
}


def _example(work: Sequence[Episode]) -> Claim:
    """ "<situation>: <action> -> <outcome> (<date>)." for the most central episode: a page
    with no lesson, fix or failure (important or recurring work) says what was done."""
    ep = _central(work)
    situation, action = _clause(ep.situation, ep, 150), _clause(ep.action, ep, 150)
    result = _RESULT[ep.outcome]
    if details := _clause(ep.outcome_details, ep, 120):
        result += f": {details}"
    head = f"{situation}: {action}" if situation and action else situation or action
    return Claim(
        text=_fit(f"{head} -> {result} ({_day(ep)})."),
        episode_ids=(ep.id,),
        role=ClaimRole.ANECDOTE,
        support=1,
        first_seen=ep.created_at,
        last_seen=ep.created_at,
    )
