"""Shared fixtures: real SQLite files in a temporary directory, and an episode factory."""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from reverie import Reverie
from reverie.models import Episode
from reverie.store.base import BrainStore
from reverie.store.sqlite import SQLiteStore
from tests.pg import postgres_store

# The suite runs lexical unless a test names an embedder (or clears this to test the default,
# MiniLM): most tests are about the lexical path, and loading a model per engine is slow.
os.environ.setdefault("REVERIE_EMBEDDER", "none")

BACKENDS = ["sqlite", "postgres"]  # postgres: a real server, see tests/pg.py
T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)

EpisodeFactory = Callable[..., Episode]


def open_backend(name: str, tmp_path: Path) -> BrainStore:
    if name == "sqlite":
        store = SQLiteStore(tmp_path / "reverie.db")
        store.migrate()
        return store
    raise ValueError(name)


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BrainStore]:
    """A migrated, empty store of each backend (PostgreSQL: a fresh schema, see tests/pg.py)."""
    if request.param == "postgres":
        with postgres_store() as pg:
            yield pg
        return
    s = open_backend(request.param, tmp_path)
    yield s
    s.close()


@pytest.fixture
def rv(tmp_path: Path) -> Iterator[Reverie]:
    with Reverie.open(tmp_path / "brain.db") as r:
        yield r


@pytest.fixture
def make_episode() -> EpisodeFactory:
    counter = itertools.count(1)

    def make(**fields: Any) -> Episode:
        n = next(counter)
        data: dict[str, Any] = {
            "id": f"ep-{n:05d}",
            "scope": "acme/coder",
            "created_at": T0 + timedelta(hours=n),
            "situation": f"deploying service {n % 3} to the staging cluster",
            "action": "kubectl apply -f manifests/",
            "outcome": "failure",
            "error": "TimeoutError: timed out waiting for the condition",
            "category": "deploy",
            "tools": ["kubectl"],
        }
        data.update(fields)
        return Episode.parse(data)

    return make


def failed_deploys(scope: str, start: datetime, prefix: str) -> list[dict[str, Any]]:
    """Four failed deploys of ``scope``, an hour apart from ``start``, ids ``prefix0``–``3``."""
    return [
        {"id": f"{prefix}{i}", "scope": scope, "created_at": start + timedelta(hours=i),
         "situation": "deploying the api to staging", "action": "kubectl apply",
         "outcome": "failure", "error": "TimeoutError: timed out", "lesson": "wait for rollout"}
        for i in range(4)
    ]  # fmt: skip


def dream_deploys(rv: Reverie, scope: str = "acme/ops") -> None:
    """Four failed kubectl deploys stored in ``scope`` and dreamed a day later: a brain an
    embedder under test has to index and recall through."""
    t0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
    rv.ingest(
        [
            {"scope": scope, "situation": "Deploying the api with kubectl rollout",
             "action": "kubectl rollout restart", "error": "ImagePullBackOff",
             "outcome": "failure", "category": "deploy", "tools": ["kubectl"],
             "created_at": t0 + timedelta(hours=i)}
            for i in range(4)
        ]
    )  # fmt: skip
    rv.dream(scope, now=t0 + timedelta(days=1))
