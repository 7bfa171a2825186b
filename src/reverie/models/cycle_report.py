"""What a dream cycle did: its :class:`CycleReport`, and the stored :class:`Cycle` record.

A report says what one cycle did (or would do, for a dry run): the checkpoint it moved, the
pages it changed (:class:`PageChange`), the groups it scored (:class:`Insight`), its advice
(:class:`Recommendation`) and its model cost. A :class:`Cycle` is that report as stored, and
whether it was undone.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from reverie.models.scope import Scope

__all__ = ["Cycle", "CycleReport", "CycleStatus", "Insight", "PageChange", "Recommendation"]


class CycleStatus(StrEnum):
    COMMITTED = "committed"
    EMPTY = "empty"
    DRY_RUN = "dry_run"
    PENDING = "pending"  # review mode: held for review as a plan, nothing changed
    FAILED = "failed"
    UNDONE = "undone"


class PageChange(BaseModel):
    """One page a cycle created or changed, with the revision numbers around it."""

    model_config = ConfigDict(extra="forbid")

    page_id: str
    title: str
    action: str
    revision_before: int | None
    revision_after: int
    episodes: int = 0


class Insight(BaseModel):
    """One group of a cycle scored (see :mod:`reverie.dream.score`)."""

    model_config = ConfigDict(extra="forbid")

    topic_key: str
    pattern: str
    importance: float
    novelty: float
    confidence: float
    frequency: int
    score: float
    closest_page: str | None = None
    deferred: bool = False


class Recommendation(BaseModel):
    """Advisory tuning advice in a report (see :mod:`reverie.dream.recommend`)."""

    model_config = ConfigDict(extra="forbid")

    kind: str
    subject: str = ""
    message: str


class CycleReport(BaseModel):
    """What one dream cycle did (or would do, for a dry run)."""

    model_config = ConfigDict(extra="forbid")

    cycle_id: str
    scope: Scope
    status: CycleStatus
    started_at: datetime
    finished_at: datetime | None = None
    checkpoint_before: int = 0
    checkpoint_after: int = 0
    scanned: int = 0
    collected: int = 0
    deferred: int = 0
    groups: int = 0
    created: int = 0
    revised: int = 0
    merged: int = 0
    superseded: int = 0
    retired: int = 0
    unchanged: int = 0
    episodes_marked: int = 0
    rejected: list[str] = Field(default_factory=list)
    fallbacks: list[str] = Field(default_factory=list)
    """Groups whose model plan was replaced by the extractive one (reverie.dream.fallback)."""
    changes: list[PageChange] = Field(default_factory=list)
    timings: dict[str, float] = Field(default_factory=dict)
    message: str = ""
    # model cost: calls made, answers served from the response cache, provider tokens
    model_calls: int = 0
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    model_latency_s: float = 0.0
    deferred_groups: list[str] = Field(default_factory=list)
    # volumes, scored insights, advice, and per-tool outcomes of the scanned episodes
    clustered: int = 0
    groups_deferred: int = 0
    bytes_in: int = 0
    bytes_out: int = 0
    compression_ratio: float = 0.0
    insights: list[Insight] = Field(default_factory=list)
    recommendations: list[Recommendation] = Field(default_factory=list)
    tool_stats: dict[str, list[int]] = Field(default_factory=dict)
    # org promotion: pages copied to (or updated in) the tenant's org brain by this cycle
    promoted: list[str] = Field(default_factory=list)


class Cycle(BaseModel):
    """A stored cycle: its report, and whether (and by what) it was undone."""

    model_config = ConfigDict(extra="forbid")

    id: str
    scope: Scope
    status: CycleStatus
    started_at: datetime
    finished_at: datetime | None
    checkpoint_before: int
    checkpoint_after: int
    report: CycleReport
    undone_at: datetime | None = None

    @classmethod
    def of(cls, report: CycleReport) -> Cycle:
        """The record of a cycle about to be committed: what its report says, not undone."""
        return cls(
            id=report.cycle_id,
            scope=report.scope,
            status=report.status,
            started_at=report.started_at,
            finished_at=report.finished_at,
            checkpoint_before=report.checkpoint_before,
            checkpoint_after=report.checkpoint_after,
            report=report,
        )
