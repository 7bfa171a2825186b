"""What a page answers with, and when it answers: ranked by what the page says.

A problem's page answers with its lead claims (its lessons, fixes and warnings, and values);
the question reaches them two ways besides their own words:

- **Through its evidence** (:func:`lessons_behind`). An episode that matches the question is
  the situation; the page citing it may hold the lesson, worded otherwise. Only a page whose
  own words (its title and recallable claims, :func:`said`) share with the question as many
  terms as a claim found by full text must (:meth:`QueryTerms.mentions`) answers this way. Its
  lead claims are scored by how much of the question those words hold; the best evidence
  behind them adds at most :data:`EVIDENCE_SHARE`. So a paraphrase of the problem reaches its
  page, a page matching the question by its words outranks one matching it by its evidence,
  and a page whose words do not speak of the question (boilerplate that cites episodes of
  every problem) gets nothing from its evidence, however well that matches.
- **Through its matching lines** (:func:`leads_lifted`). When a line of a page matches the
  question (one failure as it happened, say), what the page teaches about that problem is the
  answer: each teaching claim of the page is worth at least that line (times its own role's
  weight), so the lesson is never ranked under its own anecdote.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from reverie.models import (
    ACTIONABLE_ROLES,
    TEACHING_ROLES,
    Claim,
    Page,
    RecallItem,
    Scope,
    recall_weight,
)
from reverie.recall.query import stems
from reverie.recall.units import PAGE_PREFERENCE, QueryTerms, claim_item, is_current, is_recallable
from reverie.store.base import History, Store

if TYPE_CHECKING:
    from reverie.recall.trace import RecallTrace

__all__ = ["EVIDENCE_SHARE", "LEAD_CLAIMS", "lead_claims", "leads_lifted", "lessons_behind", "said"]

EVIDENCE_SHARE = 0.2
"""Share of a page claim's relevance, reached through a matching episode it cites, that the
episode gives; the rest is what the claim and its page's words hold of the question."""
LEAD_CLAIMS = 2
"""Lead claims of a page reached through its evidence."""


def lead_claims(page: Page) -> list[Claim]:
    """What a page answers with: its actionable claims (lessons, fixes, warnings, facts) up to
    :data:`LEAD_CLAIMS`; none for a page of plain statements (a dialogue's), whose lines
    recall finds one by one."""
    return [c for c in page.revision.claims if c.role in ACTIONABLE_ROLES][:LEAD_CLAIMS]


def said(page: Page) -> frozenset[str]:
    """The stems of what a page says: its title and every claim recall may show."""
    words = stems(page.title)
    for claim in page.revision.claims:
        if is_recallable(claim):
            words |= stems(claim.text)
    return words


def lessons_behind(
    store: Store,
    scope: Scope,
    episodes: Sequence[RecallItem],
    have: Sequence[RecallItem],
    now: datetime,
    query: QueryTerms,
    trace: RecallTrace | None = None,
) -> tuple[list[RecallItem], dict[str, Page]]:
    """The lead claims of the pages citing the matching ``episodes`` (module docstring), but
    those already among ``have``; and the pages read."""
    if not episodes or not isinstance(store, History):
        return [], {}
    citing = store.pages_citing(scope, [u.id for u in episodes])
    best: dict[str, float] = {}
    for unit in episodes:
        for page_id in citing.get(unit.id, ()):
            best[page_id] = max(best.get(page_id, 0.0), unit.score)
    pages = store.pages_by_id(scope, best)
    shown = {(u.id, u.text) for u in have if u.kind != "episode"}
    out: list[RecallItem] = []
    for page_id, score in sorted(best.items()):
        page = pages.get(page_id)
        if page is None or not is_current(page, now):
            continue
        claims = [c for c in lead_claims(page) if (page_id, c.text) not in shown]
        out += _through_evidence(page, claims, score, query, trace)
    return out, pages


def _through_evidence(
    page: Page,
    claims: Sequence[Claim],
    evidence: float,
    query: QueryTerms,
    trace: RecallTrace | None,
) -> list[RecallItem]:
    """The units of a page's lead ``claims`` reached through a matching episode of relevance
    ``evidence``: each worth ``PAGE_PREFERENCE * role weight * ((1 - EVIDENCE_SHARE) *
    coverage + EVIDENCE_SHARE * evidence)``, its coverage the mean of what the claim with its
    title and what the whole page holds of the question; none when the page's words do not
    speak of the question."""
    words = said(page)
    page_cov = query.share(words)
    passes = query.mentions(words, query.need.of(dialogue=False))
    out = []
    for claim in claims:
        cov = (query.share(stems(page.title) | stems(claim.text)) + page_cov) / 2
        weight = recall_weight(claim.role, claim.support)
        relevance = (1 - EVIDENCE_SHARE) * cov + EVIDENCE_SHARE * min(evidence, 1.0)
        unit = claim_item(page, claim, PAGE_PREFERENCE * weight * relevance)
        if trace is not None:
            signals = {"evidence_score": evidence, "coverage": cov, "page_coverage": page_cov}
            trace.found(unit, "through evidence", role_weight=weight, **signals)
            if not passes:
                trace.cut(unit, "its page's own words do not match the question (evidence alone)")
        if passes:
            out.append(unit)
    return out


def leads_lifted(
    units: Sequence[RecallItem], pages: Mapping[str, Page], trace: RecallTrace | None = None
) -> list[RecallItem]:
    """``units`` with each teaching claim of a page that has a unit worth at least that page's
    best unit, times the claim's own role weight: raised in place where it is a unit already,
    added where it is not."""
    best: dict[str, float] = {}
    for unit in units:
        if unit.kind == "page" and unit.id in pages:
            best[unit.id] = max(best.get(unit.id, 0.0), unit.score)
    held = {(u.id, u.text): u for u in units if u.kind == "page"}
    out = list(units)
    for page_id, score in sorted(best.items()):
        page = pages[page_id]
        for claim in page.revision.claims:
            if claim.role not in TEACHING_ROLES or score <= 0:
                continue
            value = score * recall_weight(claim.role, claim.support)
            have = held.get((page_id, claim.text))
            if have is None:
                added = claim_item(page, claim, value)
                out.append(added)
                if trace is not None:
                    trace.found(added, "its page's lesson", page_best=score)
            elif have.score < value:
                have.score = value
                if trace is not None:
                    trace.signal(have, page_best=score)
    return out
