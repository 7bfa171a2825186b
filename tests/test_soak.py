"""Soak: writers, dreamers and a recaller on one SQLite file for 20 s."""

from __future__ import annotations

from pathlib import Path

import pytest

from reverie.bench.soak import run_soak


def test_twenty_seconds_of_contention_lose_nothing(tmp_path: Path) -> None:
    result = run_soak(20, tmp_path)
    assert result.errors == []  # no "database is locked", no lost race reaches a caller
    assert result.violations == []
    assert result.acked > 0 and result.stored >= result.acked
    assert result.cycles > 0 and result.recalls > 0


@pytest.mark.bench
def test_five_minute_soak(tmp_path: Path) -> None:
    result = run_soak(300, tmp_path, writers=3, dreamers=2, recallers=2)
    assert result.passed, (result.errors[:5], result.violations[:5])
