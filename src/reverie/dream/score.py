"""Insight scoring: which groups of a cycle matter most, and so which ones the group cap keeps.

``score = importance × novelty × confidence × log10(frequency + 1)`` (mindX's formula), where for
one group of episodes:

* ``importance`` — the mean episode importance, over 10 (0.1–1.0);
* ``novelty`` — ``1 - s`` where ``s`` is the similarity of the group's content words to the
  closest page the scope already holds: the page of the same topic, and otherwise the best few
  pages full-text search finds for the group's salient terms. ``s`` is the geometric mean of the
  cosine of the word counts and the share of the group's distinct words the page already holds
  (containment says "the brain knows this"; the cosine keeps a huge page from knowing
  everything). A pattern the brain already holds scores lower than a new one; the floor
  ``NOVELTY_FLOOR`` keeps known patterns orderable (they still get revised, just later when
  the cap bites);
* ``confidence`` — how much the group agrees with itself: ``0.5 + 0.5 × share`` of its most
  common outcome;
* ``frequency`` — how many episodes the group holds.

Ordering the cap (:func:`rank_for_cap`) keeps the exactly-once rule intact: groups past the cap are
*deferred* — their episodes stay unconsolidated and the checkpoint stops before the first of them —
and the group holding the oldest pending episode always goes first, so the checkpoint advances
every cycle and a low-scoring group cannot starve. Pure apart from the page reads, deterministic.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from reverie.dream.cluster import Group, content_words, order_key, salient_terms
from reverie.models import Episode, Insight, Outcome, Page, Scope
from reverie.store.base import Store

__all__ = [
    "NOVELTY_FLOOR",
    "cosine",
    "insight_score",
    "rank_for_cap",
    "score_groups",
    "similarity",
]

NOVELTY_FLOOR = 0.05
SAMPLE = 64  # episodes of a group whose words are compared (the earliest, in store order)
SEARCH_PAGES = 3
_FAILING = {Outcome.FAILURE, Outcome.TIMEOUT}


def insight_score(importance: float, novelty: float, confidence: float, frequency: int) -> float:
    """``importance × novelty × confidence × log10(frequency + 1)``, rounded to 4 places."""
    return round(importance * novelty * confidence * math.log10(frequency + 1), 4)


def cosine(a: Counter[str], b: Counter[str]) -> float:
    """Cosine similarity of two bags of words (0 when either is empty)."""
    if not a or not b:
        return 0.0
    small, large = (a, b) if len(a) <= len(b) else (b, a)
    dot = sum(n * large.get(w, 0) for w, n in small.items())
    norm = math.sqrt(sum(n * n for n in a.values())) * math.sqrt(sum(n * n for n in b.values()))
    return dot / norm if norm else 0.0


def similarity(group: Counter[str], page: Counter[str]) -> float:
    """``sqrt(cosine × containment)`` of a group's words against a page's (0 to 1)."""
    if not group or not page:
        return 0.0
    held = sum(1 for w in group if w in page) / len(group)
    return math.sqrt(cosine(group, page) * held)


def _words(text: str) -> Counter[str]:
    return Counter(content_words(text))


def _page_words(page: Page) -> Counter[str]:
    return _words(page.title + "\n" + "\n".join(c.text for c in page.revision.claims))


def _pattern(episodes: Sequence[Episode]) -> str:
    """mindX-style pattern type: what the group's outcomes say."""
    failing = sum(ep.outcome in _FAILING for ep in episodes)
    if failing == len(episodes):
        return "recurring failure" if len(episodes) > 1 else "failure"
    if failing == 0:
        worked = all(ep.outcome is Outcome.SUCCESS for ep in episodes)
        return ("recurring success" if len(episodes) > 1 else "success") if worked else "knowledge"
    return "failure then fix" if episodes[-1].outcome is Outcome.SUCCESS else "mixed outcomes"


def _confidence(episodes: Sequence[Episode]) -> float:
    known = [ep.outcome for ep in episodes if ep.outcome is not Outcome.UNKNOWN]
    share = max(Counter(known).values()) / len(known) if known else 0.5
    return round(0.5 + 0.5 * share, 4)


def _closest(
    store: Store, scope: Scope, group: Group, words: Counter[str], own: Page | None
) -> tuple[float, str | None]:
    candidates = [own] if own is not None else []
    if own is None:
        terms = salient_terms(" ".join(ep.text for ep in group.episodes[:SAMPLE]), 8)
        candidates += [p for p, _s in store.search_pages(scope, terms, SEARCH_PAGES)]
    best, best_id = 0.0, None
    for page in candidates:
        sim = similarity(words, _page_words(page))
        if sim > best:
            best, best_id = sim, page.id
    return best, best_id


def score_groups(store: Store, scope: Scope, groups: Sequence[Group]) -> dict[str, Insight]:
    """Score every group against the pages ``scope`` holds now (reads only)."""
    own = store.pages_by_topic(scope, [g.topic_key for g in groups])
    scores: dict[str, Insight] = {}
    for g in groups:
        sample = g.episodes[:SAMPLE]
        words = _words("\n".join(ep.text for ep in sample))
        similarity, closest = _closest(store, scope, g, words, own.get(g.topic_key))
        importance = round(sum(ep.importance or 5 for ep in g.episodes) / len(g.episodes) / 10, 4)
        novelty = round(max(NOVELTY_FLOOR, 1.0 - similarity), 4)
        confidence = _confidence(g.episodes)
        frequency = len(g.episodes)
        scores[g.topic_key] = Insight(
            topic_key=g.topic_key,
            importance=importance,
            novelty=novelty,
            confidence=confidence,
            frequency=frequency,
            score=insight_score(importance, novelty, confidence, frequency),
            pattern=_pattern(g.episodes),
            closest_page=closest,
        )
    return scores


def rank_for_cap(
    groups: Sequence[Group], scores: dict[str, Insight], cap: int
) -> tuple[list[Group], list[Group]]:
    """Split ``groups`` into the ``cap`` kept (topic order) and the deferred rest.

    The group with the oldest episode comes first whatever its score (so the checkpoint always
    advances); the others by score, highest first, ties by topic key.
    """
    if len(groups) <= cap:
        return list(groups), []
    oldest = min(groups, key=lambda g: order_key(g.episodes[0]))
    rest = sorted(
        (g for g in groups if g is not oldest),
        key=lambda g: (-scores[g.topic_key].score, g.topic_key),
    )
    ranked = [oldest, *rest]
    kept = sorted(ranked[:cap], key=lambda g: g.topic_key)
    return kept, ranked[cap:]
