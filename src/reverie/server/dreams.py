"""Dreams started over HTTP run in the background, one at a time per scope.

``POST /v1/dreams`` names the cycle id up front and returns at once; a worker thread runs the
cycle through the facade. Within this process a second request for a scope whose cycle is still
running is refused with 409 and the running cycle's id. Across processes the cycle runs under
the store's per-scope lease when the store has leases (``acquire_lease``; a heartbeat every
TTL/3; released at the end) and the store commits as this runner's lease owner, so a cycle whose
lease another worker took over cannot land; a scope leased elsewhere fails the job with a
conflict. Without leases nothing can be corrupted either (a cycle's commit checks the checkpoint
it read), but a run can be wasted.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from reverie.dream.cycle import new_cycle_id
from reverie.engine import Reverie
from reverie.errors import Conflict
from reverie.models import CycleReport, Scope
from reverie.runtime.heartbeat import Heartbeat

__all__ = ["DreamJob", "DreamRunner"]

log = logging.getLogger("reverie.server")

LEASE_TTL_S = 300.0


@dataclass
class DreamJob:
    """One dream the service started: ``running``, then ``done`` (with its report) or ``failed``."""

    cycle_id: str
    scope: Scope
    dry_run: bool
    started_at: datetime
    state: str = "running"
    review: bool = False
    finished_at: datetime | None = None
    report: CycleReport | None = None
    error: str | None = None

    def view(self) -> dict[str, Any]:
        return {
            "cycle_id": self.cycle_id,
            "scope": self.scope.key,
            "state": self.state,
            "dry_run": self.dry_run,
            "review": self.review,
            "started_at": self.started_at.isoformat(),
            "finished_at": self.finished_at.isoformat() if self.finished_at else None,
            "report": self.report.model_dump(mode="json") if self.report else None,
            "error": self.error,
        }


class DreamRunner:
    """A small thread pool of dream cycles, with the last ``keep`` jobs remembered."""

    def __init__(self, rv: Reverie, *, workers: int = 2, keep: int = 500) -> None:
        self._rv = rv
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="reverie-dream")
        self._lock = threading.Lock()
        self._jobs: dict[str, DreamJob] = {}
        self._running: dict[str, str] = {}
        self._keep = keep
        self._owner = f"reverie-serve:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        rv.store.lease_owner = self._owner  # the commit fence: commits land as this owner

    def start(self, scope: Scope, *, dry_run: bool = False, review: bool = False) -> DreamJob:
        """Queue a cycle for ``scope``; :class:`Conflict` if one is still running there."""
        now = self._rv.now()
        with self._lock:
            busy = self._running.get(scope.key)
            if busy is not None:
                raise Conflict(
                    f"a dream for {scope.key} is already running ({busy}); poll"
                    f" /v1/dreams/{busy} and start another when it is done"
                )
            job = DreamJob(new_cycle_id(now), scope, dry_run, now, review=review)
            self._running[scope.key] = job.cycle_id
            self._remember(job)
        self._pool.submit(self._run, job)
        return job

    def job(self, cycle_id: str) -> DreamJob | None:
        with self._lock:
            return self._jobs.get(cycle_id)

    def jobs(self, scope: Scope) -> list[DreamJob]:
        """This scope's remembered jobs, newest first."""
        with self._lock:
            found = [j for j in self._jobs.values() if j.scope == scope]
        return sorted(found, key=lambda j: j.started_at, reverse=True)

    def wait(self, cycle_id: str, timeout: float = 30.0) -> DreamJob | None:
        """Block until the job is no longer running (tests, graceful shutdown)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            job = self.job(cycle_id)
            if job is None or job.state != "running":
                return job
            threading.Event().wait(0.02)
        return self.job(cycle_id)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=False)

    def _remember(self, job: DreamJob) -> None:
        self._jobs[job.cycle_id] = job
        while len(self._jobs) > self._keep:
            oldest = next(iter(self._jobs))
            if self._jobs[oldest].state == "running":
                break
            del self._jobs[oldest]

    def _run(self, job: DreamJob) -> None:
        try:
            with self._lease(job.scope):
                report = self._rv.dream(
                    job.scope, dry_run=job.dry_run, cycle_id=job.cycle_id, review=job.review
                )
        except Exception as exc:  # a failed cycle changed nothing; report it, keep serving
            log.warning("dream %s for %s failed: %s", job.cycle_id, job.scope, exc)
            self._finish(job, "failed", None, f"{type(exc).__name__}: {exc}")
        else:
            self._finish(job, "done", report, None)

    @contextmanager
    def _lease(self, scope: Scope) -> Iterator[None]:
        """Hold the store's lease on ``scope`` while dreaming."""
        store, clock = self._rv.store, self._rv.clock
        lease = store.acquire_lease(scope, self._owner, LEASE_TTL_S, clock())
        if lease is None:
            raise Conflict(f"another worker holds the dream lease of {scope.key}; try later")
        beat = Heartbeat(store, lease, LEASE_TTL_S, clock)
        try:
            with beat:
                yield
        finally:
            if beat.lost:  # the cycle's commit was fenced by the checkpoint
                log.warning("dream lease of %s lost to another holder", scope.key)
            store.release_lease(beat.lease)

    def _finish(
        self, job: DreamJob, state: str, report: CycleReport | None, error: str | None
    ) -> None:
        with self._lock:
            job.state, job.report, job.error = state, report, error
            job.finished_at = self._rv.now()
            self._running.pop(job.scope.key, None)
