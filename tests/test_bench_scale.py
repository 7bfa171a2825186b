"""``reverie bench scale`` at a toy size (on demand: ``pytest -m bench``)."""

from __future__ import annotations

import pytest

from reverie.bench.scale import render_scale, run_scale
from tests.pg import server_url


@pytest.mark.bench
@pytest.mark.timeout(600)
def test_scale_bench_runs_every_part_and_times_recall() -> None:
    result = run_scale(server_url(), scopes=40, per_scope=20, workers=(1, 2, 4), queries=20)
    assert [p.workers for p in result.phases] == [1, 2, 4]
    assert all(p.scopes == 13 and p.episodes == 13 * 20 for p in result.phases)
    assert result.phases[0].ratio == 1.0
    assert result.recall_episodes == 40 * 20 and result.recall_queries == 20
    assert all(p.cpu_busy is None or 0.0 <= p.cpu_busy <= 1.0 for p in result.phases)
    assert "vs 1 worker" in render_scale(result) and "CPU busy" in render_scale(result)
