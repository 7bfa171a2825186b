"""``reverie bench core``: a fast smoke run by default, the real sizes with ``-m bench``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console

from reverie.bench.core import CoreResult, render_core, run_core


def _assert_positive(result: CoreResult) -> None:
    assert result.ingest.per_s > 0 and result.ingest.baseline_per_s > 0
    for cycle in result.cycles:
        assert cycle.seconds > 0 and cycle.baseline_seconds > 0
        assert cycle.scanned == cycle.size and cycle.collected > 0 and cycle.created > 0
    assert result.recall.p50_ms > 0 and result.recall.p99_ms >= result.recall.p50_ms
    assert result.recall.hits > 0


def test_smoke_run_reports_and_renders(tmp_path: Path) -> None:
    result = run_core(sizes=(300,), queries=10, workdir=tmp_path)
    _assert_positive(result)
    assert [c.name for c in result.checks] == ["ingest", "cycle of 300", "recall p99"]
    assert json.loads(result.to_json())["sizes"] == [300]
    console = Console(record=True, width=160)
    render_core(result, console)
    text = console.export_text()
    assert "ingest 300" in text and "recall p99" in text and "cycle 300" in text


def test_rejects_empty_sizes(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="sizes"):
        run_core(sizes=(), workdir=tmp_path)


@pytest.mark.bench
@pytest.mark.timeout(900)
def test_core_targets_at_real_sizes(tmp_path: Path) -> None:
    result = run_core(workdir=tmp_path)
    render_core(result, Console())
    _assert_positive(result)
    assert result.passed, [c for c in result.checks if not c.passed]
