"""Recall use, counted by the engine: one per agent's recall, a hit when a unit was packed,
written in batches (and before they are read), never failing a recall when it cannot write."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from reverie import Reverie
from reverie.cli.demo import load_sample
from reverie.models import Scope
from reverie.recall import RecallTrace
from reverie.store.base import RecallTally
from reverie.store.sqlite import SQLiteStore
from reverie.store.usage import RecallUsage, hour_of

NOW = datetime(2026, 11, 20, 9, 41, tzinfo=UTC)
SCOPE = "acme/coder"


def dreamt(store: SQLiteStore) -> Reverie:
    rv = Reverie(store, embedder=None)
    rv.ingest(load_sample())
    rv.dream(SCOPE, now=NOW - timedelta(days=1))
    return rv


def test_each_recall_counts_once_and_a_hit_is_a_packed_unit(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "b.db")
    store.migrate()
    with dreamt(store) as rv:
        hits = [rv.recall(q, SCOPE, 300, now=NOW) for q in ("deploy staging", "kubectl timeout")]
        rv.recall("deploy staging", SCOPE, 300, now=NOW, trace=RecallTrace())  # not counted
        assert store.recall_stats(Scope.parse(SCOPE)) == []  # not written yet: batched
        miss = rv.recall("zyx qwv", SCOPE, 300, now=NOW + timedelta(hours=1))  # due: written
        assert len(store.recall_stats(Scope.parse(SCOPE))) == 2
        assert all(hits) and not miss
        shown = rv.recall_stats(SCOPE)
    units = sum(len(r.items) for r in hits)
    tokens = sum(r.used_tokens for r in hits)
    scope = shown[0].scope
    assert shown == [
        RecallTally(scope, hour_of(NOW), recalls=2, hits=2, units=units, tokens=tokens),
        RecallTally(scope, hour_of(NOW) + timedelta(hours=1), recalls=1, hits=0),
    ]


def test_counts_are_due_after_a_number_of_recalls_or_a_while() -> None:
    usage = RecallUsage(every=3, after=timedelta(seconds=30))
    s = Scope.parse(SCOPE)
    assert not usage.add(s, NOW, units=1, tokens=10)
    assert not usage.add(s, NOW + timedelta(seconds=5), units=0, tokens=0)
    assert usage.add(s, NOW + timedelta(seconds=6), units=2, tokens=20)  # the third
    [tally] = usage.drain()
    assert (tally.recalls, tally.hits, tally.units, tally.tokens) == (3, 2, 3, 30)
    assert usage.drain() == []
    assert not usage.add(s, NOW, units=0, tokens=0)
    assert usage.add(s, NOW + timedelta(seconds=30), units=0, tokens=0)  # a while later


class _CannotCount(SQLiteStore):
    """A store whose recall counts cannot be written (as a read-only database)."""

    def record_recalls(self, tallies: Sequence[RecallTally]) -> None:
        raise PermissionError("attempt to write a readonly database")


def test_a_store_that_cannot_count_still_recalls_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = _CannotCount(tmp_path / "b.db")
    store.migrate()
    with caplog.at_level(logging.WARNING, logger="reverie"), dreamt(store) as rv:
        assert rv.recall("deploy staging", SCOPE, 300, now=NOW)
        assert rv.recall_stats(SCOPE) == []
        assert rv.recall_stats(SCOPE) == []
    warned = [r for r in caplog.records if "recall counts not recorded" in r.getMessage()]
    assert len(warned) == 1
