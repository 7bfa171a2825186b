"""The extractive fallback: a group a model keeps failing on is distilled without the model.

A plan the validator rejects changes no byte of the store and leaves its group eligible, so the
next cycle asks again. That is right for a model that slipped once; a model that keeps answering
plans that must be rejected (one claim per episode past a page's claim limit, citations it
invents) would leave the group eligible forever and be paid for it every cycle. Counting
rejections would mean writing on rejection, which "an invalid plan changes no byte" forbids.
What needs no new state is how long the group has been waiting: once its first episode was
stored (``inserted_at``, the ingest clock's time, not the episode's own ``created_at``, so a
history imported today is not "old") at least ``DreamConfig.fallback_after_days`` before the
cycle's ``now``, a rejected plan — or a model that refuses the group — is replaced by the
:class:`~reverie.dream.distill.ExtractiveDistiller`'s plan for the same group. That plan is
validated like any other (every line cited), and the cycle report lists the group under
``fallbacks`` with what was wrong with the model's plan (``reverie report CYCLE`` shows it).
"""

from __future__ import annotations

from datetime import timedelta

from reverie.config import DreamConfig
from reverie.dream.distill import ExtractiveDistiller
from reverie.models import utc
from reverie.models.plan import Distiller, Evidence
from reverie.store.base import BrainStore

__all__ = ["fallback_due"]


def fallback_due(
    store: BrainStore, evidence: Evidence, distiller: Distiller, config: DreamConfig
) -> bool:
    """Whether a rejected plan for ``evidence`` is to be replaced by the extractive one."""
    after = config.fallback_after_days
    if after is None or isinstance(distiller, ExtractiveDistiller) or not evidence.episodes:
        return False
    first = store.first_stored((e.id for e in evidence.episodes), tenant=evidence.scope.tenant)
    return first is not None and utc(evidence.now) - utc(first) >= timedelta(days=after)
