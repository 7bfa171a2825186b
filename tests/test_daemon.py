"""``reverie daemon`` as real processes on one database (a SQLite file, a PostgreSQL schema):
leases and the schedule's rows keep scopes apart, and a daemon killed with SIGKILL mid-cycle is
recovered by another, with every DESIGN invariant intact."""

from __future__ import annotations

import itertools
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from reverie import Reverie
from reverie.bench.crash import Observed, check_store
from reverie.models import Scope
from reverie.runtime.daemon import load_schedules
from reverie.runtime.schedule import ScheduleConfig
from tests.pg import schema_url

SCOPES = ["acme/a", "acme/b", "acme/c"]
CLI = "from reverie.cli.app import main; main()"


@pytest.fixture(params=["sqlite", "postgres"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The database the daemons share: a file, or a fresh PostgreSQL schema."""
    if request.param == "sqlite":
        yield str(tmp_path / "brain.db")
        return
    with schema_url() as url:
        yield url


class Daemon:
    """A ``reverie daemon --events`` child whose JSON events are read on a thread."""

    def __init__(self, db: str, owner: str, *args: str) -> None:
        cmd = [sys.executable, "-c", CLI, "--db", db, "daemon", "--events", "--owner", owner]
        cmd += ["--interval", "none", "--min-new", "1", "--max-sleep", "0.05", *args]
        self.owner = owner
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.events: queue.Queue[dict[str, Any]] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith("{"):
                self.events.put(json.loads(line))

    def wait_for(self, event: str, timeout: float = 30.0, **match: Any) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                e = self.events.get(timeout=0.1)
            except queue.Empty:
                continue
            self.seen.append(e)
            if e["event"] == event and all(e.get(k) == v for k, v in match.items()):
                return e
        raise AssertionError(f"{self.owner}: no {event} {match} in {timeout}s; saw {self.seen}")

    def drain(self) -> list[dict[str, Any]]:
        while not self.events.empty():
            self.seen.append(self.events.get())
        return self.seen

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(timeout=30)
        self.close()
        return code

    def close(self) -> None:
        """After the process ended: let the reader reach EOF, close the pipe, keep the events."""
        self.reader.join(timeout=10)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self.drain()


@contextmanager
def daemons(*items: Daemon) -> Iterator[None]:
    try:
        yield
    finally:
        for d in items:
            if d.proc.poll() is None:
                d.proc.kill()
                d.proc.wait()
            d.close()


def _episodes(scope: str, start: int, n: int) -> list[dict[str, Any]]:
    return [
        {
            "id": f"{scope.replace('/', '-')}-{start + i}",
            "scope": scope,
            "situation": f"deploying build {start + i} to staging",
            "action": "kubectl apply",
            "outcome": "failure",
            "error": "TimeoutError: timed out",
            "category": "deploy",
            "tools": ["kubectl"],
            "importance": 8,
        }
        for i in range(n)
    ]


def _has_worked(d: Daemon) -> bool:
    return any(e["event"] == "dreamed" for e in d.drain())


def _intervals(events: list[dict[str, Any]]) -> dict[str, list[tuple[datetime, datetime, str]]]:
    """Per scope, (start, end, owner) of every run an owner began and finished."""
    open_runs: dict[tuple[str, str], datetime] = {}
    runs: dict[str, list[tuple[datetime, datetime, str]]] = {}
    for e in sorted(events, key=lambda e: e["at"]):
        key = (e["owner"], e.get("scope") or "")
        if e["event"] == "started":
            open_runs[key] = datetime.fromisoformat(e["at"])
        elif e["event"] in ("dreamed", "failed") and key in open_runs:
            start = open_runs.pop(key)
            runs.setdefault(key[1], []).append((start, datetime.fromisoformat(e["at"]), key[0]))
    return runs


def _check_invariants(db: str, acked: set[str]) -> None:
    with Reverie.open(db) as rv:
        store: Any = rv.store
        for key in SCOPES:
            scope = Scope.parse(key)
            seen = Observed(acked={a for a in acked if a.startswith(key.replace("/", "-"))})
            assert check_store(store, scope, seen) == []
            marks = [e.consolidated_in for e in store.recent_episodes(scope, 10_000)]
            assert all(marks), f"{key}: an eligible episode was never consolidated"


def test_two_daemons_never_dream_one_scope_at_once(db: str) -> None:
    acked: set[str] = set()
    with Reverie.open(db) as rv:
        for scope in SCOPES:
            rv.ingest(_episodes(scope, 0, 5))
            acked |= {f"{scope.replace('/', '-')}-{i}" for i in range(5)}
        a = Daemon(db, "A", "--hold", "0.15", "--lease-ttl", "5")
        b = Daemon(db, "B", "--hold", "0.15", "--lease-ttl", "5")
        with daemons(a, b):
            deadline = time.monotonic() + 60  # a loaded machine starts one daemon late
            round_no = 0
            while round_no < 7 or not (_has_worked(a) and _has_worked(b)):
                if time.monotonic() > deadline:
                    break
                round_no += 1  # keep every scope due for a while
                time.sleep(0.35)
                for scope in SCOPES:
                    rows = _episodes(scope, round_no * 10, 3)
                    rv.ingest(rows)
                    acked |= {r["id"] for r in rows}
            time.sleep(1.5)
            assert a.stop() == 0 and b.stop() == 0  # SIGTERM: a clean stop
    events = a.drain() + b.drain()
    runs = _intervals(events)
    assert sum(len(r) for r in runs.values()) >= len(SCOPES)
    assert {owner for r in runs.values() for *_t, owner in r} == {"A", "B"}  # both worked
    for scope, spans in runs.items():
        spans.sort()
        for (_s1, end1, o1), (start2, _e2, o2) in itertools.pairwise(spans):
            assert end1 <= start2, f"{scope}: {o1} and {o2} overlapped"
    assert [e["event"] for e in events if e["event"] == "stopped"] == ["stopped", "stopped"]
    _check_invariants(db, acked)


def test_a_daemon_killed_mid_cycle_is_recovered_by_another(db: str) -> None:
    with Reverie.open(db) as rv:
        rv.ingest(_episodes(SCOPES[0], 0, 6))
    acked = {f"acme-a-{i}" for i in range(6)}
    ttl = ["--lease-ttl", "1.5", "--scope", SCOPES[0]]
    a = Daemon(db, "A", "--hold", "30", *ttl)
    b: Daemon | None = None
    with daemons(a):
        a.wait_for("phase", phase="distill")  # A holds the lease and is mid-cycle
        b = Daemon(db, "B", *ttl)
        with daemons(b):
            b.wait_for("busy", timeout=20)  # B sees the scope leased
            os.kill(a.proc.pid, signal.SIGKILL)
            a.proc.wait()
            killed_at = time.monotonic()
            started = b.wait_for("started", timeout=20)
            assert started["crashed"] is True  # B saw A's run die and counts it as a failure
            assert time.monotonic() - killed_at < 10  # taken over after the TTL, not hours
            done = b.wait_for("dreamed", timeout=20)
            assert done["marked"] == 6
            assert b.stop() == 0
    _check_invariants(db, acked)
    with Reverie.open(db) as rv:
        assert len(rv.cycles(SCOPES[0])) == 1  # the killed cycle committed nothing
        store = rv.store
        record = store.schedule_record(Scope.parse(SCOPES[0]), datetime.now().astimezone())
        assert record.failures == 0 and record.last_status == "committed"


def test_schedule_file(tmp_path: Path) -> None:
    path = tmp_path / "schedule.toml"
    path.write_text(
        '[default]\ninterval = "6h"\nmin_new_episodes = 20\ngate = "or"\nmin_hours = 12\n\n'
        '[scopes."acme/coder"]\ninterval = "none"\ncron = "30 2 * * *"\nmoon = ["full"]\n'
    )
    schedules = load_schedules(path)
    assert schedules.default.min_new_episodes == 20 and schedules.default.gate == "or"
    coder = schedules.of(Scope.parse("acme/coder"))
    assert coder.interval is None and coder.cron == "30 2 * * *" and coder.moon == ("full",)
    assert coder.min_new_episodes == 20  # inherited from [default]
    assert schedules.of(Scope.parse("acme/other")) == schedules.default
    assert isinstance(schedules.default, ScheduleConfig)
