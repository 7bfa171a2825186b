"""A brain on each backend, opened through the engine as users open it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from reverie import Reverie
from tests.pg import schema_url


@pytest.fixture(params=["sqlite", "postgres"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """Where a brain lives: a SQLite file, or a fresh PostgreSQL schema."""
    if request.param == "postgres":
        with schema_url() as url:
            yield url
        return
    yield str(tmp_path / "brain.db")


@pytest.fixture
def brain(target: str) -> Iterator[Reverie]:
    with Reverie.open(target) as rv:
        yield rv
