"""``reverie bench core``: a fast smoke run by default, the real sizes with ``-m bench``."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timedelta
from itertools import pairwise
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from reverie.bench.core import NOW, CoreResult, _start, render_core, run_core
from reverie.bench.synth import synthetic_episodes
from reverie.cli.app import app


def _assert_positive(result: CoreResult) -> None:
    assert result.ingest.per_s > 0 and result.ingest.baseline_per_s > 0
    parts = result.ingest.micros
    assert len(parts) == 3 and all(us > 0 for us in parts.values())
    assert parts["of which fingerprint"] < parts["append (rows, table, indexes, full text)"]
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
    assert "ingest per episode:" in text and "admit (parse, validate)" in text
    assert result.cycles[0].peak_bytes > 0 and "KB/episode" in text  # the cycle's peak memory


def test_the_cycle_is_model_free_whatever_embedder_is_configured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REVERIE_EMBEDDER", "hashing")
    run_core(sizes=(300,), queries=5, workdir=tmp_path)
    with sqlite3.connect(tmp_path / "core-300.db") as conn:
        assert conn.execute("SELECT count(*) FROM vector_units").fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM embeddings").fetchone() == (0,)


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


def test_bench_recall_measures_an_existing_brain_and_never_creates_one(tmp_path: Path) -> None:
    run_core(sizes=(300,), queries=5, workdir=tmp_path)  # leaves core-300.db behind
    brain = tmp_path / "core-300.db"
    before = brain.stat().st_size
    runner = CliRunner()
    done = runner.invoke(app, ["bench", "recall", str(brain), "--queries", "20", "--json"])
    assert done.exit_code in (0, 1), done.output  # 1: the p99 target missed on a busy machine
    figures = json.loads(done.output)
    assert figures["scope"] == "bench/agent-0" and figures["episodes"] == 300
    assert figures["figure"]["queries"] == 20 and figures["figure"]["hits"] > 0
    assert figures["figure"]["p99_ms"] >= figures["figure"]["p50_ms"] > 0
    assert figures["passed"] == (figures["figure"]["p99_ms"] <= figures["target_p99_ms"])
    text = runner.invoke(app, ["bench", "recall", str(brain), "--queries", "5"]).output
    assert "first recall after opening" in text and "raw FTS5" in text
    assert brain.stat().st_size >= before  # read, not rebuilt
    missing = runner.invoke(app, ["bench", "recall", str(tmp_path / "nope.db")])
    assert missing.exit_code == 2 and "is not a file" in missing.output
    assert not (tmp_path / "nope.db").exists()


@pytest.mark.parametrize("size", [1_000, 138_146, 1_000_000, 10_000_000])
def test_every_size_is_dated_to_end_before_the_ingest_clock(size: int) -> None:
    """A history of ``size`` episodes, each at most six minutes after the one before, ends
    before the clock bench core ingests by, so no size runs past the future limit."""
    rows = list(synthetic_episodes(5_000, start=_start(size)))
    times = [datetime.fromisoformat(r["created_at"]) for r in rows]
    assert max(b - a for a, b in pairwise(times)) <= timedelta(minutes=6)
    assert _start(size) + timedelta(minutes=6) * size <= NOW


def test_bench_recall_at_a_given_time_recalls_as_bench_core_does(tmp_path: Path) -> None:
    core = run_core(sizes=(300,), queries=20, workdir=tmp_path)  # recalls at its clock, NOW
    brain, runner = tmp_path / "core-300.db", CliRunner()
    at_now = ["--now", NOW.isoformat(), "--queries", "20", "--json"]
    done = runner.invoke(app, ["bench", "recall", str(brain), *at_now])
    assert done.exit_code in (0, 1), done.output
    assert json.loads(done.output)["figure"]["hits"] == core.recall.hits
    before = ["--now", "2025-01-01T00:00:00Z", "--queries", "20", "--json"]
    early = runner.invoke(app, ["bench", "recall", str(brain), *before])  # before its history
    assert json.loads(early.output)["figure"]["hits"] < core.recall.hits
    bad = runner.invoke(app, ["bench", "recall", str(brain), "--now", "noon"])
    assert bad.exit_code == 2 and "ISO 8601" in bad.output
