"""When a model distiller is worth calling: bounded calls per episode, nothing paid twice.

A model is called for one problem at a time (the cycle's groups are problems, each with its
page). It is first called once the problem has recurred (``DreamConfig.model_min_support``
episodes, 4; until then the extractive distiller writes its page), and again only once the
page's evidence has grown by ``DreamConfig.model_refresh_growth`` (3.0: at 4, 12, 36, …
episodes), so a problem met *n* times costs about ``log3(n / 4) + 1`` calls. In between, new
episodes *reinforce* the page without a call: its claims stay as the model wrote them, the new
episodes are cited by the page's evidence line and added to its tallies. A merge (one lesson,
or one problem, on several pages) follows the same rule over the pages' summed evidence; when
no call is due, the home page *absorbs* the others: its claims as the model wrote them, then
the actionable claims of the pages it absorbs that it lacks, one evidence line for the rest.
The response cache (:mod:`reverie.llm.cache`) covers the rest: a re-run after a crash or an
undo pays nothing.

Pure functions of the evidence; the cycle applies them (:mod:`reverie.dream.cycle`).
"""

from __future__ import annotations

from reverie.dream.distill import MAX_CLAIMS, evidence_line, page_support
from reverie.dream.pins import claim_key
from reverie.models import ACTIONABLE_ROLES, Claim, ClaimRole, Page, PageStatus, PageSupport
from reverie.models.plan import CreatePage, Evidence, MergePages, Plan, RevisePage

__all__ = ["absorb", "model_due", "reinforce", "with_support"]


def _page(evidence: Evidence) -> Page | None:
    return next((p for p in evidence.pages if p.topic_key == evidence.topic_key), None)


def model_due(evidence: Evidence, growth: float | None, min_support: int = 1) -> bool:
    """Whether this group is worth a model call (module docstring). ``growth=None``: always."""
    page = _page(evidence)
    if growth is None:
        return True
    grown = page_support(evidence).episodes  # a merge: every page's evidence together
    if grown < min_support:
        return False  # too little evidence yet: written extractively until it recurs
    support = page.revision.support if page is not None else None
    if support is None or support.distilled_at is None:
        return True  # never written by a model
    return grown >= growth * max(support.distilled_at, 1)


def reinforce(evidence: Evidence, name: str) -> Plan:
    """The page as it stands, its evidence line citing the new episodes, its tallies grown.

    A page that is not active (its creating cycle undone, its evidence released) is revised
    back to active even when it already cites every episode: the re-run writes what the cycle
    it takes back wrote, and leaves no consolidated episode cited by a retired page only.
    """
    page = _page(evidence)
    assert page is not None, "reinforce needs the group's page"
    cited = set(page.citations)
    new = [e.id for e in evidence.episodes if e.id not in cited]
    if not new and page.status is PageStatus.ACTIVE:
        return Plan(distiller=name)
    rev = page.revision
    revise = RevisePage(
        page_id=page.id,
        expected_hash=rev.hash,
        title=rev.title,
        kind=rev.kind,
        confidence=rev.confidence,
        claims=_with_evidence(rev.claims, new),
        valid_from=rev.valid_from,
        support=page_support(evidence),
        pins=rev.pins,
    )
    return Plan(operations=(revise,), distiller=name)


def absorb(evidence: Evidence, name: str) -> Plan:
    """A merge without a call (module docstring): every page's citations stay on the home."""
    page = _page(evidence)
    assert page is not None, "absorb needs the group's page"
    sources = [p for p in evidence.pages if p.id != page.id and p.status is PageStatus.ACTIVE]
    claims = [c for c in page.revision.claims if c.role is not ClaimRole.EVIDENCE]
    seen = {claim_key(c.text) for c in claims}
    for claim in (c for s in sources for c in s.revision.claims if c.role in ACTIONABLE_ROLES):
        if len(claims) < MAX_CLAIMS - 1 and claim_key(claim.text) not in seen:
            claims.append(claim)
            seen.add(claim_key(claim.text))
    cited = {e for c in claims for e in c.episode_ids}
    everything = [*page.citations, *(e for s in sources for e in s.citations)]
    every = dict.fromkeys([*everything, *(e.id for e in evidence.episodes)])
    rest = [e for e in every if e not in cited]
    known = [*evidence.episodes, *(e for eps in evidence.history.values() for e in eps)]
    rev = page.revision
    merge = MergePages(
        page_id=page.id,
        expected_hash=rev.hash,
        sources={s.id: s.revision.hash for s in sources},
        title=rev.title,
        kind=rev.kind,
        confidence=rev.confidence,
        claims=(*claims, evidence_line(rest, known)) if rest else tuple(claims),
        valid_from=rev.valid_from,
        support=page_support(evidence),
        pins=rev.pins,
    )
    return Plan(operations=(merge,), distiller=name)


def _with_evidence(claims: tuple[Claim, ...], new: list[str]) -> tuple[Claim, ...]:
    if not new:
        return claims
    for i, claim in enumerate(claims):
        if claim.role is ClaimRole.EVIDENCE:
            grown = evidence_line(tuple(dict.fromkeys([*claim.episode_ids, *new])))
            return (*claims[:i], grown, *claims[i + 1 :])
    return (*claims, evidence_line(new))


def with_support(plan: Plan, evidence: Evidence) -> Plan:
    """A model's plan with the tallies its page will have and the support it was written at."""
    support = page_support(evidence)
    stamped = PageSupport(**{**support.model_dump(), "distilled_at": support.episodes})
    ops = tuple(
        op.model_copy(update={"support": stamped})
        if isinstance(op, CreatePage | RevisePage | MergePages)
        and (not isinstance(op, CreatePage) or op.topic_key == evidence.topic_key)
        and (isinstance(op, CreatePage) or op.page_id == getattr(_page(evidence), "id", None))
        else op
        for op in plan.operations
    )
    return plan.model_copy(update={"operations": ops})
