"""Collection: which scanned episodes a cycle considers now, and which it defers.

Pure. The scan is every unconsolidated episode past the checkpoint, ``seq`` ascending. Every
episode is considered except the records of a person's edits; whether it is knowledge is decided
once it is grouped with the others of its problem (:func:`reverie.dream.problems.is_knowledge`):
a routine success with no lesson, no error and no pattern is passed by the checkpoint and cited
by no page. The cap takes episodes in ``seq`` order; the rest are deferred, never skipped — the
checkpoint cannot pass the first of them.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from reverie.config import DreamConfig
from reverie.dream.pins import is_human_edit
from reverie.models import Episode

__all__ = ["Collection", "collect", "next_checkpoint"]


@dataclass(frozen=True)
class Collection:
    scanned: int
    taken: list[Episode]
    deferred: list[Episode]
    last_scanned_seq: int
    taken_bytes: array[int] = field(default_factory=lambda: array("q"))
    """The UTF-8 size of each taken episode's text as stored (``taken``'s order): what the
    report's ``bytes_in`` sums, whatever view of an episode the cycle then holds."""


def collect(scanned: Sequence[Episode], config: DreamConfig) -> Collection:
    """Split ``scanned`` (seq ascending) into what this cycle takes and what it defers."""
    eligible = [ep for ep in scanned if not is_human_edit(ep)]
    cap = config.max_episodes_per_cycle
    last = scanned[-1].seq if scanned else 0
    taken = eligible[:cap]
    return Collection(
        scanned=len(scanned),
        taken=taken,
        deferred=eligible[cap:],
        last_scanned_seq=last or 0,
        taken_bytes=array("q", (len(ep.text.encode()) for ep in taken)),
    )


def next_checkpoint(last_scanned_seq: int, unconsumed: Iterable[Episode]) -> int:
    """The checkpoint after a cycle: past everything scanned, but never past an episode left over.

    ``unconsumed`` are eligible episodes this cycle did not consolidate (deferred by a cap or in
    a group whose plan was rejected); they must be collected again by a later cycle.
    """
    seqs = [ep.seq for ep in unconsumed if ep.seq is not None]
    return min(seqs) - 1 if seqs else last_scanned_seq
