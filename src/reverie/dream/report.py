"""The parts of a cycle report beyond counts — volumes, scored insights, advice.

Filled after validation and before the commit, so they are stored with the cycle. ``bytes_in`` is
the UTF-8 text of the episodes this cycle consolidates, ``bytes_out`` the title and body of the
revisions it writes, and ``compression_ratio`` their quotient (0 when nothing was written).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from reverie.config import DreamConfig
from reverie.dream.cluster import Group
from reverie.dream.recommend import recommend, tool_stats
from reverie.models import CycleReport, Episode, Insight, Revision
from reverie.store.base import BrainStore

__all__ = ["TOP_INSIGHTS", "CycleWork", "fill_extras"]

TOP_INSIGHTS = 10
HISTORY = 20


@dataclass(frozen=True)
class CycleWork:
    """What one cycle read and is about to write, as the report's extras measure it: the
    episodes it scanned and took, its groups (kept, and deferred past the group cap) with
    their scores, the revisions it writes and the episodes it marks consolidated."""

    scanned: Sequence[Episode]
    taken: Sequence[Episode]
    taken_bytes: Sequence[int]
    """The UTF-8 size of each taken episode's stored text, in ``taken``'s order."""
    kept: Sequence[Group]
    overflow: Sequence[Group]
    scores: dict[str, Insight]
    revisions: Sequence[Revision]
    marks: Sequence[str]


def fill_extras(
    report: CycleReport, store: BrainStore, config: DreamConfig, work: CycleWork
) -> None:
    kept, overflow = work.kept, work.overflow
    marked = set(work.marks)
    report.clustered = sum(len(g.episodes) for g in (*kept, *overflow))
    report.groups_deferred = len(overflow)
    taken = zip(work.taken, work.taken_bytes, strict=True)
    report.bytes_in = sum(n for ep, n in taken if ep.id in marked)
    report.bytes_out = sum(len(f"{r.title}\n{r.body}".encode()) for r in work.revisions)
    report.compression_ratio = (
        round(report.bytes_in / report.bytes_out, 3) if report.bytes_out else 0.0
    )
    deferred = {g.topic_key for g in overflow}
    ranked = sorted(work.scores.values(), key=lambda s: (-s.score, s.topic_key))[:TOP_INSIGHTS]
    report.insights = [s.model_copy(update={"deferred": s.topic_key in deferred}) for s in ranked]
    report.tool_stats = tool_stats(work.scanned)
    history = [c.report for c in store.cycles(report.scope, HISTORY) if c.undone_at is None]
    report.recommendations = recommend(report, history, config)
