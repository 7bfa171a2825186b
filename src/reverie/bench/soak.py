"""Soak: several processes ingest, dream and recall on one SQLite file for a bounded time.

Writers append batches and report every acknowledged id; dreamers run cycles over every pending
scope; recallers query and time themselves. Every process reports each exception it sees by type
and message. Afterwards the harness checks that no error reached a caller (in particular no
"database is locked"), that every acknowledged episode is stored, that the file passes
``PRAGMA integrity_check``, and that no episode was consolidated by a cycle that is not recorded.
It reports recall p50/p99 under that load.

``python -m reverie.bench.soak ROLE DB SECONDS SEED`` runs one process; :func:`run_soak` runs them
all.
"""

from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from reverie.bench.core import percentile
from reverie.bench.processes import communicate_all
from reverie.bench.synth import synthetic_episodes, synthetic_queries
from reverie.engine import Reverie
from reverie.models import Scope
from reverie.store.sqlite import SQLiteStore

__all__ = ["SoakResult", "run_soak"]

SCOPES = ("soak/agent-0", "soak/agent-1")
BATCH = 25


@dataclass
class SoakResult:
    seconds: float
    processes: int
    acked: int = 0
    stored: int = 0
    cycles: int = 0
    recalls: int = 0
    recall_p50_ms: float = 0.0
    recall_p99_ms: float = 0.0
    errors: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.errors and not self.violations


def _writer(rv: Reverie, deadline: float, seed: int) -> None:
    batch = 0
    while time.monotonic() < deadline:
        rows = list(synthetic_episodes(BATCH, seed=seed * 100_000 + batch))
        for row in rows:
            row["scope"] = SCOPES[batch % len(SCOPES)]
        result = rv.ingest(rows)
        if result.errors:
            print(f"error ingest {result.errors[0]}", flush=True)
        print("acked " + " ".join(str(r["id"]) for r in rows), flush=True)
        batch += 1


def _dreamer(rv: Reverie, deadline: float, seed: int) -> None:
    while time.monotonic() < deadline:
        for scope in SCOPES:
            rv.dream(scope)
            print("cycle", flush=True)
        time.sleep(0.05)


def _recaller(rv: Reverie, deadline: float, seed: int) -> None:
    queries = synthetic_queries(50, seed=seed)
    i = 0
    while time.monotonic() < deadline:
        started = time.perf_counter()
        rv.recall(queries[i % len(queries)], SCOPES[i % len(SCOPES)], budget_tokens=300)
        print(f"recall {(time.perf_counter() - started) * 1000:.3f}", flush=True)
        i += 1


ROLES = {"writer": _writer, "dreamer": _dreamer, "recaller": _recaller}


def child(role: str, db: str, seconds: float, seed: int) -> int:
    deadline = time.monotonic() + seconds
    with Reverie.open(db) as rv:
        while time.monotonic() < deadline:
            try:
                ROLES[role](rv, deadline, seed)
            except Exception as exc:  # report, keep going: the harness counts every one
                print(f"error {role} {type(exc).__name__}: {exc}", flush=True)
    return 0


def _collect(
    procs: list[subprocess.Popen[str]], result: SoakResult
) -> tuple[set[str], list[float]]:
    acked: set[str] = set()
    latencies: list[float] = []
    for out, _ in communicate_all(procs):
        for line in out.splitlines():
            word, _, rest = line.partition(" ")
            if word == "acked":
                acked.update(rest.split())
            elif word == "recall":
                latencies.append(float(rest))
            elif word == "cycle":
                result.cycles += 1
            elif word == "error":
                result.errors.append(rest)
    return acked, latencies


def _verify(db: Path, acked: set[str], result: SoakResult) -> None:
    store = SQLiteStore(db)
    try:
        if (verdict := store.integrity_check()) != "ok":
            result.violations.append(f"integrity_check: {verdict}")
        stored: set[str] = set()
        committed = {c.id for c in store.cycles(None, limit=1_000_000)}
        for key in SCOPES:
            for ep in store.recent_episodes(Scope.parse(key), 10_000_000):
                stored.add(ep.id)
                if ep.consolidated_in and ep.consolidated_in not in committed:
                    result.violations.append(f"{ep.id} marked by unrecorded cycle")
        if lost := acked - stored:
            result.violations.append(f"{len(lost)} acknowledged episode(s) lost")
        result.stored = len(stored)
    finally:
        store.close()


def run_soak(
    seconds: float, workdir: Path, *, writers: int = 2, dreamers: int = 2, recallers: int = 1
) -> SoakResult:
    """Run the processes for ``seconds`` on one fresh file, then check and summarise."""
    workdir.mkdir(parents=True, exist_ok=True)
    db = workdir / "soak.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    Reverie.open(db).close()
    roles = ["writer"] * writers + ["dreamer"] * dreamers + ["recaller"] * recallers
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "reverie.bench.soak", role, str(db), str(seconds), str(i)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for i, role in enumerate(roles)
    ]
    result = SoakResult(seconds=seconds, processes=len(procs))
    acked, latencies = _collect(procs, result)
    result.acked, result.recalls = len(acked), len(latencies)
    result.recall_p50_ms = round(percentile(latencies, 50), 3)
    result.recall_p99_ms = round(percentile(latencies, 99), 3)
    _verify(db, acked, result)
    return result


if __name__ == "__main__":
    raise SystemExit(child(sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])))
