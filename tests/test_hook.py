"""The agent hook: recall before, an episode after, a no-op (with a warning) on any failure."""

from __future__ import annotations

import logging
import runpy
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from reverie import Reverie
from reverie.integrations.hook import AgentHook, with_context
from reverie.models import Episode, Recall, ScopeLike

ROOT = Path(__file__).resolve().parents[1]


class BrokenMemory:
    """Every call fails, as a down store or an unreachable service would."""

    def recall(self, query: str, scope: ScopeLike, budget_tokens: int | None = None) -> Recall:
        raise ConnectionError("store unreachable")

    def remember(
        self, episode: Episode | dict[str, Any], *, scope: ScopeLike | None = None
    ) -> Episode:
        raise OSError("disk full")

    def now(self, given: datetime | None = None) -> datetime:
        return given or datetime(2026, 1, 1, tzinfo=UTC)


def test_a_turn_is_recalled_before_and_recorded_after(rv: Reverie) -> None:
    hook = AgentHook(rv, "acme/coder", session_id="s1", category="deploy")
    replies = hook.wrap(lambda task, context: f"did {task}")
    assert replies("deploy api") == "did deploy api"
    with hook.turn("deploy api again") as turn:
        turn.failed("kubectl apply", "TimeoutError", tools=["kubectl"], lesson="raise the timeout")
    stored = rv.store.recent_episodes(rv.scopes()[0], 10)
    by_task = {e.situation: e for e in stored}
    assert (
        by_task["deploy api"].outcome == "success"
        and by_task["deploy api"].action == "did deploy api"
    )
    failed = by_task["deploy api again"]
    assert (failed.outcome, failed.error, failed.tools) == ("failure", "TimeoutError", ["kubectl"])
    assert failed.session_id == "s1" and failed.lesson == "raise the timeout"


def test_an_agent_exception_is_recorded_and_re_raised(rv: Reverie) -> None:
    hook = AgentHook(rv, "acme/coder")
    with pytest.raises(ValueError, match="bad plan"), hook.turn("plan the release"):
        raise ValueError("bad plan")
    (episode,) = rv.store.recent_episodes(rv.scopes()[0], 10)
    assert episode.outcome == "failure" and episode.error == "ValueError: bad plan"


def test_failures_of_the_memory_degrade_to_a_no_op(caplog: pytest.LogCaptureFixture) -> None:
    hook = AgentHook(BrokenMemory(), "acme/coder")
    with caplog.at_level(logging.WARNING, logger="reverie.integrations.hook"):
        with hook.turn("deploy") as turn:
            assert turn.context == ""
            assert with_context("deploy", turn.context) == "deploy"
            turn.succeeded("kubectl apply")
        assert hook.wrap(lambda task, context: "ok")("deploy") == "ok"
    messages = [r.getMessage() for r in caplog.records]
    assert any("recall skipped: ConnectionError" in m for m in messages)
    assert any("remember skipped: OSError: disk full" in m for m in messages)


def test_the_plain_agent_example_learns_overnight(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        module = runpy.run_path(str(ROOT / "examples" / "plain_agent.py"))
        module["main"](tmp_path / "brain.db")
    finally:
        sys.path.remove(str(ROOT / "examples"))
    out = capsys.readouterr().out
    assert out.count("-> failed:") == 3
    assert "--timeout=10m -> deployment rolled out" in out
