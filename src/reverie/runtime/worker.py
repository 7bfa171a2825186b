"""A dream worker: claims due scopes through leases, dreams them, heartbeats, releases.

Run any number of workers, on any number of machines, against one PostgreSQL database (or a few
processes against one SQLite file). Each loop claims up to ``batch`` scopes that have pending
episodes and no live lease (:meth:`reverie.store.base.BrainStore.claim_due`), runs one cycle per
scope through the facade, and releases the lease. While a cycle runs, a heartbeat thread (on its
own connection) extends the lease every ``ttl / 3`` seconds; a worker that dies stops
heartbeating and its scopes are taken over once their leases expire.

Safety does not rest on the leases alone: the worker's store carries its ``lease_owner``, so a
commit to a scope another worker has since taken over is refused, and every commit is a
compare-and-set on the checkpoint and the episode marks (exactly once, DESIGN invariant 1).
A cycle that fails keeps its lease for ``backoff`` seconds instead of releasing it, so a broken
scope is retried later rather than claimed again at once by every worker. One scope's failure is
that scope's alone: the worker goes on with the others, and ``until_idle`` stops once only
scopes that failed in this run are left pending (they wait, with their episodes, for a fix).
"""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from reverie.engine import Reverie
from reverie.errors import Conflict, LeaseLost
from reverie.models import CycleReport
from reverie.runtime.heartbeat import Heartbeat
from reverie.store.base import BrainStore, Lease

__all__ = ["Worker", "WorkerStats", "dreamed", "new_owner"]

Event = dict[str, Any]


def new_owner() -> str:
    """A worker identity unique across machines and restarts: ``host:pid:random``."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


def dreamed(report: CycleReport) -> Event:
    """What a ``dreamed`` event says of the cycle (a worker's and the scheduler's alike)."""
    marked = report.episodes_marked
    return {"cycle": report.cycle_id, "status": str(report.status), "marked": marked}


@dataclass
class WorkerStats:
    claimed: int = 0
    dreamed: int = 0
    marked: int = 0
    conflicts: int = 0
    failures: int = 0
    lost: int = 0
    scopes: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    """Scopes whose last cycle in this run failed, and why."""


class Worker:
    """Dreams due scopes of ``rv``'s store; ``leases`` is a second connection for heartbeats.

    ``on_event`` receives one dict per step (claimed, dreamed, conflict, failed, released) —
    the CLI prints them as JSON lines. ``hold`` sleeps after each claim (demos and tests: it
    stands in for a slow model call).
    """

    def __init__(  # noqa: PLR0913 (public constructor: keyword-only options)
        self,
        rv: Reverie,
        leases: BrainStore,
        *,
        owner: str | None = None,
        ttl: float = 60.0,
        poll: float = 2.0,
        batch: int = 1,
        backoff: float = 300.0,
        hold: float = 0.0,
        clock: Callable[[], datetime] | None = None,
        on_event: Callable[[Event], None] | None = None,
    ) -> None:
        self.rv, self.control, self.leases = rv, leases, leases
        self.owner = owner or new_owner()
        self.ttl, self.poll, self.batch, self.backoff, self.hold = ttl, poll, batch, backoff, hold
        self.clock = clock or rv.clock  # the facade's, unless a test gives its own
        self.on_event = on_event or (lambda _e: None)
        self.stats = WorkerStats()
        rv.store.lease_owner = self.owner  # the commit fence

    def _emit(self, event: str, lease: Lease, **data: Any) -> None:
        self.on_event(
            {
                "event": event,
                "owner": self.owner,
                "scope": lease.scope.key,
                "token": lease.token,
                "at": self.clock().isoformat(),
                **data,
            }
        )

    def run_once(self) -> int:
        """Claim and dream one batch; the number of scopes claimed (0: nothing was due)."""
        claimed = self.leases.claim_due(self.owner, self.ttl, self.clock(), limit=self.batch)
        for lease in claimed:
            self.stats.claimed += 1
            self._emit("claimed", lease, expires=lease.expires_at.isoformat())
            self._work(lease)
        return len(claimed)

    def run(
        self,
        *,
        until_idle: bool = False,
        stop: threading.Event | None = None,
        max_scopes: int | None = None,
    ) -> WorkerStats:
        """Loop until ``stop`` is set; with ``until_idle``, also once no scope is pending."""
        stop = stop or threading.Event()
        while not stop.is_set():
            if max_scopes is not None and self.stats.claimed >= max_scopes:
                break
            claimed = self.run_once()
            if until_idle and not self._pending_but_failed():
                break
            if not claimed:
                stop.wait(self.poll)
        return self.stats

    def _pending_but_failed(self) -> list[str]:
        """Scopes with pending episodes, less those whose cycle failed in this run."""
        return [s.key for s in self.control.pending_scopes() if s.key not in self.stats.failed]

    def _work(self, lease: Lease) -> None:
        beat = Heartbeat(self.leases, lease, self.ttl, self.clock)
        beat.start()
        failed = False
        try:
            if self.hold:
                time.sleep(self.hold)
            self._dream(lease)
        except Conflict as exc:  # another worker got there first: nothing was applied
            self.stats.conflicts += 1
            self._emit("conflict", lease, reason=str(exc))
        except Exception as exc:  # isolation: this scope's failure, never the worker's
            failed = True
            self.stats.failures += 1
            self.stats.failed[lease.scope.key] = reason = f"{type(exc).__name__}: {exc}"
            self._emit("failed", lease, reason=reason)
        finally:
            lost = beat.stop()
        self._finish(beat.lease, lost=lost, failed=failed)

    def _dream(self, lease: Lease) -> None:
        started = self.clock()
        report = self.rv.dream(lease.scope, now=started)
        self.stats.failed.pop(lease.scope.key, None)
        self.stats.dreamed += 1
        self.stats.marked += report.episodes_marked
        self.stats.scopes.append(lease.scope.key)
        self._emit("dreamed", lease, **dreamed(report), started=started.isoformat())

    def _finish(self, lease: Lease, *, lost: bool, failed: bool) -> None:
        if lost:
            self.stats.lost += 1
            self._emit("lost", lease)
            return
        try:
            if failed:  # keep the scope leased for a while: a broken scope is not hot-looped
                self.leases.heartbeat_lease(lease, self.backoff, self.clock())
                self._emit("backoff", lease, seconds=self.backoff)
            else:
                self.leases.release_lease(lease)
                self._emit("released", lease)
        except LeaseLost:
            self.stats.lost += 1
            self._emit("lost", lease)
