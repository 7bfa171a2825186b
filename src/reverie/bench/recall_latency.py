"""``reverie bench recall``: recall latency on a brain that already exists.

``reverie bench core`` builds its brains from scratch, and with an embedder that includes
embedding every episode (10–25 minutes at 100,000 on two cores). This measures only recall, on
any SQLite brain — one ``bench core --workdir`` left behind, or your own — with the same
queries, warm-up and raw-FTS5 baseline as ``bench core`` (:func:`reverie.bench.core.recall_figure`),
so figures from the two are comparable. It also times the first recall after opening: with an
embedder that one loads the scope's vectors into memory.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from reverie.bench.core import RECALL_P99_TARGET_MS, RecallFigure, recall_figure
from reverie.bench.synth import synthetic_queries
from reverie.embed import Embedder
from reverie.engine import Reverie
from reverie.errors import InvalidInput
from reverie.models import Scope, now_utc

__all__ = ["RecallBench", "render_recall_bench", "run_recall_bench"]


@dataclass(frozen=True)
class RecallBench:
    path: str
    scope: str
    episodes: int
    pages: int
    embedder: str
    first_recall_ms: float
    figure: RecallFigure

    @property
    def passed(self) -> bool:
        return self.figure.p99_ms <= RECALL_P99_TARGET_MS

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "target_p99_ms": RECALL_P99_TARGET_MS, "passed": self.passed}


def _largest_scope(rv: Reverie) -> Scope:
    counts = {s.key: rv.status(s).episodes for s in rv.scopes()}
    if not counts:
        raise InvalidInput("db", "the brain holds no episodes; there is nothing to recall")
    return Scope.parse(max(counts, key=lambda k: (counts[k], k)))


def run_recall_bench(
    path: Path,
    *,
    scope: str | None = None,
    queries: int = 300,
    budget: int = 400,
    embedder: Embedder | None = None,
    now: datetime | None = None,
) -> RecallBench:
    """Recall p50/p99 in ``scope`` (default: the one with most episodes) of the brain at
    ``path``; the file must exist (this never creates a brain)."""
    if not path.is_file():
        raise InvalidInput("db", f"{path} is not a file; give the path of an existing brain")
    when = now or now_utc()
    with Reverie.open(path, embedder=embedder) as rv:
        target = Scope.parse(scope) if scope else _largest_scope(rv)
        status = rv.status(target)
        start = time.perf_counter()
        rv.recall(synthetic_queries(1, seed=99)[0], target, budget, now=when)
        first = (time.perf_counter() - start) * 1000
        figure = recall_figure(rv, path, queries, budget, scope=target, now=when)
    return RecallBench(
        path=str(path), scope=target.key, episodes=status.episodes, pages=status.pages,
        embedder=embedder.model_id if embedder is not None else "none",
        first_recall_ms=round(first, 1), figure=figure,
    )  # fmt: skip


def render_recall_bench(result: RecallBench) -> str:
    f = result.figure
    verdict = "pass" if result.passed else "FAIL"
    return "\n".join(
        [
            f"reverie bench recall · {result.path} · scope {result.scope} · "
            f"{result.episodes:,} episodes, {result.pages:,} pages · embedder {result.embedder}",
            f"first recall after opening: {result.first_recall_ms:.1f} ms",
            f"{f.queries} queries, budget {f.budget} tokens, {f.hits} non-empty",
            f"recall p50 {f.p50_ms:.2f} ms"
            f" (raw FTS5 {f.baseline_p50_ms:.2f} ms, × {f.ratio_p50:.2f})",
            f"recall p99 {f.p99_ms:.2f} ms"
            f" (raw FTS5 {f.baseline_p99_ms:.2f} ms, × {f.ratio_p99:.2f})"
            f" · target ≤ {RECALL_P99_TARGET_MS:.0f} ms: {verdict}",
        ]
    )
