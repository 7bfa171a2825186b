"""The store side of memory over time, on every backend: reinforcement rows, strengths and
the journal."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from reverie import Reverie
from reverie.store.base import Store
from tests.conftest import EpisodeFactory

SCOPE = "acme/coder"
DAY = datetime(2026, 11, 10, tzinfo=UTC)


def test_strength_and_journal_follow_cycles_and_undo(
    store: Store, make_episode: EpisodeFactory
) -> None:
    rv = Reverie(store)
    rv.ingest([make_episode() for _ in range(3)])
    first = rv.dream(SCOPE, now=DAY)
    rv.ingest([make_episode() for _ in range(2)])
    second = rv.dream(SCOPE, now=DAY + timedelta(days=1))
    (page,) = rv.pages(SCOPE)
    strength = store.strengths([page.id, "pg_missing"])
    assert set(strength) == {page.id}
    assert (strength[page.id].episodes, strength[page.id].cycles) == (5, 2)
    rv.undo(second.cycle_id, now=DAY + timedelta(days=2))
    assert (store.strengths([page.id])[page.id].episodes, first.created) == (3, 1)
    entries = store.journal(rv.store.scopes()[0])
    assert [e.cycle_id for e in entries] == [first.cycle_id, second.cycle_id, second.cycle_id]
    assert len(store.journal(rv.store.scopes()[0], limit=1)) == 1
