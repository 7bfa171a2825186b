"""Reinforcement and decay: forgetting follows evidence, not the calendar (docs/memory.md).

*Reinforcement.* A cycle whose evidence re-observes a page's pattern — a valid plan creates,
revises or merges into it, or its topic's group arrives and the page is shown — records an
:class:`~reverie.store.base.Observation` (episodes, latest evidence time) in the cycle's
transaction. A page's :class:`~reverie.store.base.Strength` sums the rows of cycles not undone.

*The activity clock.* Disuse is measured on the scope's own clock, never on the cycle's ``now``:
the newest ``created_at`` of the experience this cycle brought (its scanned episodes) and of the
evidence its active pages were last observed with, ignoring anything dated after the horizon
(``now`` plus ``MemoryConfig.future_skew_s``). A cycle with no new experience has no clock, and
nothing decays: a brain whose history was imported a year late, or that sat idle for a year, has
lost no time. Time since the scope last saw a page's kind of situation counts; wall-clock time
alone does not.

*Decay* is a pure function of the page, its strength and the clock::

    half_life = base * (1 + log2(cycles))          base: MemoryConfig.half_life_days, or
                                                   stable_half_life_days for preferences/facts
    decayed   = confidence * 0.5 ** (clock days since last seen / half_life)

*Last seen* is the newest evidence time of the observations (when the page was created if it has
none), or the time of its current revision when a person wrote it (``human`` edits and
``restore`` reaffirm a page), whichever is later.

*Retirement by disuse* needs weak support *and* long disuse: a page backed by at least
``well_supported_episodes`` episodes (its observations, its tallies or its citations, whichever
says most) or observed in ``well_supported_cycles`` distinct cycles is never retired by time; it
ends only by contradiction (a plan's ``SupersedePage``/``RetirePage``, a newer fact run) or by the
explicit ``MemoryConfig.retire_after_days`` policy, off by default, which compares *last seen*
with the cycle's ``now``. A weakly supported page is retired once its decayed confidence falls
below ``retire_below``. Decay is never written as a revision: it is evaluated in each cycle with
new experience (and, for the explicit policy only, in any cycle), retiring in the cycle's own
transaction. A retired page keeps every revision, stays readable (``reverie page``, ``why``,
``history``), and ``reverie restore`` brings it back.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

from reverie.config import MemoryConfig
from reverie.dream.apply import WriteContext, next_revision
from reverie.models import Episode, Page, PageKind, PageStatus
from reverie.models.plan import (
    CreatePage,
    Evidence,
    MergePages,
    Plan,
    RetirePage,
    RevisePage,
    SupersedePage,
    page_id_for,
)
from reverie.store.base import Observation, PageWrite, Strength

__all__ = [
    "REAFFIRMING_AUTHORS",
    "activity_clock",
    "decay_writes",
    "decayed_confidence",
    "half_life_days",
    "last_seen",
    "merge_observations",
    "observed",
    "retirement",
    "support",
    "well_supported",
]

DAY_S = 86_400.0
REAFFIRMING_AUTHORS = frozenset({"human", "restore"})
_STABLE = frozenset({PageKind.PREFERENCE, PageKind.FACT})


def observed(evidence: Evidence, plan: Plan) -> list[Observation]:
    """The pages a valid ``plan`` for ``evidence`` re-observes (see the module docstring)."""
    ids: list[str] = []
    ended: set[str] = set()
    for op in plan.operations:
        if isinstance(op, CreatePage):
            ids.append(page_id_for(evidence.scope, op.topic_key))
        elif isinstance(op, RevisePage | MergePages):
            ids.append(op.page_id)
        elif isinstance(op, SupersedePage | RetirePage):
            ended.add(op.page_id)
    ids += [
        p.id
        for p in evidence.pages
        if p.topic_key == evidence.topic_key and p.status is PageStatus.ACTIVE
    ]
    if not evidence.episodes:
        return []
    latest = max(e.created_at for e in evidence.episodes)
    n = len(evidence.episodes)
    return [Observation(i, n, latest) for i in dict.fromkeys(ids) if i not in ended]


def merge_observations(rows: Iterable[Observation]) -> list[Observation]:
    """One row per page (a cycle records a page once): episodes summed, newest time kept."""
    merged: dict[str, Observation] = {}
    for row in rows:
        prior = merged.get(row.page_id)
        merged[row.page_id] = (
            row
            if prior is None
            else Observation(
                row.page_id, prior.episodes + row.episodes, max(prior.last_seen, row.last_seen)
            )
        )
    return list(merged.values())


def half_life_days(kind: PageKind, cycles: int, config: MemoryConfig) -> float:
    base = config.stable_half_life_days if kind in _STABLE else config.half_life_days
    return base * (1 + math.log2(max(cycles, 1)))


def last_seen(page: Page, strength: Strength | None) -> datetime:
    """When the page's pattern was last observed (see the module docstring)."""
    seen = strength.last_seen if strength is not None else page.created_at
    if page.revision.author in REAFFIRMING_AUTHORS:
        seen = max(seen, page.revision.created_at)
    return seen


def support(page: Page, strength: Strength | None) -> tuple[int, int]:
    """``(episodes, distinct cycles)`` backing ``page``: the most its observations, tallies or
    citations say."""
    tallied = page.revision.support.episodes if page.revision.support is not None else 0
    episodes = max(strength.episodes if strength else 0, tallied, len(page.citations))
    return episodes, strength.cycles if strength is not None else 1


def well_supported(page: Page, strength: Strength | None, config: MemoryConfig) -> bool:
    """A page disuse never retires (see the module docstring)."""
    episodes, cycles = support(page, strength)
    return episodes >= config.well_supported_episodes or cycles >= config.well_supported_cycles


def activity_clock(
    episodes: Iterable[Episode], strengths: Iterable[Strength], horizon: datetime
) -> datetime | None:
    """The scope's clock for this cycle; None when the cycle brought no experience."""
    fresh = [e.created_at for e in episodes if e.created_at <= horizon]
    if not fresh:
        return None
    seen = [s.last_seen for s in strengths if s.last_seen <= horizon]
    return max(fresh + seen)


def decayed_confidence(
    page: Page, strength: Strength | None, clock: datetime, config: MemoryConfig
) -> float:
    """The page's confidence after decay at the scope's ``clock`` (never more than it was)."""
    days = max(0.0, (clock - last_seen(page, strength)).total_seconds() / DAY_S)
    cycles = strength.cycles if strength is not None else 1
    half_life = half_life_days(page.kind, cycles, config)
    return float(page.confidence * 0.5 ** (days / half_life))


def _disuse_reason(
    page: Page, strength: Strength | None, clock: datetime, config: MemoryConfig
) -> str | None:
    if not config.decay or well_supported(page, strength, config):
        return None
    value = decayed_confidence(page, strength, clock, config)
    if value >= config.retire_below:
        return None
    episodes, cycles = support(page, strength)
    since = last_seen(page, strength).date().isoformat()
    return (
        f"decayed: weak support ({episodes} episode(s), {cycles} cycle(s)), unobserved since"
        f" {since} while the scope's experience reached {clock.date().isoformat()};"
        f" confidence {page.confidence:.2f} -> {value:.3f} (below {config.retire_below:g})"
    )


def _policy_reason(
    page: Page, strength: Strength | None, now: datetime, config: MemoryConfig
) -> str | None:
    limit = config.retire_after_days
    seen = last_seen(page, strength)
    if limit is None or (now - seen).total_seconds() / DAY_S <= limit:
        return None
    return f"retired by policy: unobserved since {seen.date().isoformat()}, over {limit:g} days"


def retirement(
    page: Page,
    strength: Strength | None,
    clock: datetime | None,
    now: datetime,
    config: MemoryConfig,
) -> str | None:
    """Why ``page`` retires now (disuse on the scope's ``clock``, or the explicit policy at the
    cycle's ``now``), or None when it stays."""
    by_disuse = _disuse_reason(page, strength, clock, config) if clock is not None else None
    return by_disuse or _policy_reason(page, strength, now, config)


def decay_writes(
    ctx: WriteContext,
    pages: Sequence[Page],
    strengths: Mapping[str, Strength],
    config: MemoryConfig,
    skip: set[str],
    clock: datetime | None = None,
) -> list[tuple[str, PageWrite]]:
    """Retire the active pages (not in ``skip``) that :func:`retirement` ends."""
    out = []
    for page in pages:
        if page.status is not PageStatus.ACTIVE or page.id in skip:
            continue
        reason = retirement(page, strengths.get(page.id), clock, ctx.now, config)
        if reason is None:
            continue
        rev = next_revision(ctx, page, status=PageStatus.RETIRED, reason=reason)
        out.append(("retired", PageWrite(ctx.scope, page.topic_key, rev, page.revision.number)))
    return out
