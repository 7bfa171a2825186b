"""Flood: one API key floods the HTTP service while another key's recalls are timed.

The service runs as its own process (``reverie serve``) over a brain of 2,000 synthetic
episodes, dreamt once.
For each limit setting (``on``, then ``off``) the bench times the victim key's recalls alone
(the baseline), then again while a flooder process hammers recall with many connections under
another key. The ratio of the victim's p99 under the flood to its p99 alone is the figure: with
per-key limits the flood is answered 429 before any recall work, so the ratio stays near 1;
without them it shows what one key can do to every other.

``python -m reverie.bench.flood URL TOKEN SECONDS CONNECTIONS`` runs the flooder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from reverie.bench.core import percentile
from reverie.bench.synth import synthetic_episodes, synthetic_queries
from reverie.engine import Reverie

__all__ = ["FloodPhase", "FloodResult", "run_flood"]

SCOPE = "acme/bench"
EPISODES = 2000
_CPUS = frozenset(os.sched_getaffinity(0))
QUERIES = tuple(synthetic_queries(50, seed=7))


@dataclass
class FloodPhase:
    """The victim's latencies in one phase, and what the flooder got meanwhile."""

    limits: str
    flood: bool
    p50_ms: float
    p99_ms: float
    victim_errors: int
    flood_statuses: dict[str, int] = field(default_factory=dict)


@dataclass
class FloodResult:
    samples: int
    connections: int
    phases: list[FloodPhase] = field(default_factory=list)

    def ratio(self, limits: str) -> float:
        """Victim p99 under the flood over victim p99 alone, for one limit setting."""
        quiet = next(p for p in self.phases if p.limits == limits and not p.flood)
        loud = next(p for p in self.phases if p.limits == limits and p.flood)
        return loud.p99_ms / quiet.p99_ms if quiet.p99_ms else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "samples": self.samples,
            "connections": self.connections,
            "phases": [vars(p) for p in self.phases],
            "p99_ratio": {limits: self.ratio(limits) for limits in ("on", "off")},
        }


def _seed(db: Path) -> tuple[str, str]:
    rv = Reverie.open(db)
    try:
        rv.ingest({**row, "scope": SCOPE} for row in synthetic_episodes(EPISODES))
        rv.dream(SCOPE)
        victim = rv.keys.create("acme", rights="read", name="victim")[1]
        flooder = rv.keys.create("acme", rights="read", name="flooder")[1]
    finally:
        rv.close()
    return victim, flooder


def _free_port() -> int:
    import socket  # noqa: PLC0415 (only the bench opens sockets)

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _serve(db: Path, limits: str, port: int) -> subprocess.Popen[bytes]:
    spec = "on" if limits == "on" else "off"
    args = ["--db", str(db), "serve", "--port", str(port), "--no-dream"]
    args += ["--rate-limit", spec, "--log-level", "warning"]
    code = "from reverie.cli.app import main; main()"
    proc = subprocess.Popen([sys.executable, "-c", code, *args], stderr=subprocess.DEVNULL)
    _pin(proc.pid, flooder=False)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/health", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.125)
    proc.kill()
    raise RuntimeError("reverie serve did not start within 30 s")


def _pin(pid: int, *, flooder: bool) -> None:
    """The server and the victim (which waits while the server works) share the first CPU and
    the flooder gets the others, where the machine has more than one: the flooder's own client
    work then cannot slow the server, only its requests can."""
    cpus = sorted(_CPUS)
    if len(cpus) > 1:
        os.sched_setaffinity(pid, cpus[1:] if flooder else cpus[:1])


def _recall_body(i: int) -> dict[str, Any]:
    return {"scope": SCOPE, "query": QUERIES[i % len(QUERIES)], "budget_tokens": 200}


def _victim(url: str, token: str, samples: int) -> tuple[list[float], int]:
    """``samples`` recalls one after another, paced like a busy agent between steps (at most
    eight a second, within the default read rate of ten)."""
    timings: list[float] = []
    errors = 0
    with httpx.Client(base_url=url, headers={"X-API-Key": token}, timeout=30) as client:
        for i in range(samples):
            start = time.perf_counter()
            answer = client.post("/v1/recall", json=_recall_body(i))
            timings.append((time.perf_counter() - start) * 1000)
            errors += answer.status_code != 200
            time.sleep(0.125)
    return timings, errors


def _phase(
    url: str, victim: str, flooder: str | None, samples: int, connections: int
) -> FloodPhase:
    proc = None
    if flooder is not None:
        seconds = str(60 + samples)  # outlives the victim's run; stopped when it ends
        cmd = [sys.executable, "-m", "reverie.bench.flood", url, flooder, seconds, str(connections)]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE)
        _pin(proc.pid, flooder=True)
        time.sleep(1.0)  # the flood is at full rate before the victim starts
    timings, errors = _victim(url, victim, samples)
    statuses: dict[str, int] = {}
    if proc is not None:
        proc.terminate()
        out, _ = proc.communicate(timeout=30)
        statuses = json.loads(out.decode() or "{}")
    return FloodPhase(
        limits="",
        flood=flooder is not None,
        p50_ms=round(percentile(timings, 50), 2),
        p99_ms=round(percentile(timings, 99), 2),
        victim_errors=errors,
        flood_statuses=statuses,
    )


def run_flood(workdir: Path, *, samples: int = 300, connections: int = 8) -> FloodResult:
    """The victim's p99 alone and under a flood, with per-key limits on and off."""
    db = workdir / "brain.db"
    victim, flooder = _seed(db)
    _pin(os.getpid(), flooder=False)
    try:
        return _measure(db, victim, flooder, samples, connections)
    finally:
        os.sched_setaffinity(0, _CPUS)


def _measure(db: Path, victim: str, flooder: str, samples: int, connections: int) -> FloodResult:
    result = FloodResult(samples=samples, connections=connections)
    for limits in ("on", "off"):
        port = _free_port()
        server = _serve(db, limits, port)
        url = f"http://127.0.0.1:{port}"
        try:
            _victim(url, victim, 20)  # warm the server's caches before anything is timed
            for flood in (False, True):
                phase = _phase(url, victim, flooder if flood else None, samples, connections)
                phase.limits = limits
                result.phases.append(phase)
        finally:
            server.terminate()
            server.wait(timeout=30)
    return result


def _flood(url: str, token: str, seconds: float, connections: int) -> Counter[str]:
    stop = time.monotonic() + seconds
    counts: Counter[str] = Counter()
    lock = threading.Lock()

    def hammer() -> None:
        with httpx.Client(base_url=url, headers={"X-API-Key": token}, timeout=30) as client:
            i = 0
            while time.monotonic() < stop:
                try:
                    status = str(client.post("/v1/recall", json=_recall_body(i)).status_code)
                except httpx.HTTPError as exc:
                    status = type(exc).__name__
                with lock:
                    counts[status] += 1
                i += 1

    threads = [threading.Thread(target=hammer, daemon=True) for _ in range(connections)]
    for thread in threads:
        thread.start()
    _report_on_terminate(counts, lock)
    for thread in threads:
        thread.join()
    return counts


def _report_on_terminate(counts: Counter[str], lock: threading.Lock) -> None:
    import signal  # noqa: PLC0415 (only the flooder process handles signals)

    def report(_signum: int, _frame: object) -> None:
        with lock:
            sys.stdout.write(json.dumps(dict(counts)))
        sys.stdout.flush()
        os._exit(0)

    signal.signal(signal.SIGTERM, report)


if __name__ == "__main__":
    _url, _token, _seconds, _connections = sys.argv[1:5]
    print(json.dumps(dict(_flood(_url, _token, float(_seconds), int(_connections)))))
