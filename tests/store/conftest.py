"""The store suite also runs on PostgreSQL over psycopg's async connection (the store
``AsyncReverie`` uses): the same SQL, the same contract."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from reverie.store.base import BrainStore
from tests.conftest import BACKENDS, open_backend
from tests.pg import loop_postgres_store, postgres_store


@pytest.fixture(params=[*BACKENDS, "postgres-loop"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BrainStore]:
    """A migrated, empty store of each backend (PostgreSQL: a fresh schema, see tests/pg.py)."""
    if request.param == "postgres":
        with postgres_store() as pg:
            yield pg
        return
    if request.param == "postgres-loop":
        with loop_postgres_store() as on_loop:
            yield on_loop
        return
    s = open_backend(request.param, tmp_path)
    yield s
    s.close()
