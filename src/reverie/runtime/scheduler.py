"""Dreaming on its own: an asyncio scheduler an agent starts in-process, and ``reverie daemon``.

Each pass asks :func:`reverie.runtime.schedule.next_due` about every scope (the state comes
from the store, :mod:`reverie.store.sql.schedule`), runs the scopes that are due one after
another, then sleeps until the earliest next due time (at most ``max_sleep``) or until
:meth:`Scheduler.stop`.

* **Never blocks the agent.** :meth:`Scheduler.start` only creates a task; every store call and
  every cycle runs in a worker thread (``asyncio.to_thread``), so the agent's event loop keeps
  serving while a cycle runs.
* **Catch-up.** A slot missed while no scheduler ran is caught up once, after a random jitter
  (``ScheduleConfig.jitter``) so a fleet of agents restarting together does not dream at once —
  or recorded as skipped with ``catch_up = false``.
* **Leases.** A run holds the scope's lease (:meth:`reverie.store.base.BrainStore.acquire_lease`)
  and heartbeats it every ``lease_ttl / 3``; the store is given the scheduler's identity
  as ``lease_owner``, so a commit under a lease another owner has since taken is refused. A
  scheduler killed mid-cycle stops heartbeating; after ``lease_ttl`` another one takes the scope
  over, sees the run still marked and counts it as a failure (backoff retry), and the checkpoint
  makes the retry exactly-once.
* **No lost, no repeated run.** The slot's start is written when the run is claimed, under the
  lease, with a compare-and-set; the scope's state is re-read after the lease is taken, so a run
  another process just finished is not repeated.
* **Clean stop.** :meth:`Scheduler.stop` lets the running cycle finish, releases its lease and
  returns; no new cycle starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from reverie.engine import Reverie
from reverie.errors import ReverieError
from reverie.models import CycleReport, Scope, ScopeLike
from reverie.runtime.heartbeat import Heartbeat
from reverie.runtime.schedule import Due, ScheduleConfig, ScheduleState, next_due
from reverie.runtime.worker import dreamed, new_owner
from reverie.store.base import BrainStore
from reverie.store.records import ScheduleRecord

__all__ = ["Event", "Scheduler", "Schedules"]

log = logging.getLogger("reverie.runtime.scheduler")
Event = dict[str, Any]


@dataclass(frozen=True)
class Schedules:
    """A default schedule and per-scope overrides; ``scopes`` limits which scopes are run."""

    default: ScheduleConfig = field(default_factory=ScheduleConfig)
    per_scope: Mapping[str, ScheduleConfig] = field(default_factory=dict)
    scopes: tuple[str, ...] | None = None

    def of(self, scope: Scope) -> ScheduleConfig:
        return self.per_scope.get(scope.key, self.default)

    def wants(self, scope: Scope) -> bool:
        return self.scopes is None or scope.key in self.scopes


class Scheduler:
    """Runs ``rv``'s dream cycles on a schedule; see the module docstring.

    ``control`` is a second connection to the same database for leases and schedule state
    (heartbeats then never queue behind a long cycle); by default ``rv.store`` is used.
    ``on_event`` receives one dict per step (``due``, ``skipped``, ``busy``, ``started``,
    ``phase``, ``dreamed``, ``failed``, ``lost``, ``stopped``).
    """

    def __init__(  # noqa: PLR0913 (public constructor: keyword-only options)
        self,
        rv: Reverie,
        schedules: Schedules | ScheduleConfig | None = None,
        *,
        scopes: list[ScopeLike] | None = None,
        control: BrainStore | None = None,
        owner: str | None = None,
        lease_ttl: float = 60.0,
        max_sleep: float = 60.0,
        clock: Callable[[], datetime] | None = None,
        rng: random.Random | None = None,
        on_event: Callable[[Event], None] | None = None,
    ) -> None:
        if isinstance(schedules, ScheduleConfig) or schedules is None:
            keys = tuple(Scope.parse(s).key for s in scopes) if scopes else None
            schedules = Schedules(default=schedules or ScheduleConfig(), scopes=keys)
        self.rv, self.schedules = rv, schedules
        self.control: BrainStore = control or rv.store
        self.leases = self.control
        self.owner = owner or new_owner()
        self.lease_ttl, self.max_sleep = lease_ttl, max_sleep
        self.clock = clock or rv.clock  # the facade's, unless a test gives its own
        self.rng = rng or random.Random()
        self.on_event = on_event or (lambda _e: None)
        self.reports: list[CycleReport] = []
        self._stopping = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._catch_up: dict[str, datetime] = {}
        rv.store.lease_owner = self.owner  # the commit fence

    # -- lifecycle ----------------------------------------------------------------------------

    async def start(self) -> None:
        """Start in the background and return at once."""
        if self._task is None:
            self._stopping.clear()
            self._task = asyncio.create_task(self._loop(), name=f"reverie scheduler {self.owner}")

    async def stop(self) -> None:
        """Stop cleanly: the running cycle finishes and its lease is released."""
        self._stopping.set()
        if self._task is not None:
            task, self._task = self._task, None
            await task
        self._emit("stopped", None)

    async def __aenter__(self) -> Scheduler:
        await self.start()
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.stop()

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def _loop(self) -> None:
        first = True
        while not self._stopping.is_set():
            try:
                wake = await self.run_pending(first=first)
            except ReverieError as exc:  # the store is down: log, wait, try again
                log.warning("scheduler pass failed: %s", exc)
                wake = self.clock() + timedelta(seconds=self.max_sleep)
            first = False
            delay = min(max((wake - self.clock()).total_seconds(), 0.0), self.max_sleep)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), timeout=delay)

    # -- one pass -----------------------------------------------------------------------------

    async def run_pending(self, *, first: bool = False) -> datetime:
        """Run every due scope once; return when the next one may be due."""
        now = self.clock()
        records = await asyncio.to_thread(self.control.schedule_records, now)
        wake = now + timedelta(seconds=self.max_sleep)
        for record in records:
            if self._stopping.is_set():
                break
            if not self.schedules.wants(record.scope):
                continue
            at = await self._consider(record, first)
            if at is not None:
                wake = min(wake, at)
        return wake

    async def _consider(self, record: ScheduleRecord, first: bool) -> datetime | None:
        """Run ``record``'s scope if due; return when to look at it again."""
        config = self.schedules.of(record.scope)
        now = self.clock()
        due = next_due(ScheduleState.of(record), config, now)
        if first and due.missed(now, config.grace):
            if not config.catch_up:
                await asyncio.to_thread(
                    self.control.schedule_claim, record, self.owner, now, skip=True
                )
                self._emit("skipped", record.scope, slot=_iso(due.slot))
                return now
            jitter = self.rng.uniform(0.0, config.jitter.total_seconds())
            self._catch_up[record.scope.key] = now + timedelta(seconds=jitter)
            self._emit("catch-up", record.scope, slot=_iso(due.slot), jitter_s=round(jitter, 3))
        hold = self._catch_up.get(record.scope.key)
        if hold is not None and hold > now:
            return hold
        if not due.ready(now):
            return due.at
        self._catch_up.pop(record.scope.key, None)
        await self._run(record.scope, due)
        return self.clock()

    async def _run(self, scope: Scope, due: Due) -> None:
        lease = await asyncio.to_thread(
            self.leases.acquire_lease, scope, self.owner, self.lease_ttl, self.clock()
        )
        if lease is None:
            self._emit("busy", scope)
            return
        beat = Heartbeat(self.leases, lease, self.lease_ttl, self.clock)
        beat.start()
        try:
            await self._claim_and_dream(scope)
        finally:
            if await asyncio.to_thread(beat.stop):
                self._emit("lost", scope)
            else:
                await asyncio.to_thread(self.leases.release_lease, beat.lease)

    async def _claim_and_dream(self, scope: Scope) -> None:
        """Re-read the state under the lease (another process may have just run it), claim, run."""
        now = self.clock()
        record = await asyncio.to_thread(self.control.schedule_record, scope, now)
        due = next_due(ScheduleState.of(record), self.schedules.of(scope), now)
        if not due.ready(now) or not await asyncio.to_thread(
            self.control.schedule_claim, record, self.owner, now
        ):
            self._emit("busy", scope, reason="ran elsewhere")
            return
        self._emit("started", scope, slot=_iso(due.slot), reason=due.reason, crashed=record.crashed)
        try:
            report = await asyncio.to_thread(self.rv.dream, scope, now=self.clock())
        except Exception as exc:  # a failed cycle changed nothing; back off and retry
            message = f"{type(exc).__name__}: {exc}"
            await asyncio.to_thread(self._finish, scope, False, "failed", None, message)
            self._emit("failed", scope, reason=message)
            return
        self.reports.append(report)
        await asyncio.to_thread(
            self._finish, scope, True, str(report.status), report.cycle_id, report.message
        )
        self._emit("dreamed", scope, **dreamed(report))

    def _finish(
        self, scope: Scope, ok: bool, status: str, cycle_id: str | None, message: str
    ) -> None:
        self.control.schedule_finish(
            scope, self.owner, ok=ok, status=status, cycle_id=cycle_id, message=message
        )

    def _emit(self, event: str, scope: Scope | None, **data: Any) -> None:
        self.on_event(
            {
                "event": event,
                "owner": self.owner,
                "scope": scope.key if scope else None,
                "at": self.clock().isoformat(),
                **data,
            }
        )


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None
