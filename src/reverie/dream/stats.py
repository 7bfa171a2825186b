"""Cumulative dream statistics: completed cycles counted in their commit, failed ones after.

A committed cycle adds its :class:`~reverie.store.base.CycleTally` (model calls, cache hits,
tokens, seconds, episodes) inside its own transaction (``Changeset.tally``, built by
:mod:`reverie.dream.cycle`), so the stats can never count a cycle that did not land.

A **failed** cycle has no transaction to join: :class:`TalliedCycle` records it with a separate
small write (:meth:`~reverie.store.base.Stats.record_tally`) *after* the failure —

a cycle that raised (a store error, a lost lease, a crash of the distiller). Its model usage is
what the distiller still holds (:class:`~reverie.llm.protocol.MeteredDistiller`); usage already
copied into the lost report is not known. A lost race (:class:`~reverie.errors.Conflict`) is not
a failure: the engine dreams again on the new state, and the model answers are cached.

A cycle whose every plan was rejected is *not* recorded: it did not fail (its report says what
was rejected and why), and an invalid plan must leave the store byte-identical.

Recording a failure never hides the failure: if the write itself fails, it is logged and the
original error propagates. Dry runs and cycles with nothing to do are not counted.
"""

from __future__ import annotations

import logging
import time
from datetime import datetime
from typing import Any

from reverie.dream.cycle import DreamCycle
from reverie.errors import Conflict
from reverie.llm.protocol import MeteredDistiller, ModelUsage
from reverie.models import CycleReport, Scope
from reverie.store.base import BrainStore, CycleTally

__all__ = ["TalliedCycle"]

log = logging.getLogger("reverie")


def _raised_tally(
    scope: Scope, now: datetime, exc: BaseException, distiller: object, duration_s: float
) -> CycleTally:
    usage = distiller.take_usage() if isinstance(distiller, MeteredDistiller) else ModelUsage()
    return CycleTally(
        scope,
        now,
        failed=True,
        duration_s=duration_s,
        error=f"{type(exc).__name__}: {exc}"[:500],
        model_calls=usage.calls,
        cache_hits=usage.cache_hits,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
    )


def _record(store: BrainStore, tally: CycleTally) -> None:
    try:
        store.record_tally(tally)
    except Exception as exc:  # the stats must never mask what went wrong
        log.warning("could not record a failed cycle of %s: %s", tally.scope.key, exc)


class TalliedCycle(DreamCycle):
    """A :class:`DreamCycle` that also counts its failures (see the module docstring)."""

    def run(self, scope: Scope, now: datetime, **options: Any) -> CycleReport:
        started = time.perf_counter()
        try:
            report = super().run(scope, now, **options)
        except Conflict:
            raise  # a lost race: dreamed again by the engine, not a failure
        except Exception as exc:
            elapsed = time.perf_counter() - started
            _record(self.store, _raised_tally(scope, now, exc, self.distiller, elapsed))
            raise
        return report
