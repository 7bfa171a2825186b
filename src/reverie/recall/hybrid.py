"""Hybrid recall: the lexical units of :mod:`reverie.recall.search` fused with vector hits.

A calibrated blend rather than reciprocal-rank fusion, because the relevance floor needs
absolute scores: rank fusion always has a first place, a floor does not. For a unit:

- ``lexical`` is its score from the full-text path (BM25 share and term coverage, already
  floored by term coverage and weighted by kind), 0 when the full-text path did not find it;
- ``semantic`` is ``clip((cosine - floor) / (1 - floor), 0, 1)`` with ``floor`` the embedder's
  :func:`cosine_floor`, weighted by kind the same way (a page claim by ``PAGE_PREFERENCE``);
- the unit's score is ``lexical + SEMANTIC_WEIGHT * semantic``. A unit that only the vector side
  found must clear the cosine floor; so a query about something never stored (cosine with every
  unit under the floor, no content term in common) still yields nothing.

Vector hits are resolved through the store: a claim only if its page is current (the revision
the row was embedded from is the page's current one, the status is active, or superseded when
answering ``as_of``, and the validity interval contains ``now``), an episode only if it is of the
scope (it is: the index is per scope). Episodes cited by a recalled claim weigh
``COVERED_EPISODE`` as on the lexical path.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from reverie.config import RecallConfig
from reverie.embed import Embedder
from reverie.hashing import content_hash
from reverie.models import Page, PageStatus, RecallItem, Scope, recall_weight
from reverie.recall.floor import Floors, calibrated
from reverie.recall.units import (
    COVERED_EPISODE,
    PAGE_PREFERENCE,
    cited_by_claims,
    claim_item,
    coverage,
    episode_excerpt,
    episode_item,
    evidence_at,
    excerpt,
    is_current,
)
from reverie.recall.vectors import Neighbours, VectorSearch, parse_claim_ref
from reverie.store.base import BrainStore

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from reverie.recall.trace import RecallTrace

    Vector = NDArray[np.float32]

__all__ = [
    "ANSWER_FLOORS",
    "COSINE_FLOORS",
    "DEFAULT_COSINE_FLOOR",
    "SEMANTIC_WEIGHT",
    "HybridQuery",
    "answer_floor",
    "cosine_floor",
    "fuse",
    "unit_cosines",
]

SEMANTIC_WEIGHT = 1.0
COSINE_FLOORS = {"all-MiniLM-L6-v2-int8": 0.3}
"""Per model: below this cosine a unit is unrelated to the query (calibrated in docs/recall.md)."""
ANSWER_FLOORS = {"all-MiniLM-L6-v2-int8": 0.42}
"""Per model: a section is empty unless its best unit reaches this cosine (docs/recall.md)."""
DEFAULT_COSINE_FLOOR = 0.5
"""For models without a calibrated floor (the hashing embedder's cosine is word overlap)."""

_Key = tuple[str, str, str]


def cosine_floor(embedder: Embedder) -> float:
    floor = getattr(embedder, "cosine_floor", None)
    if isinstance(floor, float):
        return floor
    return COSINE_FLOORS.get(embedder.model_id, DEFAULT_COSINE_FLOOR)


def answer_floor(embedder: Embedder, floors: Floors | None = None) -> float | None:
    """Below this best cosine a section has nothing to say about the question: the floor an
    embedder declares, else the one ``floors`` calibrated against the brain's background
    (:mod:`reverie.recall.floor`), else the model's fixed one (where no background is measured:
    PostgreSQL). ``None`` for a model without either: its cosine floor is a bar for units only
    the vectors found, not for the question as a whole (the hashing embedder's cosine is word
    overlap, under 0.5 for a stored action quoted verbatim), so there the lexical floors alone
    decide."""
    floor = getattr(embedder, "answer_floor", None)
    if isinstance(floor, float):
        return floor
    if floors is not None:
        return floors.answer
    return ANSWER_FLOORS.get(embedder.model_id)


STRONG_COVERAGE = 0.5
"""A full-text unit holding this share of the question's terms answers it whatever its cosine."""


def _answers(
    units: Iterable[tuple[RecallItem, float]],
    floor: float,
    lexical: Sequence[RecallItem],
    wanted: Sequence[str],
    plain_floor: float,
) -> bool:
    """Whether the section has anything to say: a unit's cosine reaches ``floor``, or a
    full-text unit holds :data:`STRONG_COVERAGE` of the question's terms (names and rare words
    that an embedding of a short line misses). A plain statement — a line of a page without
    roles (a dialogue's), or an episode with no outcome (a turn of a conversation) — needs only
    ``plain_floor``: a question about a person's life is answered across lines each only
    loosely like it. A unit whose cosine is unknown (0: an episode stored since
    the last cycle, not embedded yet) is judged by the lexical path alone."""
    for unit, cos in units:
        plain = unit.role is None if unit.kind != "episode" else unit.status == "unknown"
        if cos == 0.0 or cos >= (plain_floor if plain else floor):
            return True
    return any(coverage(wanted, f"{u.title} {u.text}") >= STRONG_COVERAGE for u in lexical)


def _gating(
    units: Mapping[_Key, tuple[RecallItem, float]], lexical: Sequence[RecallItem], ask: HybridQuery
) -> list[tuple[RecallItem, float]]:
    """The units that may open the answer gate. A question naming something the scope never
    saw (``stranger``) is answered only by a unit that both its words and its meaning find:
    whatever the vectors alone bring is alike to the question's other words (the kind of
    task, the topic) but cannot be about the thing named, which the brain never held. For
    any other question, every unit."""
    if not ask.stranger:
        return list(units.values())
    found = {_key(u) for u in lexical}
    return [units[k] for k in found if k in units]


def _semantic(cosine: float | None, floor: float) -> float:
    if cosine is None:
        return 0.0
    return min(max((cosine - floor) / (1 - floor), 0.0), 1.0)


def _key(unit: RecallItem) -> _Key:
    return (unit.kind, unit.id, unit.text)


@dataclass(frozen=True)
class HybridQuery:
    """One recall's question as the vector side sees it: where to look, at what time, and what
    the lexical path already knows.

    ``history``: searching the past (``as_of``), so superseded pages count too. ``wanted``: the
    question's stemmed terms, for excerpts. ``known``: pages the lexical path already read (by
    id), so resolving a claim hit on one of them costs no store read; the other hit pages are
    read in one batch. ``stranger``: the question names something the scope never saw, so no
    unit can hold all of it: shared words alone do not answer it (no :data:`STRONG_COVERAGE`
    pass), only meaning."""

    store: BrainStore
    scope: Scope
    text: str
    config: RecallConfig
    now: datetime
    history: bool = False
    wanted: Sequence[str] = ()
    known: Mapping[str, Page] = field(default_factory=dict)
    stranger: bool = False


def fuse(
    lexical: Sequence[RecallItem],
    ask: HybridQuery,
    vectors: VectorSearch,
    *,
    trace: RecallTrace | None = None,
) -> list[RecallItem]:
    """``lexical`` re-scored with cosine similarity (in place: they are this recall's own
    units), plus the units only vectors found; ``trace`` gets each unit's cosine."""
    index = vectors.index(ask.store, ask.scope)
    if index.empty():
        return list(lexical)
    query_vector = vectors.embed_query(ask.text)
    floors = calibrated(vectors.embedder.model_id, index.compared(newest=ask.config.vector_window))
    floor = cosine_floor(vectors.embedder)
    if floors is not None:  # a small brain's background is lower than the model's fixed floor
        floor = min(floor, floors.unit)
    seen = {u.id for u in lexical if u.kind == "episode"}
    claim_hashes = {u.text: content_hash(u.text) for u in lexical if u.kind != "episode"}
    by_ref, by_hash = index.cosines(query_vector, list(seen), list(claim_hashes.values()))
    units: dict[_Key, tuple[RecallItem, float]] = {}
    for unit in lexical:
        cos = (
            by_ref.get(unit.id) if unit.kind == "episode" else by_hash.get(claim_hashes[unit.text])
        )
        units[_key(unit)] = (unit, cos or 0.0)
    found = _vector_units(ask, index, query_vector, floor, seen)
    for unit, cos in found:
        if _key(unit) not in units and trace is not None:
            trace.found(unit, "vectors")
        units.setdefault(_key(unit), (unit, cos))
    gate = answer_floor(vectors.embedder, floors)
    if trace is not None and floors is not None:
        trace.notes.append(
            f"floors for this brain's size: unit cosine {floors.unit:.3f},"
            f" answer {floors.answer:.3f}, plain statement {floors.plain:.3f}"
        )
    strong = () if ask.stranger else lexical
    plain = floor if floors is None else min(cosine_floor(vectors.embedder), floors.plain)
    if gate is not None and not _answers(
        _gating(units, lexical, ask), gate, strong, ask.wanted, plain
    ):
        if trace is not None:
            _gated(trace, [u for u, _ in units.values()], gate)
        return []  # nothing here is about the question, whatever words it shares with it
    return _rescored(list(units.values()), floor, trace)


def unit_cosines(
    vectors: VectorSearch, store: BrainStore, scope: Scope, query: str, units: Sequence[RecallItem]
) -> list[float | None]:
    """The cosine of ``query`` (as the embedder reads it) to each of ``units`` from the vectors
    the index holds: an episode's by its id, a claim's by its text; ``None`` where the index
    holds none (an episode stored since the last indexing)."""
    index = vectors.index(store, scope)
    if index.empty():
        return [None] * len(units)
    hashes = {u.text: content_hash(u.text) for u in units if u.kind != "episode"}
    refs = [u.id for u in units if u.kind == "episode"]
    by_ref, by_hash = index.cosines(vectors.embed_query(query), refs, list(hashes.values()))
    return [by_ref.get(u.id) if u.kind == "episode" else by_hash.get(hashes[u.text]) for u in units]


def _rescored(
    units: Sequence[tuple[RecallItem, float]], floor: float, trace: RecallTrace | None
) -> list[RecallItem]:
    """Each unit's score plus its semantic share (in place); those left worth nothing out."""
    episodes = {u.id for u, _ in units if u.kind == "episode"}
    cited = cited_by_claims((u for u, _ in units), episodes)
    out = []
    for unit, cos in units:
        weight = PAGE_PREFERENCE * _role_weight(unit) if unit.kind != "episode" else 1.0
        if unit.kind == "episode" and unit.id in cited:
            weight *= COVERED_EPISODE
        lexical_score = unit.score
        unit.score += SEMANTIC_WEIGHT * weight * _semantic(cos, floor)
        if trace is not None:
            semantic = {"cosine": cos, "semantic": _semantic(cos, floor), "lexical": lexical_score}
            trace.signal(unit, **semantic)
        if unit.score > 0:
            out.append(unit)
        elif trace is not None:
            trace.cut(unit, f"not related in meaning: cosine {cos:.2f} under the floor {floor}")
    return out


def _gated(trace: RecallTrace, units: Sequence[RecallItem], gate: float) -> None:
    trace.notes.append(
        f"no unit reaches the answer floor (cosine {gate}) and none holds half the question's"
        " terms: the section is empty"
    )
    for unit in units:
        trace.cut(unit, "the section as a whole does not answer the question (answer floor)")


def _role_weight(unit: RecallItem) -> float:
    return recall_weight(unit.role, unit.support)


def _vector_units(
    ask: HybridQuery, index: Neighbours, query: Vector, floor: float, seen: set[str]
) -> list[tuple[RecallItem, float]]:
    """The units the vector side finds past the floor; episodes in ``seen`` (the lexical path
    made their units already) are not read again."""
    store, config, now, history = ask.store, ask.config, ask.now, ask.history
    out: list[tuple[RecallItem, float]] = []
    if config.include_pages:
        hits = [
            h for h in index.search(query, config.page_candidates, "claim") if h.cosine >= floor
        ]
        refs = [(parse_claim_ref(h.ref), h.cosine) for h in hits]
        pages = _current_pages(store, index.scope, {r[0] for r, _ in refs}, now, history, ask.known)
        for (page_id, number, i), cosine in refs:
            page = pages.get(page_id)
            if (
                page is not None
                and page.revision.number == number
                and i < len(page.revision.claims)
            ):
                out.append((claim_item(page, page.revision.claims[i], 0.0), cosine))
    if config.include_episodes:
        hits = [
            h
            for h in index.search(
                query, config.episode_candidates, "episode", newest=config.vector_window
            )
            if h.cosine >= floor
        ]
        cos = {h.ref: h.cosine for h in hits if h.ref not in seen}
        for ep in store.episodes(cos, tenant=index.scope.tenant):
            if not evidence_at(ep, now, history):  # the lexical path's rule, facts included
                continue
            line = episode_excerpt(ep, excerpt(ep.text, ask.wanted))
            out.append((episode_item(ep, line, 0.0), cos[ep.id]))
    return out


def _current_pages(
    store: BrainStore,
    scope: Scope,
    page_ids: set[str],
    now: datetime,
    history: bool,
    known: Mapping[str, Page],
) -> dict[str, Page]:
    """The pages among ``page_ids`` current at ``now``: those the lexical path already decoded,
    the rest in one batched read."""
    found = {i: known[i] for i in page_ids if i in known}
    missing = page_ids - found.keys()
    if missing:
        found.update(store.pages_by_id(scope, missing))
    allowed = {PageStatus.ACTIVE, PageStatus.SUPERSEDED} if history else {PageStatus.ACTIVE}
    return {i: p for i, p in found.items() if p.status in allowed and is_current(p, now)}
