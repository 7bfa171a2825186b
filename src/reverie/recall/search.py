"""Recall: find what a brain knows about a question and pack it into a prompt section.

Why it is shaped this way:

- **Units, not documents.** A page is split into its claims and an episode into its best
  sentences, so the budget buys the one line that answers the question rather than a whole page
  that mentions it. Every claim unit carries its page's title as context and its own citations.
- **A relevance floor, weighted by rarity.** BM25 ranks whatever matches at least one term, so
  on its own it always returns *something*. Each unit must also hold a share of the query's
  content terms of at least ``RecallConfig.min_term_coverage``, each term weighted by its idf
  over the candidate units (:func:`term_weights`; an episode a candidate claim cites counts
  through that claim, not again on its own): a term most candidates hold (the name on every
  line of a chat, "deploy" in a deployment brain) weighs little, a term none holds weighs most.
  So a question about something never stored gets an empty section, a lone common match is not
  enough, and a lone rare match ("adoption", "kubectl") is.
- **Knowledge before evidence.** At equal relevance a page claim outranks an episode by
  :data:`PAGE_PREFERENCE`; an episode cited by a claim that passed the floor is covered and
  weighs only :data:`COVERED_EPISODE` as much. Only active pages valid at ``now`` are searched.
- **Never breaks the agent** (DESIGN invariant 8). Any failure inside recall, a store error
  first of all, yields an empty :class:`~reverie.models.Recall` whose ``warning`` says why, and a
  warning on the ``reverie.recall`` logger; no exception reaches the agent's turn.

Score of a unit, in (0, PAGE_PREFERENCE]: ``BM25_SHARE * bm25 / best_bm25 + (1 - BM25_SHARE) *
coverage`` (coverage idf-weighted as above), where BM25 is normalised within its own result set
(pages and episodes are scored by different indexes) and a claim's coverage averages its own with
that of title plus claim. A claim must contain a query term itself: a matching title does not
make every line of its page relevant. An episode whose excerpt is a question weighs
:data:`QUESTION_WEIGHT`: it names the topic, its answer is elsewhere.

How one unit is built and scored is shared with the vector side and the org brain, in
:mod:`reverie.recall.units`.
"""

from __future__ import annotations

import logging
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING

from reverie.config import RecallConfig
from reverie.models import (
    Episode,
    Page,
    Recall,
    RecallItem,
    Scope,
    utc,
)
from reverie.recall.answers import (
    Replaced,
    current_statements,
    leads_lifted,
    lessons_behind,
    newest_values,
    replaced_values,
    values_behind,
)
from reverie.recall.hybrid import HybridQuery, fuse, unit_cosines
from reverie.recall.org import org_units
from reverie.recall.outdated import announced_changes, outdated_cut
from reverie.recall.pack import pack
from reverie.recall.passing import kin_of
from reverie.recall.query import owner_words, query_terms, stem, stems, unnamed
from reverie.recall.render import header_tokens, numbered, render
from reverie.recall.tokens import count_tokens
from reverie.recall.units import (
    BM25_SHARE,
    COVERED_EPISODE,
    PAGE_PREFERENCE,
    QUESTION_WEIGHT,
    SENTENCE,
    QueryTerms,
    TermNeed,
    cited_by_claims,
    cited_ids,
    claim_cites,
    claim_units,
    coverage,
    episode_units,
    evidence_at,
    excerpt,
    is_current,
    is_recallable,
)
from reverie.redaction import Redactor
from reverie.store.base import BrainStore, Store
from reverie.text.turns import is_conversation

if TYPE_CHECKING:
    from reverie.recall.trace import RecallTrace
    from reverie.recall.vectors import VectorSearch

__all__ = [
    "BM25_SHARE",
    "COVERED_EPISODE",
    "PAGE_PREFERENCE",
    "QUESTION_WEIGHT",
    "cited_by_claims",
    "coverage",
    "excerpt",
    "newest_values",
    "recall",
    "replaced_values",
    "term_weights",
]

log = logging.getLogger("reverie.recall")


def recall(  # noqa: PLR0913 (public API: recall's keyword-only options)
    store: BrainStore,
    query: str,
    scope: Scope,
    budget_tokens: int,
    *,
    config: RecallConfig,
    now: datetime,
    as_of: datetime | None = None,
    vectors: VectorSearch | None = None,
    redactor: Redactor | None = None,
    trace: RecallTrace | None = None,
) -> Recall:
    """The prompt section ``store`` holds for ``query`` in ``scope``, within ``budget_tokens``.

    With ``as_of``, the brain as it stood then: pages (active or superseded) whose validity
    interval contains ``as_of``, and only evidence recorded by then (docs/memory.md).

    With ``vectors`` (an embedder and its per-scope indexes), lexical units are fused with
    vector hits (:mod:`reverie.recall.hybrid`); without, the lexical path runs alone.

    With a ``redactor`` whose policy redacts personal data, every unit is redacted by it before
    packing (episode excerpts are always redacted of secrets; pages were when written).

    With a ``trace`` (:mod:`reverie.recall.trace`), every stage writes down why each unit was
    packed or cut.

    Never raises on a store failure: the result is then empty and carries a ``warning``.
    """
    if trace is not None:
        trace.budget_tokens, trace.vectors = budget_tokens, vectors is not None
        trace.floor = config.min_term_coverage
    try:
        owner = owner_words(scope.user)
        terms = _about_owner(query_terms(query), owner)
        if not terms or budget_tokens <= 0:
            if trace is not None:
                trace.notes.append(_why_empty(terms, budget_tokens))
            return _empty(query, scope, budget_tokens)
        when = utc(as_of) if as_of is not None else utc(now)
        meant = unnamed(query, owner)  # what the embedder reads (reverie.recall.query)
        if vectors is not None:  # embedded on a worker thread while the full-text side runs
            vectors.prefetch(meant)
        stranger = config.unknown_names and _names_unknown(store, scope, query, config, owner)
        if stranger and trace is not None:
            trace.notes.append(
                "the question names something this brain never mentions: every unit must"
                " share one term more with it"
            )
        units, read = _units(
            store,
            scope,
            terms,
            config,
            when,
            history=as_of is not None,
            stranger=stranger,
            trace=trace,
        )
        if vectors is not None:  # hybrid, see reverie.recall.hybrid
            wanted = [stem(t) for t in terms]
            ask = HybridQuery(
                store, scope, meant, config, when, as_of is not None, wanted, read, stranger
            )
            units = _hybrid(units, ask, vectors, trace)
        units = _as_now(store, scope, units, when, read, vectors, meant, trace)
        if redactor is not None and redactor.handles_personal_data:
            redacted = [_redacted(unit, redactor) for unit in units]
            if trace is not None:
                trace.renamed(list(zip(units, redacted, strict=True)))
            units = redacted
        covers = {pid: cited_ids(page) for pid, page in read.items() if _whole(page)}
        items = numbered(pack(units, budget_tokens, covers=covers, trace=trace))
        text = render(items)
    except Exception as exc:
        log.warning("recall failed for scope %s: %s: %s", scope.key, type(exc).__name__, exc)
        warning = f"recall unavailable: {type(exc).__name__}: {exc}"
        if trace is not None:
            trace.notes.append(warning)
        return _empty(query, scope, budget_tokens, warning=warning)
    if trace is not None:
        trace.used_tokens, trace.header_tokens = count_tokens(text), header_tokens()
    return Recall(
        query=query,
        scope=scope,
        budget_tokens=budget_tokens,
        used_tokens=count_tokens(text),
        items=items,
        text=text,
    )


def _as_now(  # noqa: PLR0913 (the search state the answer stages read)
    store: BrainStore,
    scope: Scope,
    units: list[RecallItem],
    when: datetime,
    read: dict[str, Page],
    vectors: VectorSearch | None,
    meant: str,
    trace: RecallTrace | None,
) -> list[RecallItem]:
    """``units`` as they stand at ``when``: each replaced value, stale statement, outdated line
    and retired statement left out for what replaced it (:mod:`reverie.recall.answers`,
    :mod:`reverie.recall.outdated`)."""
    valid = [page for page in read.values() if is_current(page, when)]  # as_of: as then
    units = _newest(units, valid, trace, replaced_values(store, scope, units, when))
    kin = kin_of(vectors.embedder) if vectors is not None else None
    units = current_statements(store, scope, units, when, trace, kin)
    units = outdated_cut(units, _with_facts(store, scope, units, read), trace)
    relevance = None
    if vectors is not None:
        relevance = partial(unit_cosines, vectors, store, scope, meant)
    return announced_changes(store, scope, units, trace, relevance)


def _with_facts(
    store: BrainStore, scope: Scope, units: Sequence[RecallItem], read: dict[str, Page]
) -> dict[str, Page]:
    """``read`` and the pages of the fact claims among ``units`` it lacks (found by meaning
    only), read in one batch."""
    missing = {u.id for u in units if u.role == "fact" and u.kind == "page"} - read.keys()
    return {**read, **store.pages_by_id(scope, missing)} if missing else read


def _why_empty(terms: Sequence[str], budget_tokens: int) -> str:
    if not terms:
        return "the question holds no content terms (only stop words): nothing to search for"
    return f"the budget is {budget_tokens} tokens: nothing fits"


def _newest(
    units: list[RecallItem],
    pages: Sequence[Page],
    trace: RecallTrace | None,
    replaced: Replaced,
) -> list[RecallItem]:
    kept = newest_values(units, pages, replaced, trace)
    if trace is not None:
        trace.dropped(
            units, kept, "states a value that newer evidence replaced (only current values)"
        )
    return kept


def _empty(query: str, scope: Scope, budget: int, warning: str | None = None) -> Recall:
    return Recall(
        query=query,
        scope=scope,
        budget_tokens=budget,
        used_tokens=0,
        items=[],
        text="",
        warning=warning,
    )


def _units(  # noqa: PLR0913 (keyword-only: how this recall searches, and its trace)
    store: BrainStore,
    scope: Scope,
    terms: list[str],
    config: RecallConfig,
    now: datetime,
    *,
    history: bool = False,
    stranger: bool = False,
    trace: RecallTrace | None = None,
) -> tuple[list[RecallItem], dict[str, Page]]:
    """The lexical units for ``terms``, and the pages read to find them (by id). A question
    naming something the scope never saw (``stranger``) must share one term more with a unit."""
    wanted = [stem(t) for t in terms]
    statuses = ("active", "superseded") if history else ("active",)  # as_of sees the past
    pages = (
        store.search_pages(scope, terms, config.page_candidates, statuses)
        if config.include_pages
        else []
    )
    episodes: list[tuple[Episode, float]] = []
    asserted: list[tuple[Episode, float]] = []  # fact assertions: evidence of their fact pages
    if config.include_episodes:
        hits = store.search_episodes(
            scope, terms, config.episode_candidates * WIDER_POOL, window=config.episode_window
        )
        hits = varied(hits, config.episode_candidates)
        episodes = [(e, s) for e, s in hits if evidence_at(e, now, history)]
        asserted = [] if history else [(e, s) for e, s in hits if not evidence_at(e, now, False)]
    weights = term_weights(wanted, _pool(pages, episodes, now))
    if trace is not None:
        trace.terms, trace.weights = wanted, weights
    need = TermNeed(config.min_matched_terms, 1 if stranger else 0)
    query = QueryTerms(wanted, config.min_term_coverage, weights, need)
    units = claim_units(pages, query, now, trace=trace)
    if config.include_org and config.include_pages and not scope.is_org:  # labelled org
        units += org_units(store, scope, terms, config, now, statuses, trace=trace)
    read = {page.id: page for page, _ in pages}
    found: list[RecallItem] = []
    if config.include_episodes:
        found = episode_units(episodes, query, trace=trace)
        if config.include_pages and not history:  # the lesson behind (reverie.recall.answers)
            stating = found + episode_units(asserted, query)  # never units of their own
            behind, more = lessons_behind(store, scope, stating, units, now, query, trace)
            units += behind
            read.update(more)
            hits, candidates = episodes + asserted, [page for page, _ in pages]
            behind, more = values_behind(store, scope, hits, candidates, units, now, query, trace)
            units += behind
            read.update(more)
    units = leads_lifted(units, read, trace)
    if config.include_episodes:
        among = {e.id for e, _ in episodes}
        known = cited_by_claims(units, among) | _answered_for(read.values(), among)
        units += _demoted(found, known | _passed(store, scope, episodes), trace)
    return units, read


def _hybrid(
    units: list[RecallItem], ask: HybridQuery, vectors: VectorSearch, trace: RecallTrace | None
) -> list[RecallItem]:
    """The lexical ``units`` fused with the vector side (the episodes stored since the last
    indexing embedded first, :meth:`VectorSearch.catch_up`), then the knowledge behind the
    episodes only meaning found."""
    if ask.config.include_episodes:  # added since the last cycle: found by meaning too
        vectors.catch_up(ask.store, ask.scope)
    lexical_ids = {u.id for u in units if u.kind == "episode"}
    units = fuse(units, ask, vectors, trace=trace)
    if not ask.config.include_pages or ask.history:
        return units
    return _behind_dense(ask.store, ask.scope, units, lexical_ids, ask.now, ask.wanted, trace)


def _behind_dense(
    store: BrainStore,
    scope: Scope,
    units: list[RecallItem],
    lexical_ids: set[str],
    now: datetime,
    wanted: Sequence[str],
    trace: RecallTrace | None,
) -> list[RecallItem]:
    """Knowledge through evidence for the episodes only meaning found, as
    :func:`_lessons_behind` does for those the words found: the lead claims of the pages citing
    them join the units, and those episodes are then covered."""
    dense = [u for u in units if u.kind == "episode" and u.id not in lexical_ids]
    query = QueryTerms(list(wanted), 0.0)  # a claim's own share of the terms, unweighted
    behind, _pages = lessons_behind(store, scope, dense, units, now, query, trace)
    if not behind:
        return units
    covered = cited_by_claims(behind, {u.id for u in dense})
    rest = [u for u in units if not (u.kind == "episode" and u.id in covered)]
    return rest + behind + _demoted([u for u in dense if u.id in covered], covered, trace)


def _demoted(
    found: Sequence[RecallItem], covered: set[str], trace: RecallTrace | None = None
) -> list[RecallItem]:
    """Episodes a candidate page answers for, or that a cycle passed as routine, weigh
    :data:`COVERED_EPISODE` of their relevance: knowledge before evidence."""
    out = []
    for unit in found:
        if unit.id not in covered:
            out.append(unit)
            continue
        demoted = unit.model_copy(update={"score": unit.score * COVERED_EPISODE})
        if trace is not None:
            trace.signal(demoted, covered_weight=COVERED_EPISODE)
        out.append(demoted)
    return out


_NAME = re.compile(r"[A-Za-z][\w.+#-]*[\w+#]|[A-Za-z]")


def question_names(query: str) -> list[str]:
    """The names a question uses: words capitalised inside a sentence ("Tableau", "Redis") and
    words with digits or inner marks ("v2", "node.js", "C++"); at most three, longest first."""
    found: list[str] = []
    for sentence in SENTENCE.split(query):
        for i, word in enumerate(_NAME.findall(sentence)):
            marked = any(c.isdigit() or c in ".+#" for c in word)
            if marked or (i > 0 and word[0].isupper() and len(word) > 1):
                found.append(word)
    return sorted(dict.fromkeys(found), key=lambda w: (-len(w), w))[:3]


def _about_owner(terms: list[str], owner: frozenset[str]) -> list[str]:
    """The query ``terms`` less the words of the scope owner's name: a question about the
    person whose brain this is asks about every line of it (a name alone stays a term)."""
    kept = [t for t in terms if t not in owner]
    return kept or terms


def _names_unknown(
    store: Store, scope: Scope, query: str, config: RecallConfig, owner: frozenset[str]
) -> bool:
    """Whether the question names something no page or episode of the scope ever mentions:
    then it is likely about something never stored. The scope owner's name is not such a
    thing: the brain is theirs, and people do not say their own name."""
    for name in question_names(query):
        term = name.lower()
        if term in owner:
            continue
        # any match at all has newest matches: the window only bounds the ranking's cost
        if store.search_episodes(scope, [term], 1, window=config.episode_window):
            continue
        if config.include_pages and store.search_pages(scope, [term], 1, ("active",)):
            continue
        return True
    return False


def _answered_for(pages: Iterable[Page], among: set[str]) -> set[str]:
    """The candidate episodes a candidate problem page answers for (any of its claims cites
    them, its evidence line included): knowledge before evidence."""
    out: set[str] = set()
    for page in pages:
        if _whole(page):
            out |= among & cited_ids(page)
    return out


def _passed(store: Store, scope: Scope, episodes: Sequence[tuple[Episode, float]]) -> set[str]:
    """Episodes a cycle scanned and passed as routine (behind the checkpoint, consolidated into
    nothing): not knowledge by the cycle's judgement, so they weigh as little as covered ones."""
    if not any(e.consolidated_in is None for e, _ in episodes):
        return set()
    checkpoint = store.checkpoint(scope)
    return {
        e.id
        for e, _ in episodes
        if e.consolidated_in is None
        and e.seq is not None
        and e.seq <= checkpoint
        and not is_conversation((e,))
    }


def _pool(
    pages: Sequence[tuple[Page, float]], episodes: Sequence[tuple[Episode, float]], now: datetime
) -> Iterator[frozenset[str]]:
    """The stems of every candidate unit: what term rarity is measured against. An episode a
    candidate claim of a problem page cites is that claim's evidence, already counted through
    it (a focused page and its own episodes would otherwise make the page's every word
    "common"); a dialogue line and the turn it restates count apart, as both are recalled."""
    among = {e.id for e, _ in episodes}
    cited: set[str] = set()
    for page, _ in pages:
        if is_current(page, now):
            title = stems(page.title)
            for claim in page.revision.claims:
                if is_recallable(claim):
                    if claim.role is not None:  # a problem page's claim: its evidence
                        cited |= among & claim_cites(claim)
                    yield title | stems(claim.text)
    yield from (stems(e.text) for e, _ in episodes if e.id not in cited)


WIDER_POOL = 3
"""How many times ``RecallConfig.episode_candidates`` the full-text search reads, for
:func:`varied` to choose from."""
SAME_SHAPE = 2
"""How many episodes of one shape (:func:`_shape`) the candidates keep."""
_VARYING = re.compile(r"\S*\d\S*")


def _shape(episode: Episode) -> tuple[str, str]:
    """An episode's wording with what varies from case to case (ids, numbers, dates) masked,
    and its outcome: a routine run repeated a hundred times has one shape."""
    return (_VARYING.sub("#", episode.situation.casefold()), str(episode.outcome))


def varied(hits: Sequence[tuple[Episode, float]], limit: int) -> list[tuple[Episode, float]]:
    """The best ``limit`` of ``hits`` (best first) with at most :data:`SAME_SHAPE` of one
    shape: a routine repeated a hundred times ("Gate check-in for TRL…, seal matches") would
    fill every candidate place and keep the one case that teaches out of the pool."""
    seen: Counter[tuple[str, str]] = Counter()
    out = []
    for episode, score in hits:
        shape = _shape(episode)
        if seen[shape] < SAME_SHAPE:
            seen[shape] += 1
            out.append((episode, score))
            if len(out) == limit:
                break
    return out


def term_weights(wanted: Sequence[str], pool: Iterable[frozenset[str]]) -> dict[str, float]:
    """BM25's idf of each stemmed term over the candidate units ``pool``: a term that most
    candidates hold (a name every line of a chat carries) weighs little, a term none holds
    (the query is about something else) weighs most."""
    terms = dict.fromkeys(wanted)
    df: Counter[str] = Counter()
    n = 0
    for have in pool:
        n += 1
        df.update(t for t in terms if t in have)
    return {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in terms}


def _whole(page: Page) -> bool:
    """Whether a page answers for all the episodes it cites (a problem's page, whose claims
    have roles), so none of them is repeated beside it; a page of plain statements (a
    dialogue's) covers only what the recalled claim cites."""
    return any(c.role is not None for c in page.revision.claims)


def _redacted(unit: RecallItem, redactor: Redactor) -> RecallItem:
    title, text = redactor.text(unit.title), redactor.text(unit.text)
    if title == unit.title and text == unit.text:
        return unit
    return unit.model_copy(update={"title": title, "text": text})
