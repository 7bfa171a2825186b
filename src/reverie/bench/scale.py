"""``reverie bench scale``: many scopes, several worker processes, one PostgreSQL database.

The run happens in a fresh schema of the given database (dropped afterwards unless ``keep``).
``scopes`` scopes of ``per_scope`` synthetic episodes each are split into one equal part per
worker count in ``workers`` (1, 2, 4 by default). For each part: ingest it, then start that
many ``reverie worker --until-idle`` processes — real processes, as deployed — and time from
their first claim to their last cycle. Throughput is scopes dreamed per second, reported as a
ratio against the one-worker part of the same run (same data shape, same machine, same
minute). Every episode then being stored, recall is timed over random scopes: p50 and p99.

``dream_scopes`` caps the scopes dreamed per part (the remaining scopes are only ingested, so
recall is still timed at full size) when the whole run would take too long.

The check: two workers reach at least 1.5× one worker. What more workers reach is bounded by
the cores the workers and the server share (the figures say how many there were).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from reverie.bench.core import percentile
from reverie.bench.processes import communicate_all
from reverie.bench.synth import synthetic_episodes, synthetic_queries
from reverie.engine import Reverie

__all__ = ["PhaseFigure", "ScaleResult", "render_scale", "run_scale"]

TWO_WORKER_TARGET = 1.5


@dataclass(frozen=True)
class PhaseFigure:
    workers: int
    scopes: int
    episodes: int
    ingest_per_s: float
    seconds: float
    scopes_per_s: float
    ratio: float
    cpu_busy: float | None = None
    """Share of the machine's CPU time busy (workers and server together) while the part ran;
    None where ``/proc/stat`` cannot be read (not Linux)."""


@dataclass
class ScaleResult:
    scopes: int
    per_scope: int
    cpus: int
    phases: list[PhaseFigure] = field(default_factory=list)
    recall_episodes: int = 0
    recall_queries: int = 0
    recall_p50_ms: float = 0.0
    recall_p99_ms: float = 0.0

    @property
    def passed(self) -> bool:
        two = [p for p in self.phases if p.workers == 2]
        return not two or two[0].ratio >= TWO_WORKER_TARGET

    def to_json(self) -> str:
        return json.dumps({**asdict(self), "passed": self.passed}, indent=2)


@contextmanager
def _schema(url: str, keep: bool) -> Iterator[str]:
    import psycopg  # noqa: PLC0415 (extra: postgres)

    schema = f"bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute("CREATE EXTENSION IF NOT EXISTS vector")
        admin.execute(f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in url else "?"
    try:
        yield f"{url}{sep}options={quote(f'-csearch_path={schema},public')}"
    finally:
        if not keep:
            with psycopg.connect(url, autocommit=True) as admin:
                admin.execute(f"DROP SCHEMA {schema} CASCADE")


def _rows(first: int, count: int, per_scope: int, seed: int) -> Iterator[dict[str, Any]]:
    """``per_scope`` episodes for each of the scopes ``first … first + count - 1``, interleaved
    as agents write them."""
    for i, row in enumerate(synthetic_episodes(count * per_scope, seed=seed)):
        row["scope"] = f"bench/agent-{first + i % count}"
        yield row


def _ingest(rv: Reverie, rows: Iterator[dict[str, Any]]) -> tuple[int, float]:
    started = time.perf_counter()
    stored = rv.ingest(rows, batch_size=5000).stored
    return stored, stored / max(time.perf_counter() - started, 1e-9)


def _run_workers(url: str, count: int) -> list[dict[str, Any]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REVERIE_LLM")}
    main = "from reverie.cli.app import main; main()"
    args = [sys.executable, "-c", main, "worker", "--url", url]
    args += ["--until-idle", "--poll", "0.05", "--ttl", "120"]
    procs = [
        subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        for _ in range(count)
    ]
    events: list[dict[str, Any]] = []
    for proc, (out, err) in zip(procs, communicate_all(procs), strict=True):
        if proc.returncode != 0:
            raise RuntimeError(f"a bench worker failed ({proc.returncode}): {err[-2000:]}")
        events += [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    return events


def _throughput(events: Sequence[dict[str, Any]]) -> tuple[int, float]:
    claims = [datetime.fromisoformat(e["at"]) for e in events if e["event"] == "claimed"]
    dreamed = [e for e in events if e["event"] == "dreamed"]
    if not dreamed:
        return 0, 0.0
    last = max(datetime.fromisoformat(e["at"]) for e in dreamed)
    return len(dreamed), (last - min(claims)).total_seconds()


def _cpu_times() -> tuple[int, int] | None:
    """(busy, total) jiffies of all CPUs since boot, from ``/proc/stat``; None off Linux."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    except (OSError, IndexError):
        return None
    ticks = [int(f) for f in fields]
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)  # idle + iowait
    return sum(ticks) - idle, sum(ticks)


def _busy(before: tuple[int, int] | None, after: tuple[int, int] | None) -> float | None:
    if before is None or after is None or after[1] <= before[1]:
        return None
    return round((after[0] - before[0]) / (after[1] - before[1]), 2)


def _recall_ms(rv: Reverie, scopes: int, queries: int) -> list[float]:
    rng = random.Random(7)
    times: list[float] = []
    for query in synthetic_queries(queries, seed=1):
        scope = f"bench/agent-{rng.randrange(scopes)}"
        started = time.perf_counter()
        rv.recall(query, scope)
        times.append((time.perf_counter() - started) * 1000)
    return sorted(times)


def run_scale(  # noqa: PLR0913 (keyword-only options, one per `reverie bench scale` flag)
    url: str,
    *,
    scopes: int = 10_000,
    per_scope: int = 100,
    workers: Sequence[int] = (1, 2, 4),
    queries: int = 300,
    dream_scopes: int | None = None,
    keep: bool = False,
    progress: Callable[[str], None] | None = None,
) -> ScaleResult:
    """Run the scale benchmark against the PostgreSQL server at ``url`` (see the module doc)."""
    say = progress or (lambda _m: None)
    result = ScaleResult(scopes=scopes, per_scope=per_scope, cpus=os.cpu_count() or 1)
    part = min(dream_scopes or scopes, scopes // len(workers))
    with _schema(url, keep) as bench_url, Reverie.open(bench_url) as rv:
        baseline = 0.0
        for k, count in enumerate(workers):
            say(f"ingesting {part * per_scope} episodes for the {count}-worker part")
            stored, rate = _ingest(rv, _rows(k * part, part, per_scope, seed=k))
            say(f"dreaming {part} scopes with {count} worker process(es)")
            before = _cpu_times()
            dreamed, seconds = _throughput(_run_workers(bench_url, count))
            busy = _busy(before, _cpu_times())
            per_s = dreamed / max(seconds, 1e-9)
            baseline = baseline or per_s
            figure = PhaseFigure(
                count,
                dreamed,
                stored,
                round(rate),
                round(seconds, 2),
                round(per_s, 2),
                round(per_s / baseline, 2),
                busy,
            )
            result.phases.append(figure)
        rest = scopes - part * len(workers)
        if rest:
            say(f"ingesting {rest * per_scope} more episodes (not dreamed) for recall")
            _ingest(rv, _rows(part * len(workers), rest, per_scope, seed=99))
        result.recall_episodes = rv.status().episodes
        say(f"timing {queries} recalls over {result.recall_episodes} episodes")
        times = _recall_ms(rv, scopes, queries)
        result.recall_queries = len(times)
        result.recall_p50_ms = round(percentile(times, 50), 2)
        result.recall_p99_ms = round(percentile(times, 99), 2)
    return result


def render_scale(result: ScaleResult) -> str:
    lines = [
        f"{result.scopes} scopes × {result.per_scope} episodes, {result.cpus} CPUs"
        " (workers and PostgreSQL share them)",
        "workers  scopes  episodes  ingest/s  seconds  scopes/s  vs 1 worker  CPU busy",
    ]
    for p in result.phases:
        busy = f"{p.cpu_busy:>8.0%}" if p.cpu_busy is not None else f"{'n/a':>8}"
        lines.append(
            f"{p.workers:>7}  {p.scopes:>6}  {p.episodes:>8}  {p.ingest_per_s:>8.0f}"
            f"  {p.seconds:>7.2f}  {p.scopes_per_s:>8.2f}  {p.ratio:>10.2f}×  {busy}"
        )
    lines.append(
        f"recall over {result.recall_episodes} episodes, {result.recall_queries} queries:"
        f" p50 {result.recall_p50_ms} ms, p99 {result.recall_p99_ms} ms"
    )
    verdict = "PASS" if result.passed else "FAIL"
    lines.append(f"2 workers ≥ {TWO_WORKER_TARGET}× one worker: {verdict}")
    return "\n".join(lines)
