"""Four ``reverie worker`` processes against one PostgreSQL database; one killed with SIGKILL.

Every due scope is consolidated, never by two workers at once, no episode twice, and the scope
the killed worker held is taken over once its lease expires.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any

from reverie import Reverie
from tests.conftest import EpisodeFactory
from tests.pg import schema_url

SCOPES = 24
PER_SCOPE = 5
TTL = 2.0


def _worker(url: str, owner: str, hold: float) -> subprocess.Popen[str]:
    exe = Path(sys.executable).with_name("reverie")
    env = {k: v for k, v in os.environ.items() if not k.startswith("REVERIE_")}
    args = [str(exe), "worker", "--url", url, "--owner", owner, "--ttl", str(TTL)]
    args += ["--poll", "0.1", "--until-idle", "--hold", str(hold)]
    return subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )


def _events(output: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


def _first_claim(proc: subprocess.Popen[str], timeout: float = 30) -> dict[str, Any]:
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line.startswith("{") and json.loads(line)["event"] == "claimed":
            return dict(json.loads(line))
    raise AssertionError("the worker claimed nothing")


def _outputs(procs: list[subprocess.Popen[str]], timeout: float) -> list[tuple[str, str]]:
    """Each worker's (stdout, stderr); past ``timeout`` the rest are killed and what each had
    said is the failure message, so a stalled worker shows which scope it waited on."""
    outputs: list[tuple[str, str]] = []
    deadline = time.monotonic() + timeout
    for p in procs:
        try:
            outputs.append(p.communicate(timeout=max(1.0, deadline - time.monotonic())))
        except subprocess.TimeoutExpired:
            for rest in procs[len(outputs) :]:
                rest.kill()
            said = outputs + [rest.communicate() for rest in procs[len(outputs) :]]
            raise AssertionError(f"workers still running after {timeout} s: {said}") from None
    return outputs


def _no_overlap(events: list[dict[str, Any]]) -> None:
    """Per scope, each holder's [claimed, released] interval is disjoint from every other's."""
    spans: dict[str, list[tuple[datetime, datetime, str]]] = defaultdict(list)
    opened: dict[tuple[str, str], datetime] = {}
    for e in events:
        at = datetime.fromisoformat(e["at"])
        if e["event"] == "claimed":
            opened[(e["scope"], e["owner"])] = at
        elif e["event"] in ("released", "conflict", "lost"):
            spans[e["scope"]].append((opened.pop((e["scope"], e["owner"])), at, e["owner"]))
    for scope, held in spans.items():
        held.sort()
        for (_s1, end, a), (start, _e2, b) in itertools.pairwise(held):
            assert end <= start, f"{scope} held by {a} and {b} at once"


def test_four_workers_one_killed(make_episode: EpisodeFactory) -> None:
    with schema_url() as url, Reverie.open(url) as rv:
        eps = [
            make_episode(id=f"ep-{s:02d}-{i}", scope=f"acme/agent{s:02d}")
            for s in range(SCOPES)
            for i in range(PER_SCOPE)
        ]
        assert rv.ingest(eps).stored == SCOPES * PER_SCOPE
        victim = _worker(url, "victim", hold=60)
        claim = _first_claim(victim)
        victim.send_signal(signal.SIGKILL)
        victim.communicate(timeout=10)  # reap it and close its pipes
        workers = [_worker(url, f"w{i}", hold=0.05) for i in range(3)]
        outputs = _outputs(workers, timeout=100)
        assert [w.returncode for w in workers] == [0, 0, 0], [err for _o, err in outputs]
        events = sorted(
            (e for out, _err in outputs for e in _events(out)), key=lambda e: str(e["at"])
        )

        stats = rv.status()
        assert stats.episodes == stats.consolidated == SCOPES * PER_SCOPE
        assert rv.store.pending_scopes() == []
        marks: list[int] = []
        for cycle in rv.cycles(limit=1000):
            marks += rv.store.marked(cycle.id)
        assert len(marks) == len(set(marks)) == SCOPES * PER_SCOPE  # none twice

        dreamed = [e["scope"] for e in events if e["event"] == "dreamed" and e["marked"]]
        assert sorted(dreamed) == sorted({e.scope.key for e in eps})  # each scope once
        _no_overlap(events)
        takeover = [e for e in events if e["event"] == "claimed" and e["scope"] == claim["scope"]]
        assert takeover and takeover[0]["token"] == claim["token"] + 1
        assert datetime.fromisoformat(takeover[0]["at"]) >= datetime.fromisoformat(claim["expires"])
        assert len({e["owner"] for e in events if e["event"] == "dreamed"}) >= 2
