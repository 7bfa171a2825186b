"""Recall units: a page claim or an episode excerpt, scored against a question.

The lexical search (:mod:`reverie.recall.search`), the vector side (:mod:`reverie.recall.hybrid`)
and the org brain (:mod:`reverie.recall.org`) build their units with the same pieces, so a unit
scores the same whichever path found it: term coverage (idf-weighted), the relevance floor, the
preference of knowledge over evidence, and the excerpt of an episode.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import TYPE_CHECKING

from reverie.models import (
    Claim,
    ClaimRole,
    Episode,
    Outcome,
    Page,
    RecallItem,
    recall_weight,
    utc,
)
from reverie.recall.query import spoken_stems, stems
from reverie.redaction import redact
from reverie.text.assertions import asserts_fact
from reverie.text.stated import SENTENCE_BREAK as SENTENCE
from reverie.text.turns import is_conversation, is_turn

if TYPE_CHECKING:
    from reverie.recall.trace import RecallTrace

__all__ = [
    "BM25_SHARE",
    "COVERED_EPISODE",
    "EXCERPT_CHARS",
    "EXCERPT_SENTENCES",
    "PAGE_PREFERENCE",
    "QUESTION_WEIGHT",
    "SENTENCE",
    "WORK_EXCERPT_CHARS",
    "Citations",
    "QueryTerms",
    "TermNeed",
    "cited_by_claims",
    "cited_ids",
    "claim_cites",
    "claim_item",
    "claim_units",
    "coverage",
    "episode_excerpt",
    "episode_item",
    "episode_units",
    "evidence_at",
    "excerpt",
    "is_current",
    "is_recallable",
    "term_share",
]

PAGE_PREFERENCE = 1.5
"""A page claim's score is multiplied by this: distilled knowledge beats raw evidence."""
COVERED_EPISODE = 0.25
"""Weight left to an episode that a recalled page claim already cites."""
QUESTION_WEIGHT = 0.3
"""Weight left to an episode unit whose excerpt is a question: it names a topic, states nothing."""
BM25_SHARE = 0.5
"""Share of a unit's relevance taken from normalised BM25; the rest is term coverage."""
EXCERPT_SENTENCES = 2
EXCERPT_CHARS = 320
WORK_EXCERPT_CHARS = 200
"""A failed attempt's line (situation, action, error) is cut shorter than a statement: it must
leave room for the knowledge and other evidence in a small budget."""


_CITED: dict[tuple[str, int], tuple[tuple[Claim, ...], frozenset[str]]] = {}
_CITED_PAGES = 512
_CLAIM_CITES: dict[int, tuple[Claim, frozenset[str]]] = {}
_CLAIM_CITES_KEPT = 8192


def cited_ids(page: Page) -> frozenset[str]:
    """Every episode a page's current revision cites, as a set. Remembered per page revision
    while the store hands back the same decoded claims (the entry keeps them, so it can never
    answer for other claims): a big page is not re-read on every recall."""
    claims = page.revision.claims
    key = (page.id, page.revision.number)
    known = _CITED.get(key)
    if known is None or known[0] is not claims:
        if len(_CITED) >= _CITED_PAGES:
            _CITED.clear()
        known = _CITED[key] = (claims, frozenset(e for c in claims for e in c.episode_ids))
    return known[1]


def claim_cites(claim: Claim) -> frozenset[str]:
    """The episodes ``claim`` cites, as a set. A claim is immutable and the store hands back
    the same decoded claims while their revision is current, so the set is remembered per
    claim object (the entry keeps the claim, so its id never names another): a claim citing
    ten thousand episodes is asked about a few candidates without walking them all."""
    known = _CLAIM_CITES.get(id(claim))
    if known is None or known[0] is not claim:
        if len(_CLAIM_CITES) >= _CLAIM_CITES_KEPT:
            _CLAIM_CITES.clear()
        known = _CLAIM_CITES[id(claim)] = (claim, frozenset(claim.episode_ids))
    return known[1]


class Citations(list[str]):
    """A claim unit's citations (the claim's, in order) that know the claim's set of them."""

    __slots__ = ("ids",)

    def __init__(self, claim: Claim) -> None:
        super().__init__(claim.episode_ids)
        self.ids = claim_cites(claim)


def cited_by_claims(units: Iterable[RecallItem], among: set[str]) -> set[str]:
    """The episode ids in ``among`` that a page claim in ``units`` cites: looked up in each
    claim's set of citations where the unit carries it (:class:`Citations`), so a claim
    citing thousands costs no more than one citing a few."""
    cited: set[str] = set()
    for unit in units:
        if unit.kind != "episode":
            cites = unit.citations
            cited |= among & (cites.ids if isinstance(cites, Citations) else set(cites))
    return cited


def evidence_at(episode: Episode, now: datetime, history: bool) -> bool:
    """A consolidated fact assertion is answered by its fact page, which knows what is
    current, and an edit record by the page it edited; as of a past time, only evidence
    recorded by then counts."""
    if episode.records_edit:
        return False
    if episode.consolidated_in is not None and asserts_fact(episode):
        return False
    return not history or utc(episode.created_at) <= now


def coverage(wanted: Sequence[str], text: str, weights: Mapping[str, float] | None = None) -> float:
    """Share of the stemmed query terms ``wanted`` that occur in ``text`` (0 when none wanted),
    each term counted with its weight in ``weights``
    (:func:`reverie.recall.search.term_weights`; 1 each without)."""
    return term_share(wanted, stems(text), weights)


def term_share(
    wanted: Sequence[str], have: frozenset[str], weights: Mapping[str, float] | None = None
) -> float:
    terms = dict.fromkeys(wanted)
    if not terms:
        return 0.0
    if weights is None:
        return sum(1 for w in terms if w in have) / len(terms)
    total = sum(weights.get(w, 1.0) for w in terms)
    held = sum(weights.get(w, 1.0) for w in terms if w in have)
    return held / total if total > 0 else 0.0


def _passes(cov: float, floor: float) -> bool:
    return cov > 0 and cov >= floor


@dataclass(frozen=True)
class TermNeed:
    """How many of a question's terms a unit must share: ``work`` for agent work, plus ``extra``
    when the question names something the scope never saw (but for a fact, which a question
    names in its own words: "the staging Postgres" for ``staging-db``); a dialogue line needs
    one (people and places a conversation never named are asked about all the time)."""

    work: int = 2
    extra: int = 0

    def of(self, *, dialogue: bool, fact: bool = False) -> int:
        if dialogue:
            return 1
        return self.work if fact else self.work + self.extra


def _enough_terms(wanted: Sequence[str], have: frozenset[str], need: int) -> bool:
    """A question of three or more content terms must share ``need`` of them with a unit: one
    word in common ("schema", "cluster") is how a question about something never stored
    matches a brain of work, a real answer shares more. A line of dialogue is short and
    personal: there one word ("pottery") is often the answer, so dialogue asks for one."""
    terms = set(wanted)
    return len(terms) < 3 or len(terms & have) >= min(need, len(terms))


@dataclass(frozen=True)
class QueryTerms:
    """What a unit must share with the question to be recalled: the stemmed query ``terms``
    (each counted with its weight in ``weights``, 1 each without), a coverage ``floor``, and
    how many of the terms it must hold (``need``)."""

    terms: list[str]
    floor: float
    weights: Mapping[str, float] | None = None
    need: TermNeed = field(default_factory=TermNeed)

    def share(self, have: frozenset[str]) -> float:
        """The weighted share of the terms in ``have``."""
        return term_share(self.terms, have, self.weights)

    def mentions(self, have: frozenset[str], need: int) -> bool:
        """Whether the terms ``have`` hold some of the question, and ``need`` of its terms
        (:func:`_enough_terms`): a text that speaks of the question, at any coverage."""
        return not have.isdisjoint(self.terms) and _enough_terms(self.terms, have, need)

    def passes(self, cov: float, have: frozenset[str], need: int) -> bool:
        """A unit of coverage ``cov`` holding the terms ``have`` clears the floor and shares
        ``need`` of the terms (:func:`_enough_terms`)."""
        return _passes(cov, self.floor) and _enough_terms(self.terms, have, need)


def _normaliser(hits: Sequence[tuple[object, float]]) -> float:
    best = max((score for _, score in hits), default=0.0)
    return best if best > 0 else 1.0


def is_current(page: Page, now: datetime) -> bool:
    r = page.revision
    started = r.valid_from is None or utc(r.valid_from) <= now
    return started and (r.valid_until is None or utc(r.valid_until) > now)


def is_recallable(claim: Claim) -> bool:
    return claim.role is None or claim.role.recall_weight > 0


def claim_units(
    hits: Sequence[tuple[Page, float]],
    query: QueryTerms,
    now: datetime,
    *,
    trace: RecallTrace | None = None,
    path: str = "full text",
) -> list[RecallItem]:
    best = _normaliser(hits)
    units: list[RecallItem] = []
    for page, bm25 in hits:
        if not is_current(page, now):
            continue
        title = stems(page.title)
        for claim in page.revision.claims:
            weight = recall_weight(claim.role, claim.support)
            if weight <= 0:
                continue  # an evidence line: cited for lineage, never recalled
            own = stems(claim.text)
            if own.isdisjoint(query.terms):
                if trace is not None:
                    trace.unmatched_claims += 1
                continue  # the title alone does not make every claim of a page relevant
            own_cov, cov = query.share(own), query.share(title | own)
            asked = query.need.of(dialogue=claim.role is None, fact=claim.role is ClaimRole.FACT)
            passes = query.passes(cov, title | spoken_stems(claim.text), asked)
            if not passes and trace is None:
                continue
            relevance = _relevance(bm25 / best, (cov + own_cov) / 2)
            unit = claim_item(page, claim, PAGE_PREFERENCE * weight * relevance)
            if trace is not None:
                signals = {"bm25": bm25, "bm25_share": bm25 / best, "coverage": cov}
                signals |= {"claim_coverage": own_cov, "role_weight": weight}
                trace.found(unit, path, relevance=relevance, **signals)
                if not passes:
                    trace.cut(unit, _floor_reason(query, cov, asked))
                    continue
            units.append(unit)
    return units


def _floor_reason(query: QueryTerms, cov: float, need: int) -> str:
    if cov < query.floor:
        return f"below the relevance floor: holds {cov:.2f} of the question, needs {query.floor}"
    return f"shares fewer than {need} of the question's terms"


def claim_item(page: Page, claim: Claim, score: float) -> RecallItem:
    """A claim as a recall unit; :func:`~reverie.recall.pack.pack` prices it. Its citations
    are the claim's (:class:`Citations`), set after validation: they are a validated claim's
    ids already, and a claim may cite ten thousand."""
    item = RecallItem(
        kind="page",
        id=page.id,
        title=page.title,
        text=claim.text,
        score=score,
        tokens=0,
        citations=[],
        created_at=claim.last_seen or page.updated_at,
        status=str(page.status),
        page_kind=str(page.kind),
        role=str(claim.role) if claim.role is not None else None,
        support=claim.support,
    )
    item.citations = _citations(claim)
    return item


def _citations(claim: Claim) -> list[str]:
    return Citations(claim)


def episode_item(episode: Episode, text: str, score: float) -> RecallItem:
    """An episode excerpt as a recall unit, redacted; priced by pack."""
    return RecallItem(
        kind="episode",
        id=episode.id,
        title=_redacted(episode.category or "episode"),
        text=_redacted(text),  # raw evidence may hold secrets; pages were redacted when written
        score=score,
        tokens=0,
        citations=[episode.id],
        created_at=episode.created_at,
        status=str(episode.outcome),
    )


@lru_cache(maxsize=4096)
def _redacted(text: str) -> str:
    """:func:`~reverie.redaction.redact`, remembered: the episodes of a topic reach recall after
    recall, and redacting a text (a pure function of it) gives the same text every time."""
    return redact(text)


def _relevance(bm25_share: float, cov: float) -> float:
    return BM25_SHARE * min(max(bm25_share, 0.0), 1.0) + (1 - BM25_SHARE) * cov


def excerpt(text: str, wanted: Sequence[str]) -> str:
    """The sentences of ``text`` that best cover the stemmed terms ``wanted``, in text order.

    The best sentence first; a second only when it adds terms the first lacks. Where no
    sentence holds a term (an episode found by meaning alone, "I keep Tuesday free" for "when
    should I never book them?"), the opening statements of what was said
    (:func:`_opening`), not one greeting before them ("Morning!"). Cut to
    :data:`EXCERPT_CHARS` at a word boundary.
    """
    sentences = [s.strip() for s in SENTENCE.split(text) if s.strip()]
    if not sentences:
        return ""
    found = [set(wanted) & stems(s) for s in sentences]
    ranked = sorted(range(len(sentences)), key=lambda i: (-len(found[i]), _asks(sentences[i]), i))
    if not found[ranked[0]]:
        return _opening(text)
    picked, covered = [ranked[0]], set(found[ranked[0]])
    for i in ranked[1:]:
        if len(picked) == EXCERPT_SENTENCES:
            break
        if found[i] - covered:
            picked.append(i)
            covered |= found[i]
    return _cut(" ".join(sentences[i] for i in sorted(picked)))


def episode_excerpt(episode: Episode, said: str) -> str:
    """What a recall line shows of ``episode``, whose :func:`excerpt` is ``said``: the excerpt,
    and for work that did not succeed also its course: the situation, what was done and the
    error, in the episode's reading order, with whatever else the excerpt picked. A failed
    attempt is a warning only when the line says what was tried and how it failed ("Full build
    of the SDK for #1207", failed, tells the agent nothing to avoid); what worked is distilled
    into pages, and a success's line (or one of unknown outcome) stays its excerpt. Cut to
    :data:`WORK_EXCERPT_CHARS`."""
    if episode.outcome not in _FAILED or is_turn(episode):
        return said
    picked = [s.strip() for s in SENTENCE.split(said.removesuffix(" …")) if s.strip()]
    parts = [
        " ".join(_redacted(part).split())  # as written: a secret's context may span lines
        for part, shown in _course(episode)
        if part.strip() and (shown or any(s in part for s in picked))
    ]
    return _cut(" — ".join(dict.fromkeys(parts)), WORK_EXCERPT_CHARS) or said


_FAILED = frozenset({Outcome.FAILURE, Outcome.TIMEOUT})


def _course(episode: Episode) -> list[tuple[str, bool]]:
    """The fields of ``episode`` in reading order, as stored, each with whether the line of a
    failed attempt always shows it (the situation, the action and the error)."""
    return [
        (episode.situation, True),
        (episode.action, True),
        (episode.outcome_details or "", False),
        (episode.error or "", True),
        (episode.lesson or "", False),
    ]


def _opening(text: str) -> str:
    """The opening statements of ``text``'s first line (an episode's situation: what its
    speaker said, not the reply after it), questions after them, at most
    :data:`EXCERPT_SENTENCES`."""
    first = next(line for line in text.splitlines() if line.strip())
    sentences = [s.strip() for s in SENTENCE.split(first) if s.strip()]
    ranked = sorted(range(len(sentences)), key=lambda i: (_asks(sentences[i]), i))
    return _cut(" ".join(sentences[i] for i in sorted(ranked[:EXCERPT_SENTENCES])))


def _asks(text: str) -> bool:
    """A question names a topic but states nothing about it."""
    return text.rstrip(" …").endswith("?")


def _cut(text: str, limit: int = EXCERPT_CHARS) -> str:
    if len(text) <= limit:
        return text
    head = text[:limit].rsplit(" ", 1)[0].rstrip(" —")
    return head + " …"


def episode_units(
    hits: Sequence[tuple[Episode, float]],
    query: QueryTerms,
    *,
    trace: RecallTrace | None = None,
) -> list[RecallItem]:
    best = _normaliser(hits)
    units: list[RecallItem] = []
    for episode, bm25 in hits:
        text = excerpt(episode.text, query.terms)
        cov = query.share(stems(text))  # judged on what matched, not on the course shown
        asked = query.need.of(dialogue=is_conversation((episode,)))
        passes = query.passes(cov, spoken_stems(episode.text), asked)
        if not passes and trace is None:
            continue
        relevance = _relevance(bm25 / best, cov)
        if _asks(text):
            relevance *= QUESTION_WEIGHT
        unit = episode_item(episode, episode_excerpt(episode, text), relevance)
        if trace is not None:
            signals = {"bm25": bm25, "bm25_share": bm25 / best, "coverage": cov}
            signals["question_weight"] = QUESTION_WEIGHT if _asks(text) else 1.0
            trace.found(unit, "full text", relevance=relevance, **signals)
            if not passes:
                trace.cut(unit, _floor_reason(query, cov, asked))
                continue
        units.append(unit)
    return units
