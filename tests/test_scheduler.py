"""The in-process asyncio scheduler: catch-up, gates, backoff, restarts, clean stop."""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

from reverie import Reverie
from reverie.models import Scope, now_utc
from reverie.models.plan import Evidence, Plan
from reverie.runtime.schedule import ScheduleConfig, ScheduleState, next_due
from reverie.runtime.scheduler import Event, Scheduler
from reverie.store.sqlite import SQLiteStore
from tests.conftest import EpisodeFactory

SCOPE = Scope.parse("acme/coder")
JITTER, GRACE = timedelta(seconds=0.2), timedelta(seconds=1)


def _brain(path: Path, make: EpisodeFactory, n: int = 4, **kw: Any) -> Reverie:
    rv = Reverie.open(path, **kw)
    rv.ingest([make() for _ in range(n)])
    return rv


def _ran_before(store: SQLiteStore, ago: timedelta) -> None:
    """Pretend a scheduler ran this scope ``ago``, successfully."""
    then = now_utc() - ago
    record = store.schedule_record(SCOPE, then)
    assert store.schedule_claim(record, "earlier", then)
    store.schedule_finish(SCOPE, "earlier", ok=True, status="committed", cycle_id=None, message="")


async def _run_for(scheduler: Scheduler, seconds: float) -> float:
    """Start, let it work ``seconds``, stop; return how long ``start`` took."""
    began = time.perf_counter()
    await scheduler.start()
    started_in = time.perf_counter() - began
    await asyncio.sleep(seconds)
    await scheduler.stop()
    return started_in


def _released(store: SQLiteStore) -> bool:
    """The scheduler gave the lease back: another owner can take it at once."""
    return store.acquire_lease(SCOPE, "someone-else", 5.0, now_utc()) is not None


def _events() -> tuple[list[Event], Any]:
    seen: list[Event] = []
    return seen, seen.append


def test_catch_up_runs_once_after_jitter_without_blocking_start(
    tmp_path: Path, make_episode: EpisodeFactory
) -> None:
    with _brain(tmp_path / "b.db", make_episode) as rv:
        assert isinstance(rv.store, SQLiteStore)
        _ran_before(rv.store, timedelta(days=3))  # three daily slots missed
        seen, emit = _events()
        config = ScheduleConfig(interval=timedelta(days=1), jitter=JITTER, grace=GRACE)
        scheduler = Scheduler(rv, config, max_sleep=0.05, on_event=emit)
        started_in = asyncio.run(_run_for(scheduler, 0.8))
        assert started_in < 0.05  # start() only creates the task
        kinds = [e["event"] for e in seen]
        assert kinds.count("catch-up") == 1 and kinds.count("dreamed") == 1  # once, not 3 times
        assert kinds.index("catch-up") < kinds.index("started")
        assert len(scheduler.reports) == 1 and scheduler.reports[0].created == 1
        record = rv.store.schedule_record(SCOPE, now_utc())
        assert record.last_status == "committed" and record.running_owner is None
        assert _released(rv.store)


def test_missed_slot_is_skipped_without_catch_up(
    tmp_path: Path, make_episode: EpisodeFactory
) -> None:
    with _brain(tmp_path / "b.db", make_episode) as rv:
        assert isinstance(rv.store, SQLiteStore)
        _ran_before(rv.store, timedelta(days=3))
        seen, emit = _events()
        config = ScheduleConfig(
            interval=timedelta(days=1), catch_up=False, jitter=JITTER, grace=GRACE
        )
        asyncio.run(_run_for(Scheduler(rv, config, max_sleep=0.05, on_event=emit), 0.4))
        assert [e["event"] for e in seen] == ["skipped", "stopped"]
        assert rv.store.schedule_record(SCOPE, now_utc()).last_status == "skipped"


def test_restart_neither_loses_nor_repeats(tmp_path: Path, make_episode: EpisodeFactory) -> None:
    path = tmp_path / "b.db"
    config = ScheduleConfig(interval=timedelta(seconds=2), jitter=JITTER, grace=GRACE)
    with _brain(path, make_episode) as rv:
        first = Scheduler(rv, config, max_sleep=0.05)
        asyncio.run(_run_for(first, 0.3))  # never dreamed, episodes pending: due at once
        assert len(first.reports) == 1 and first.reports[0].created == 1
    with Reverie.open(path) as rv:  # "restarted" right after the run: not due again yet
        again = Scheduler(rv, config, max_sleep=0.05)
        asyncio.run(_run_for(again, 0.2))
        assert again.reports == []
        assert len(rv.cycles(SCOPE)) == 1
        later = Scheduler(rv, config, max_sleep=0.05)
        asyncio.run(_run_for(later, 2.2))  # the next slot is not lost
        assert len(later.reports) >= 1


class Broken:
    name = "broken"

    def distill(self, evidence: Evidence) -> Plan:
        raise RuntimeError("model endpoint down")


def test_failed_cycle_backs_off(tmp_path: Path, make_episode: EpisodeFactory) -> None:
    with _brain(tmp_path / "b.db", make_episode, distiller=Broken()) as rv:
        assert isinstance(rv.store, SQLiteStore)
        _ran_before(rv.store, timedelta(hours=2))
        seen, emit = _events()
        config = ScheduleConfig(interval=timedelta(hours=1), jitter=JITTER, grace=GRACE)
        asyncio.run(_run_for(Scheduler(rv, config, max_sleep=0.05, on_event=emit), 0.6))
        assert [e["event"] for e in seen if e["event"] in ("failed", "dreamed")] == ["failed"]
        record = rv.store.schedule_record(SCOPE, now_utc())
        assert record.failures == 1 and record.last_status == "failed"
        assert "model endpoint down" in (record.last_message or "")
        due = next_due(ScheduleState.of(record), config, now_utc())
        assert record.last_run is not None
        assert due.at == record.last_run + timedelta(minutes=15)  # interval / 4
        assert rv.store.checkpoint(SCOPE) == 0  # nothing was applied


def test_episode_gate_waits_then_runs(tmp_path: Path, make_episode: EpisodeFactory) -> None:
    with _brain(tmp_path / "b.db", make_episode, n=3) as rv:
        config = ScheduleConfig(
            interval=None,
            min_new_episodes=5,
            recheck=timedelta(seconds=0.1),
            jitter=JITTER,
            grace=GRACE,
        )
        scheduler = Scheduler(rv, config, max_sleep=0.05)

        async def scenario() -> None:
            await scheduler.start()
            await asyncio.sleep(0.3)
            assert scheduler.reports == []  # 3 pending < 5
            await asyncio.to_thread(rv.ingest, [make_episode() for _ in range(2)])
            await asyncio.sleep(0.5)
            await scheduler.stop()

        asyncio.run(scenario())
        assert len(scheduler.reports) == 1 and scheduler.reports[0].episodes_marked == 5


def test_stop_waits_for_the_running_cycle(tmp_path: Path, make_episode: EpisodeFactory) -> None:
    phases: list[str] = []

    def slow(name: str) -> None:
        phases.append(name)
        if name == "distill":
            time.sleep(0.4)

    with _brain(tmp_path / "b.db", make_episode) as opened:
        rv = Reverie(opened.store, on_phase=slow)
        assert isinstance(rv.store, SQLiteStore)
        _ran_before(rv.store, timedelta(days=2))
        config = ScheduleConfig(interval=timedelta(days=1), jitter=timedelta(0), grace=GRACE)
        scheduler = Scheduler(rv, config, max_sleep=0.05)

        async def scenario() -> None:
            await scheduler.start()
            while "distill" not in phases:
                await asyncio.sleep(0.01)
            await scheduler.stop()  # mid-cycle: waits for it, then releases the lease

        asyncio.run(scenario())
        assert not scheduler.running and len(scheduler.reports) == 1
        assert "cycle-recorded" in phases
        assert _released(rv.store)
