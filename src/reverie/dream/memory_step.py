"""The memory-over-time step of a cycle: facts, reinforcement and decay (docs/memory.md).

Runs after plan validation and before the commit, reads the store, and returns more writes for
the cycle's one changeset: the fact runs of :mod:`reverie.dream.facts`, and the retirements of
:mod:`reverie.dream.decay` for pages the cycle neither wrote nor observed. Deterministic for a
given store state, ``now`` and scanned episodes.

Fact episodes dated after the cycle's horizon (``now`` plus ``MemoryConfig.future_skew_s``;
ingest refuses them, but older stores may hold some) are not asserted: they are returned as
``deferred``, so they stay eligible and the checkpoint stops before them, with one ``notes`` line
each for the report.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from reverie.config import MemoryConfig
from reverie.dream.aliases import slot_of_topic
from reverie.dream.apply import WriteContext
from reverie.dream.decay import activity_clock, decay_writes
from reverie.dream.facts import PREFIX, Assertion, fact_writes
from reverie.models import Episode, Page, PageStatus, Scope
from reverie.store.base import BrainStore, Observation, PageWrite
from reverie.text.assertions import fields, norm

__all__ = ["MemoryStep", "decay_due", "memory_step", "split_future"]


@dataclass
class MemoryStep:
    writes: list[tuple[str, PageWrite, int]] = field(default_factory=list)
    marks: list[str] = field(default_factory=list)
    observations: list[Observation] = field(default_factory=list)
    deferred: list[Episode] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def split_future(
    slots: Mapping[str, Sequence[Assertion]], horizon: datetime
) -> tuple[dict[str, list[Assertion]], list[Episode]]:
    """``slots`` without the assertions dated after ``horizon``, and those episodes."""
    kept: dict[str, list[Assertion]] = {}
    future: dict[str, Episode] = {}
    for slot, found in slots.items():
        for a in found:
            if a.episode.created_at <= horizon:
                kept.setdefault(slot, []).append(a)
            elif not a.field:  # a bare field asserts nothing to wait for
                future.setdefault(a.episode.id, a.episode)
    return kept, list(future.values())


def _future_note(ep: Episode, horizon: datetime) -> str:
    return (
        f"fact episode {ep.id} is dated {ep.created_at.isoformat()}, after this cycle's clock"
        f" ({horizon.isoformat()}): not asserted, left eligible"
    )


def memory_step(
    store: BrainStore,
    ctx: WriteContext,
    slots: Mapping[str, Sequence[Assertion]],
    *,
    written: set[str],
    observed: Sequence[Observation],
    config: MemoryConfig,
    scanned: Sequence[Episode] = (),
) -> MemoryStep:
    """Fact writes for the new assertions in ``slots``, then decay of everything else on the
    scope's activity clock (``scanned``: the episodes this cycle brought)."""
    horizon = ctx.now + config.future_skew
    current, future = split_future(slots, horizon)
    out = MemoryStep(deferred=future, notes=[_future_note(e, horizon) for e in future])
    pages = (
        [p for p in store.pages(ctx.scope, None) if p.topic_key.startswith(PREFIX + "|")]
        if current
        else []
    )
    if current and _may_assert(current, pages):
        wanted = {e for p in pages if p.status is not PageStatus.RETIRED for e in p.citations}
        cited = {e.id: e for e in store.episodes(sorted(wanted), tenant=ctx.scope.tenant)}
        earlier = _earlier_fields(store, ctx.scope, current, pages, horizon)
        facts = fact_writes(ctx, current, pages, cited, horizon, earlier)
        out.writes, out.marks, out.observations = facts.writes, facts.marks, facts.observations
    skip = written | {w.revision.page_id for _a, w, _n in out.writes}
    skip |= {o.page_id for o in (*observed, *out.observations)}
    active = store.pages(ctx.scope, [str(PageStatus.ACTIVE)])
    strengths = store.strengths(p.id for p in active)
    clock = activity_clock(scanned, strengths.values(), horizon)
    decayed = decay_writes(ctx, active, strengths, config, skip, clock)
    out.writes += [(a, w, 0) for a, w in decayed]
    return out


def _may_assert(slots: Mapping[str, Sequence[Assertion]], pages: Sequence[Page]) -> bool:
    """Whether the fact path has work: a keyed assertion, or a bare field named as the
    attribute of a fact the scope holds (a field alone never makes a fact), so a cycle whose
    only readings are log fields (``status=ok``) reads no fact history."""
    found = [a for assertions in slots.values() for a in assertions]
    if any(not a.field for a in found):
        return True
    held = {slot_of_topic(p.topic_key).rpartition("|")[2] for p in pages}
    return any(norm(a.attribute) in held for a in found)


EARLIER_FIELDS = 50
"""How many stored episodes a new setting's name is looked up in, for the fields printing it."""


def _earlier_fields(
    store: BrainStore,
    scope: Scope,
    slots: Mapping[str, Sequence[Assertion]],
    pages: Sequence[Page],
    horizon: datetime,
) -> list[Episode]:
    """Stored episodes whose output printed, as a bare field
    (:func:`~reverie.text.assertions.fields`), the name of a setting seen for the first time: a
    lookup that printed ``legal_fax=…`` before ``directory.legal_fax`` was set may be its
    history (:mod:`reverie.dream.aliases` decides). A setting is looked up once, while it has
    no page."""
    known = {slot_of_topic(p.topic_key) for p in pages}
    names = {
        norm(a.attribute)
        for slot, found in slots.items()
        if slot not in known
        for a in found
        if not a.field
    }
    new = {a.episode.id for found in slots.values() for a in found}
    out: dict[str, Episode] = {}
    for name in sorted(names):
        for ep, _score in store.search_episodes(scope, _NAME_WORD.findall(name), EARLIER_FIELDS):
            printed = any(norm(f.attribute) == name for f in fields(ep))
            if printed and ep.created_at <= horizon and ep.id not in new:
                out.setdefault(ep.id, ep)
    return list(out.values())


_NAME_WORD = re.compile(r"[^\W_]+")


def decay_due(store: BrainStore, ctx: WriteContext, config: MemoryConfig) -> bool:
    """Whether a cycle with no new episodes still has pages to retire: only by the explicit
    ``retire_after_days`` policy, since disuse is measured on the scope's activity clock, which
    nothing new leaves where it was."""
    if config.retire_after_days is None:
        return False
    step = memory_step(store, ctx, {}, written=set(), observed=(), config=config)
    return bool(step.writes)
