"""The memory-over-time step of a cycle: facts, reinforcement and decay (issue 5).

Runs after plan validation and before the commit, reads the store, and returns more writes for
the cycle's one changeset: the fact runs of :mod:`reverie.dream.facts`, and the retirements of
:mod:`reverie.dream.decay` for pages the cycle neither wrote nor observed. Deterministic for a
given store state and ``now``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from reverie.config import MemoryConfig
from reverie.dream.apply import WriteContext
from reverie.dream.decay import decay_writes
from reverie.dream.facts import PREFIX, Assertion, fact_writes
from reverie.models import PageStatus
from reverie.store.base import Observation, PageWrite, Store

__all__ = ["MemoryStep", "decay_due", "memory_step"]


@dataclass
class MemoryStep:
    writes: list[tuple[str, PageWrite, int]] = field(default_factory=list)
    marks: list[str] = field(default_factory=list)
    observations: list[Observation] = field(default_factory=list)


def memory_step(
    store: Store,
    ctx: WriteContext,
    slots: Mapping[str, Sequence[Assertion]],
    *,
    written: set[str],
    observed: Sequence[Observation],
    config: MemoryConfig,
) -> MemoryStep:
    """Fact writes for the new assertions in ``slots``, then decay of everything else."""
    out = MemoryStep()
    if slots:
        pages = [p for p in store.pages(ctx.scope, None) if p.topic_key.startswith(PREFIX + "|")]
        wanted = {e for p in pages if p.status is not PageStatus.RETIRED for e in p.citations}
        cited = {e.id: e for e in store.episodes(sorted(wanted))}
        facts = fact_writes(ctx, slots, pages, cited)
        out.writes, out.marks, out.observations = facts.writes, facts.marks, facts.observations
    skip = written | {w.revision.page_id for _a, w, _n in out.writes}
    skip |= {o.page_id for o in (*observed, *out.observations)}
    active = store.pages(ctx.scope, [str(PageStatus.ACTIVE)])
    strengths = store.strengths(p.id for p in active if p.id not in skip)
    out.writes += [(a, w, 0) for a, w in decay_writes(ctx, active, strengths, config, skip)]
    return out


def decay_due(store: Store, ctx: WriteContext, config: MemoryConfig) -> bool:
    """Whether a cycle with no new episodes still has pages to retire."""
    if not config.decay:
        return False
    step = memory_step(store, ctx, {}, written=set(), observed=(), config=config)
    return bool(step.writes)
