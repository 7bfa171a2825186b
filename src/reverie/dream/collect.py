"""Collection: which scanned episodes a cycle consolidates now, and which it defers.

Pure. The scan is every unconsolidated episode past the checkpoint, ``seq`` ascending. An episode is
eligible when it is important enough, carries a real lesson (a template such as "approach worked"
does not count), asserts a fact (:mod:`reverie.dream.facts`), or belongs to a recurring pattern:
its pattern key occurs ``min_pattern`` times in the scan, or the brain already has a page for that
key. The cap takes eligible episodes in ``seq``
order; the rest are deferred, never skipped — the checkpoint cannot pass the first of them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from reverie.config import DreamConfig
from reverie.dream.cluster import pattern_key
from reverie.dream.distill import is_template_lesson
from reverie.dream.facts import asserts_fact
from reverie.models import Episode

__all__ = ["Collection", "collect", "next_checkpoint"]


@dataclass(frozen=True)
class Collection:
    scanned: int
    taken: list[Episode]
    deferred: list[Episode]
    last_scanned_seq: int


def _is_eligible(ep: Episode, config: DreamConfig, recurring: set[str], key: str) -> bool:
    if ep.metadata.get("reverie") == "human-edit":  # issue 5: evidence of an import, not work
        return False
    if (ep.importance or 0) >= config.importance_threshold:
        return True
    if ep.lesson and not is_template_lesson(ep.lesson):
        return True
    if asserts_fact(ep):  # issue 5: a stated fact is always knowledge (reverie.dream.facts)
        return True
    return key in recurring


def collect(
    scanned: Sequence[Episode], config: DreamConfig, known_topics: Iterable[str] = ()
) -> Collection:
    """Split ``scanned`` (seq ascending) into what this cycle takes and what it defers."""
    keys = [pattern_key(ep) for ep in scanned]
    counts = Counter(keys)
    recurring = {k for k, n in counts.items() if n >= config.min_pattern} | set(known_topics)
    eligible = [
        ep
        for ep, key in zip(scanned, keys, strict=True)
        if _is_eligible(ep, config, recurring, key)
    ]
    cap = config.max_episodes_per_cycle
    last = scanned[-1].seq if scanned else 0
    return Collection(
        scanned=len(scanned),
        taken=eligible[:cap],
        deferred=eligible[cap:],
        last_scanned_seq=last or 0,
    )


def next_checkpoint(last_scanned_seq: int, unconsumed: Iterable[Episode]) -> int:
    """The checkpoint after a cycle: past everything scanned, but never past an episode left over.

    ``unconsumed`` are eligible episodes this cycle did not consolidate (deferred by a cap or in
    a group whose plan was rejected); they must be collected again by a later cycle.
    """
    seqs = [ep.seq for ep in unconsumed if ep.seq is not None]
    return min(seqs) - 1 if seqs else last_scanned_seq
