"""``reverie bench core``: ingest, dream and recall on the embedded SQLite store.

Every figure is measured next to a baseline that does the same storage work with nothing of
Reverie in it, in the same process and on the same machine, so the ratio says what Reverie's
validation, indexing and logic cost rather than how fast the disk is:

- **ingest** — ``Reverie.ingest`` (batches of 5,000) of the largest size, against
  ``sqlite3.executemany`` of the same rows' JSON into a plain table (no validation, no FTS).
  Where the time goes is measured too, each part on its own: admitting every row (parsing and
  validating it into an episode), fingerprinting the admitted episodes, and appending them to a
  fresh store (the rows, the table, its indexes and the full-text index);
- **cycle** — one model-free ``Reverie.dream`` per size that takes every episode, against
  reading all of the scope's rows (``store.scan``); and its peak memory: the same cycle run
  again on a copy of the brain made before it, under ``tracemalloc`` (which slows it several
  times, so it is never the timed run), as the most bytes it held at once and per episode;
- **recall** — ``Reverie.recall`` latency at the largest size after its cycle, against the raw
  FTS5 ``MATCH`` queries (pages and every part of the episodes' index) for the same terms.

Each size runs on a fresh SQLite file under ``workdir``. Objects that exist before a timed
phase (the pre-built input rows above all) are frozen out of the garbage collector for its
duration, so a phase pays for the collection of what it allocates, not for rescanning the
benchmark's own input, which a streaming ingest would not hold. Ratios are Reverie's time over the
baseline's time (how many times the baseline's cost), whichever way the figure itself reads.
Synthetic data comes from :mod:`reverie.bench.synth` with seed 0, so runs are comparable.
"""

from __future__ import annotations

import gc
import json
import math
import platform
import sqlite3
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

from rich.console import Console
from rich.table import Table

from reverie.bench.synth import DEFAULT_START, synthetic_episodes, synthetic_queries
from reverie.config import Config, DreamConfig
from reverie.embed import Embedder
from reverie.engine import Reverie
from reverie.intake import IngestClock, admit
from reverie.models import Scope
from reverie.recall import query_terms
from reverie.store.sql.rows import fts_phrase, scope_token
from reverie.store.sqlite.text import part_table

__all__ = [
    "CYCLE_TARGET_S",
    "INGEST_TARGET_PER_S",
    "RECALL_P99_TARGET_MS",
    "Check",
    "CoreResult",
    "CycleFigure",
    "IngestFigure",
    "RecallFigure",
    "recall_figure",
    "render_core",
    "run_core",
]

INGEST_TARGET_PER_S = 20_000.0
CYCLE_TARGET_S = 60.0
RECALL_P99_TARGET_MS = 50.0
BATCH_SIZE = 5000
SCOPE = Scope.parse("bench/agent-0")
NOW = datetime(2030, 1, 1, tzinfo=UTC)  # after every synthetic episode, so all are in the past
_CANDIDATES = 40
T = TypeVar("T")


@dataclass(frozen=True)
class IngestFigure:
    episodes: int
    seconds: float
    per_s: float
    baseline_seconds: float
    baseline_per_s: float
    ratio: float
    micros: dict[str, float] = field(default_factory=dict)
    """Microseconds per episode of each part of ingest, measured on its own."""


@dataclass(frozen=True)
class CycleFigure:
    size: int
    seconds: float
    scanned: int
    collected: int
    groups: int
    created: int
    baseline_seconds: float
    ratio: float
    phases: dict[str, float] = field(default_factory=dict)
    peak_bytes: int = 0
    """The most bytes the cycle held at once (``tracemalloc``); 0 when not measured."""

    @property
    def peak_per_episode(self) -> float:
        return self.peak_bytes / self.scanned if self.scanned else 0.0


@dataclass(frozen=True)
class RecallFigure:
    queries: int
    budget: int
    hits: int
    p50_ms: float
    p99_ms: float
    baseline_p50_ms: float
    baseline_p99_ms: float
    ratio_p50: float
    ratio_p99: float


@dataclass(frozen=True)
class Check:
    """One target: what was measured against what it must reach."""

    name: str
    value: float
    target: float
    unit: str
    higher_is_better: bool
    passed: bool


@dataclass(frozen=True)
class CoreResult:
    sizes: list[int]
    ingest: IngestFigure
    cycles: list[CycleFigure]
    recall: RecallFigure
    checks: list[Check]
    sqlite_version: str = sqlite3.sqlite_version
    python: str = platform.python_version()

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    def to_json(self) -> str:
        return json.dumps({**asdict(self), "passed": self.passed}, indent=2)


# -- measuring ----------------------------------------------------------------------------------


def _timed(fn: Callable[[], T]) -> tuple[T, float]:
    """``fn()`` and its seconds; what exists before the call is frozen out of the collector."""
    gc.collect()
    gc.freeze()
    try:
        start = time.perf_counter()
        value = fn()
        return value, time.perf_counter() - start
    finally:
        gc.unfreeze()


def _ratio(ours: float, baseline: float) -> float:
    return round(ours / baseline, 2) if baseline > 0 else math.inf


def percentile(values: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile (0 for no values); every benchmark reports with this one."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[max(0, math.ceil(pct / 100 * len(ordered)) - 1)]


def _fresh(path: Path) -> Path:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    return path


def _start(size: int) -> datetime:
    """When the synthetic history begins: early enough that ``size`` episodes (at most six
    minutes apart) all end before :data:`NOW`, the ingest clock of every bench run."""
    return min(DEFAULT_START, NOW - timedelta(minutes=6 * size))


def _config(size: int) -> Config:
    base = DreamConfig()
    dream = DreamConfig(
        max_episodes_per_cycle=max(size, base.max_episodes_per_cycle),
        scan_limit=max(size, base.scan_limit),
    )
    return Config(dream=dream)


def _ingest(rv: Reverie, rows: list[dict[str, Any]]) -> float:
    result, seconds = _timed(lambda: rv.ingest(rows, batch_size=BATCH_SIZE, now=NOW))
    if result.stored != len(rows) or result.errors:
        raise RuntimeError(
            f"bench ingest stored {result.stored} of {len(rows)}: {result.errors[:3]}"
        )
    return seconds


def _baseline_ingest(path: Path, rows: list[dict[str, Any]]) -> float:
    conn = sqlite3.connect(_fresh(path), isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("CREATE TABLE raw (id TEXT PRIMARY KEY, body TEXT NOT NULL)")

    def insert() -> None:
        for start in range(0, len(rows), BATCH_SIZE):
            conn.execute("BEGIN IMMEDIATE")
            batch = rows[start : start + BATCH_SIZE]
            conn.executemany(
                "INSERT INTO raw VALUES (?, ?)", [(r["id"], json.dumps(r)) for r in batch]
            )
            conn.execute("COMMIT")

    try:
        return _timed(insert)[1]
    finally:
        conn.close()


def _ingest_parts(rows: list[dict[str, Any]], path: Path) -> dict[str, float]:
    """Microseconds per episode of admitting ``rows``, fingerprinting them and appending them
    to a fresh store at ``path``, each timed on its own, a batch at a time as ingest does (so
    no more episodes are alive at once than in a real ingest)."""
    clock = IngestClock.at(NOW, 0.0)
    seconds = dict.fromkeys(("admit", "fingerprint", "append"), 0.0)

    def run_batches(rv: Reverie) -> None:
        for start in range(0, len(rows), BATCH_SIZE):
            began = time.perf_counter()
            episodes = [admit(r, None, clock) for r in rows[start : start + BATCH_SIZE]]
            admitted = time.perf_counter()
            for e in episodes:
                e.fingerprint()
            fingerprinted = time.perf_counter()
            rv.store.append(episodes, at=clock.received)
            seconds["admit"] += admitted - began
            seconds["fingerprint"] += fingerprinted - admitted
            seconds["append"] += time.perf_counter() - fingerprinted

    with Reverie.open(_fresh(path)) as rv:
        _timed(lambda: run_batches(rv))
    n = len(rows) / 1e6
    return {
        "admit (parse, validate)": round(seconds["admit"] / n, 2),
        "append (rows, table, indexes, full text)": round(seconds["append"] / n, 2),
        "of which fingerprint": round(seconds["fingerprint"] / n, 2),
    }


def _ingest_figure(rv: Reverie, rows: list[dict[str, Any]], workdir: Path) -> IngestFigure:
    seconds = _ingest(rv, rows)
    baseline = _baseline_ingest(workdir / f"baseline-{len(rows)}.db", rows)
    n = len(rows)
    return IngestFigure(
        episodes=n, seconds=round(seconds, 4), per_s=round(n / seconds, 1),
        baseline_seconds=round(baseline, 4), baseline_per_s=round(n / baseline, 1),
        ratio=_ratio(seconds, baseline),
        micros=_ingest_parts(rows, workdir / f"parts-{n}.db"),
    )  # fmt: skip


def _cycle_figure(rv: Reverie, size: int, twin: Path | None = None) -> CycleFigure:
    """The timed cycle; with ``twin`` (a copy of the brain before it), also its peak memory."""
    scanned, baseline = _timed(lambda: rv.store.scan(SCOPE, 0, size))
    del scanned
    report, seconds = _timed(lambda: rv.dream(SCOPE, now=NOW))
    return CycleFigure(
        size=size, seconds=round(seconds, 4), scanned=report.scanned, collected=report.collected,
        groups=report.groups, created=report.created, baseline_seconds=round(baseline, 4),
        ratio=_ratio(seconds, baseline), phases=dict(report.timings),
        peak_bytes=_cycle_peak(twin, size) if twin is not None else 0,
    )  # fmt: skip


def _copy_brain(path: Path, twin: Path) -> Path:
    """A copy of the brain at ``path`` as it is now (SQLite's backup: its log included)."""
    with sqlite3.connect(path) as source, sqlite3.connect(_fresh(twin)) as target:
        source.backup(target)
    return twin


def _cycle_peak(twin: Path, size: int) -> int:
    """The most bytes one model-free cycle of the brain at ``twin`` holds at once; the copy is
    removed after."""
    try:
        with Reverie.open(twin, config=_config(size), embedder=None) as rv:
            _ = rv.distiller  # built before measuring, as the timed cycle had it
            gc.collect()
            tracemalloc.start()
            try:
                rv.dream(SCOPE, now=NOW)
                return tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
    finally:
        _fresh(twin)


def _recall_times(
    rv: Reverie, queries: Sequence[str], budget: int, scope: Scope, now: datetime
) -> tuple[list[float], int]:
    times: list[float] = []
    hits = 0
    for q in queries:
        start = time.perf_counter()
        result = rv.recall(q, scope, budget, now=now)
        times.append((time.perf_counter() - start) * 1000)
        hits += bool(result)
    return times, hits


def _fts_times(path: Path, queries: Sequence[str], scope: Scope) -> list[float]:
    token = scope_token(scope.key)
    conn = sqlite3.connect(path)
    parts = [part_table(r[0]) for r in conn.execute("SELECT low FROM episodes_fts_parts")]
    times: list[float] = []
    try:
        for q in queries:
            terms = " OR ".join(fts_phrase(t) for t in query_terms(q))
            start = time.perf_counter()
            if terms:
                tables = [("pages_fts", "{title body}"), *((t, "body") for t in parts)]
                for table, column in tables:
                    conn.execute(
                        f"SELECT rowid FROM {table} WHERE {table} MATCH ? ORDER BY rank LIMIT ?",
                        (f"scope : {token} AND {column} : ({terms})", _CANDIDATES),
                    ).fetchall()
            times.append((time.perf_counter() - start) * 1000)
    finally:
        conn.close()
    return times


def recall_figure(
    rv: Reverie,
    path: Path,
    count: int,
    budget: int,
    *,
    scope: Scope = SCOPE,
    now: datetime = NOW,
) -> RecallFigure:
    """Recall p50/p99 over ``count`` synthetic queries in ``scope`` of the SQLite brain at
    ``path`` (opened as ``rv``), after five warm-up queries, next to raw FTS5 for the same
    terms (also used by ``reverie bench recall``)."""
    queries = synthetic_queries(count)
    _recall_times(rv, queries[:5], budget, scope, now)  # warm the page cache and the code paths
    gc.collect()
    times, hits = _recall_times(rv, queries, budget, scope, now)
    gc.collect()
    base = _fts_times(path, queries, scope)
    p50, p99 = percentile(times, 50), percentile(times, 99)
    b50, b99 = percentile(base, 50), percentile(base, 99)
    return RecallFigure(
        queries=len(queries), budget=budget, hits=hits, p50_ms=round(p50, 3), p99_ms=round(p99, 3),
        baseline_p50_ms=round(b50, 3), baseline_p99_ms=round(b99, 3),
        ratio_p50=_ratio(p50, b50), ratio_p99=_ratio(p99, b99),
    )  # fmt: skip


# -- running ------------------------------------------------------------------------------------


def _run_size(
    size: int,
    workdir: Path,
    *,
    largest: bool,
    queries: int,
    budget: int,
    embedder: Embedder | None = None,
    memory: bool = True,
) -> tuple[IngestFigure | None, CycleFigure, RecallFigure | None]:
    rows = list(synthetic_episodes(size, seed=0, start=_start(size)))
    path = _fresh(workdir / f"core-{size}.db")
    # The cycle is measured model-free: the brain opens with no embedder whatever the
    # environment configures, and recall's embedder (if any) indexes after the cycle.
    with Reverie.open(path, config=_config(size), embedder=None) as rv:
        if largest:
            ingest = _ingest_figure(rv, rows, workdir)
        else:
            _ingest(rv, rows)
        del rows
        twin = _copy_brain(path, workdir / f"twin-{size}.db") if memory else None
        cycle = _cycle_figure(rv, size, twin)
        if largest and embedder is not None:  # vectors after the cycle, as dream does
            hybrid = Reverie(rv.store, config=rv.config, embedder=embedder)
            _, seconds = _timed(lambda: hybrid.index(SCOPE))
            cycle.phases["index (embedding, after the cycle)"] = round(seconds, 3)
        reader = rv if embedder is None else hybrid
        recall = recall_figure(reader, path, queries, budget) if largest else None
    return (ingest if largest else None), cycle, recall


def _checks(ingest: IngestFigure, cycle: CycleFigure, recall: RecallFigure) -> list[Check]:
    return [
        Check("ingest", ingest.per_s, INGEST_TARGET_PER_S, "episodes/s", True,
              ingest.per_s >= INGEST_TARGET_PER_S),
        Check(f"cycle of {cycle.size:,}", cycle.seconds, CYCLE_TARGET_S, "s", False,
              cycle.seconds <= CYCLE_TARGET_S),
        Check("recall p99", recall.p99_ms, RECALL_P99_TARGET_MS, "ms", False,
              recall.p99_ms <= RECALL_P99_TARGET_MS),
    ]  # fmt: skip


def run_core(
    *,
    sizes: Sequence[int] = (10_000, 100_000),
    queries: int = 300,
    workdir: Path,
    budget: int = 400,
    embedder: Embedder | None = None,
    memory: bool = True,
) -> CoreResult:
    """Measure ingest, one cycle per size (``memory``: and its peak memory) and recall; see the
    module docstring."""
    ordered = sorted(set(sizes))
    if not ordered or ordered[0] < 1 or queries < 1:
        raise ValueError("sizes must be positive and queries at least 1")
    workdir.mkdir(parents=True, exist_ok=True)
    cycles: list[CycleFigure] = []
    ingest: IngestFigure | None = None
    recall: RecallFigure | None = None
    for size in ordered:
        largest = size == ordered[-1]
        got_ingest, cycle, got_recall = _run_size(
            size, workdir, largest=largest, queries=queries, budget=budget, embedder=embedder,
            memory=memory,
        )  # fmt: skip
        cycles.append(cycle)
        ingest, recall = got_ingest or ingest, got_recall or recall
        gc.collect()
    assert ingest is not None and recall is not None
    return CoreResult(
        sizes=ordered, ingest=ingest, cycles=cycles, recall=recall,
        checks=_checks(ingest, cycles[-1], recall),
    )  # fmt: skip


# -- rendering ----------------------------------------------------------------------------------


def _verdict(check: Check | None) -> str:
    if check is None:
        return ""
    return "[green]pass[/green]" if check.passed else "[red]FAIL[/red]"


def _target(check: Check | None) -> str:
    if check is None:
        return ""
    sign = "≥" if check.higher_is_better else "≤"
    return f"{sign} {check.target:,.0f} {check.unit}"


def _figures_table(result: CoreResult) -> Table:
    checks = {c.name: c for c in result.checks}
    table = Table(title="reverie bench core", title_justify="left")
    for name in ("measure", "reverie", "baseline", "× baseline time", "target", ""):
        table.add_column(name, justify="left" if name in ("measure", "target") else "right")
    ing, rec = result.ingest, result.recall
    table.add_row(
        f"ingest {ing.episodes:,}", f"{ing.per_s:,.0f} ep/s", f"{ing.baseline_per_s:,.0f} ep/s",
        f"{ing.ratio:.2f}", _target(checks["ingest"]), _verdict(checks["ingest"]),
    )  # fmt: skip
    for cy in result.cycles:
        check = checks.get(f"cycle of {cy.size:,}")
        table.add_row(
            f"cycle {cy.size:,}", f"{cy.seconds:.2f} s", f"{cy.baseline_seconds:.2f} s",
            f"{cy.ratio:.2f}", _target(check), _verdict(check),
        )  # fmt: skip
    table.add_row(
        "recall p50",
        f"{rec.p50_ms:.2f} ms",
        f"{rec.baseline_p50_ms:.2f} ms",
        f"{rec.ratio_p50:.2f}",
    )
    p99 = checks["recall p99"]
    table.add_row(
        "recall p99", f"{rec.p99_ms:.2f} ms", f"{rec.baseline_p99_ms:.2f} ms",
        f"{rec.ratio_p99:.2f}", _target(p99), _verdict(p99),
    )  # fmt: skip
    return table


def _cycles_table(result: CoreResult) -> Table:
    table = Table(title="cycles (model-free)", title_justify="left")
    columns = ("size", "scanned", "collected", "groups", "pages created", "peak memory")
    for name in (*columns, "phases (s)"):
        table.add_column(name, justify="left" if name == "phases (s)" else "right")
    for cy in result.cycles:
        phases = ", ".join(f"{k} {v:.2f}" for k, v in cy.phases.items())
        table.add_row(
            f"{cy.size:,}", f"{cy.scanned:,}", f"{cy.collected:,}", f"{cy.groups:,}",
            f"{cy.created:,}", _peak(cy), phases,
        )  # fmt: skip
    return table


def _peak(cycle: CycleFigure) -> str:
    if not cycle.peak_bytes:
        return "-"
    return f"{cycle.peak_bytes / 1e6:,.1f} MB ({cycle.peak_per_episode / 1e3:.2f} KB/episode)"


def render_core(result: CoreResult, console: Console) -> None:
    """Print the figures, the cycle details and an overall verdict."""
    console.print(_figures_table(result))
    console.print(_cycles_table(result))
    ing = result.ingest
    parts = " · ".join(f"{name} {us:.1f} µs" for name, us in ing.micros.items())
    baseline_us = ing.baseline_seconds / ing.episodes * 1e6
    console.print(
        f"ingest per episode: {ing.seconds / ing.episodes * 1e6:.1f} µs in all · {parts}"
        f" · raw executemany {baseline_us:.1f} µs"
    )
    rec = result.recall
    console.print(
        f"recall: {rec.queries} queries, budget {rec.budget} tokens, {rec.hits} non-empty · "
        f"SQLite {result.sqlite_version} · Python {result.python}"
    )
    verdict = "all targets met" if result.passed else "some targets missed"
    console.print(f"[bold]{verdict}[/bold]")
