"""Cumulative dream stats: completed cycles counted in their commit, failed
ones (an exception) by a separate write after the failure; a cycle whose every plan was rejected
writes nothing at all."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from reverie import Config, DreamConfig, Reverie
from reverie.cli.app import app
from reverie.dream.distill import ExtractiveDistiller
from reverie.llm.protocol import ModelUsage
from reverie.models import Claim, PageKind
from reverie.models.plan import CreatePage, Evidence, Plan
from reverie.store.sqlite import SQLiteStore
from reverie.testing import ScriptedDistiller

SCOPE = "acme/coder"
NOW = datetime(2026, 5, 1, 22, tzinfo=UTC)


def _episodes(start: int, n: int = 3) -> list[dict[str, Any]]:
    return [
        {
            "id": f"ep-{i:04d}",
            "scope": SCOPE,
            "created_at": (NOW - timedelta(hours=n - i + start)).isoformat(),
            "situation": "deploying the api",
            "action": "kubectl apply",
            "outcome": "failure",
            "error": "timed out",
            "lesson": "wait on rollout status with a 10m timeout",
            "category": "deploy",
            "tools": ["kubectl"],
        }
        for i in range(start, start + n)
    ]


class MeteredExtractive(ExtractiveDistiller):
    """The extractive distiller, pretending each group cost one model call of 100 + 20 tokens."""

    def __init__(self) -> None:
        super().__init__()
        self.usage = ModelUsage()

    def distill(self, evidence: Evidence) -> Plan:
        self.usage.calls += 1
        self.usage.input_tokens += 100
        self.usage.output_tokens += 20
        return super().distill(evidence)

    def take_usage(self) -> ModelUsage:
        usage, self.usage = self.usage, ModelUsage()
        return usage


def _brain(distiller: Any) -> Reverie:
    """A brain calling its (metered) distiller for every group: these tests count the calls."""
    store = SQLiteStore(":memory:")
    store.migrate()
    every_group = DreamConfig(model_min_support=1, model_refresh_growth=None)
    return Reverie(store, config=Config(dream=every_group), distiller=distiller)


def test_committed_cycles_add_their_cost_in_the_commit() -> None:
    with _brain(MeteredExtractive()) as rv:
        rv.ingest(_episodes(0))
        rv.dream(SCOPE, now=NOW)
        rv.ingest(_episodes(10))
        rv.dream(SCOPE, now=NOW + timedelta(days=1))
        rv.dream(SCOPE, now=NOW + timedelta(days=2))  # nothing new: not a cycle to count
        [stats] = rv.dream_stats(SCOPE)
    assert (stats.cycles_completed, stats.cycles_failed) == (2, 0)
    assert (stats.model_calls, stats.input_tokens, stats.output_tokens) == (2, 200, 40)
    assert stats.episodes == 6 and stats.duration_s > 0
    assert stats.last_completed_at == NOW + timedelta(days=1) and stats.last_error is None


def _bad_plan(evidence: Evidence) -> Plan:
    claim = Claim(text="made up", episode_ids=("ep-nowhere",))
    create = CreatePage(
        topic_key=evidence.topic_key, title="t", kind=PageKind.NOTE, confidence=0.5, claims=(claim,)
    )
    return Plan(operations=(create,), distiller="scripted")


def test_a_cycle_that_rejects_everything_writes_nothing_not_even_stats() -> None:
    with _brain(ScriptedDistiller(_bad_plan)) as rv:
        rv.ingest(_episodes(0))
        report = rv.dream(SCOPE, now=NOW)
        assert report.rejected and rv.cycles(SCOPE) == []  # no cycle transaction happened
        assert rv.store.checkpoint(report.scope) == 0
        assert rv.dream_stats(SCOPE) == []  # an invalid plan changes no byte


def _explode(evidence: Evidence) -> Plan:
    raise RuntimeError("the model server went away")


def test_a_cycle_that_raises_is_counted_after_the_failure() -> None:
    with _brain(ScriptedDistiller(_explode)) as rv:
        rv.ingest(_episodes(0))
        with pytest.raises(RuntimeError):
            rv.dream(SCOPE, now=NOW)
        [stats] = rv.dream_stats(SCOPE)
        assert rv.store.checkpoint(stats.scope) == 0
    assert (stats.cycles_completed, stats.cycles_failed) == (0, 1)
    assert stats.last_error == "RuntimeError: the model server went away"


def test_stats_and_log_commands(tmp_path: Path) -> None:
    db = tmp_path / "brain.db"
    with Reverie.open(db) as rv:
        rv.ingest(_episodes(0))
        rv.dream(SCOPE, now=NOW)
    runner = CliRunner()
    shown = runner.invoke(app, ["--db", str(db), "stats", "--json"])
    assert shown.exit_code == 0, shown.output
    [row] = json.loads(shown.stdout)
    assert (row["scope"], row["cycles_completed"], row["cycles_failed"]) == (SCOPE, 1, 0)
    table = runner.invoke(app, ["--db", str(db), "stats"])
    assert table.exit_code == 0 and "cumulative dream stats" in table.stdout
    log = runner.invoke(app, ["--db", str(db), "log", "-s", SCOPE])
    assert log.exit_code == 0, log.output
    assert "1 cycles completed, 0 failed" in log.stdout
    assert "created" in log.stdout  # the journal entry follows the summary
