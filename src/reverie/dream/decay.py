"""Reinforcement and decay: knowledge that is not seen again fades, and is retired, not deleted.

*Reinforcement.* A cycle whose evidence re-observes a page's pattern — a valid plan creates,
revises or merges into it, or its topic's group arrives and the page is shown — records an
:class:`~reverie.store.base.Observation` (episodes, latest evidence time) in the cycle's
transaction. A page's :class:`~reverie.store.base.Strength` sums the rows of cycles not undone.

*Decay* is a pure function of the page, its strength and ``now`` (the cycle's time)::

    half_life = base * (1 + log2(cycles))          base: MemoryConfig.half_life_days, or
                                                   stable_half_life_days for preferences/facts
    decayed   = confidence * 0.5 ** (days since last seen / half_life)

*Last seen* is the newest evidence time of the observations (when the page was created if it has
none), or the time of its current revision when a person wrote it (``human`` edits and
``restore`` reaffirm a page), whichever is later.
Decay is never written as a revision: each cycle — including one with no new episodes — retires,
in its own transaction, every active page not observed by it whose decayed confidence is below
``MemoryConfig.retire_below``. A retired page keeps every revision, stays readable
(``reverie page``, ``why``, ``history``), and ``reverie restore`` brings it back.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

from reverie.config import MemoryConfig
from reverie.dream.apply import WriteContext, _next
from reverie.dream.plan import (
    CreatePage,
    Evidence,
    MergePages,
    Plan,
    RetirePage,
    RevisePage,
    SupersedePage,
    page_id_for,
)
from reverie.models import Page, PageKind, PageStatus
from reverie.store.base import Observation, PageWrite, Strength

__all__ = [
    "REAFFIRMING_AUTHORS",
    "decay_writes",
    "decayed_confidence",
    "half_life_days",
    "last_seen",
    "merge_observations",
    "observed",
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


def decayed_confidence(
    page: Page, strength: Strength | None, now: datetime, config: MemoryConfig
) -> float:
    """The page's confidence after decay at ``now`` (never more than it was)."""
    days = max(0.0, (now - last_seen(page, strength)).total_seconds() / DAY_S)
    cycles = strength.cycles if strength is not None else 1
    half_life = half_life_days(page.kind, cycles, config)
    return float(page.confidence * 0.5 ** (days / half_life))


def decay_writes(
    ctx: WriteContext,
    pages: Sequence[Page],
    strengths: Mapping[str, Strength],
    config: MemoryConfig,
    skip: set[str],
) -> list[tuple[str, PageWrite]]:
    """Retire the active pages (not in ``skip``) whose decayed confidence fell below the floor."""
    if not config.decay:
        return []
    out = []
    for page in pages:
        if page.status is not PageStatus.ACTIVE or page.id in skip:
            continue
        strength = strengths.get(page.id)
        value = decayed_confidence(page, strength, ctx.now, config)
        if value >= config.retire_below:
            continue
        since = last_seen(page, strength).date().isoformat()
        reason = (
            f"decayed: unobserved since {since}, confidence {page.confidence:.2f} ->"
            f" {value:.3f} (below {config.retire_below:g})"
        )
        rev = _next(ctx, page, status=PageStatus.RETIRED, reason=reason)
        out.append(("retired", PageWrite(ctx.scope, page.topic_key, rev, page.revision.number)))
    return out
