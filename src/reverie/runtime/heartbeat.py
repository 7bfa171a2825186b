"""The one lease heartbeat, for every holder of a dream lease: the HTTP service's dream jobs,
the workers and the scheduler.

While a cycle runs, a thread extends its scope's lease every ``ttl / 3`` seconds, so a holder
that dies stops beating and another takes the scope over once the lease expires. One failure
rule everywhere:

- :class:`~reverie.errors.LeaseLost`: another holder has the scope now. The beat stops and
  :attr:`Heartbeat.lost` is set; the cycle's own commit is fenced by the checkpoint anyway.
- any other error is taken as transient (a busy database, a dropped connection): it is logged
  and the next beat tries again, so the lease lapses only if the store stays unreachable for a
  whole ``ttl``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime

from reverie.errors import LeaseLost, describe
from reverie.store.base import BrainStore, Lease

__all__ = ["Heartbeat"]

log = logging.getLogger("reverie")


class Heartbeat(threading.Thread):
    """Extends ``lease`` in ``store`` until :meth:`stop` or until the lease is lost.

    ``with Heartbeat(store, lease, ttl, clock) as beat: …`` beats while the block runs;
    afterwards :attr:`lease` is the lease as last extended and :attr:`lost` says whether it
    was taken over.
    """

    def __init__(
        self, store: BrainStore, lease: Lease, ttl: float, clock: Callable[[], datetime]
    ) -> None:
        super().__init__(name=f"heartbeat {lease.scope.key}", daemon=True)
        self.store, self.lease, self.ttl, self.clock = store, lease, ttl, clock
        self.lost = False
        self._stopped = threading.Event()

    def run(self) -> None:
        while not self._stopped.wait(self.ttl / 3):
            try:
                self.lease = self.store.heartbeat_lease(self.lease, self.ttl, self.clock())
            except LeaseLost:
                self.lost = True
                return
            except Exception as exc:  # transient: the next beat tries again
                log.warning("heartbeat of %s failed: %s", self.lease.scope.key, describe(exc))

    def stop(self) -> bool:
        """Stop beating; True when the lease was lost meanwhile."""
        self._stopped.set()
        if self.is_alive():
            self.join()
        return self.lost

    def __enter__(self) -> Heartbeat:
        self.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()
