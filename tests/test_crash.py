"""Crash injection: 20 SIGKILLs of a real dreaming process, every invariant checked after each."""

from __future__ import annotations

from pathlib import Path

import pytest

from reverie.bench.crash import TARGETS, run_crash


def test_twenty_kills_lose_nothing_and_double_nothing(tmp_path: Path) -> None:
    result = run_crash(20, tmp_path, seed=7)
    assert result.violations == []
    assert result.kills >= 18  # a round ends unkilled only if its target never came up
    assert sum(result.by_target[t] for t in TARGETS[-4:]) >= 4  # inside the transaction
    assert result.consolidated > 0 and result.episodes >= result.consolidated


@pytest.mark.bench
def test_many_kills(tmp_path: Path) -> None:
    result = run_crash(200, tmp_path, seed=11)
    assert result.violations == []
