"""Synthetic episodes are deterministic, valid and shaped like real agent traffic."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from itertools import pairwise

from reverie.bench.synth import TEMPLATE_LESSONS, TOPICS, synthetic_episodes, synthetic_queries
from reverie.models import Episode


def test_same_seed_same_rows_other_seed_other_rows() -> None:
    first = list(synthetic_episodes(200, scopes=3, seed=7))
    assert first == list(synthetic_episodes(200, scopes=3, seed=7))
    assert first != list(synthetic_episodes(200, scopes=3, seed=8))
    assert synthetic_queries(50, seed=1) == synthetic_queries(50, seed=1)


def test_every_row_parses_as_an_episode() -> None:
    rows = list(synthetic_episodes(2000, scopes=2, seed=3))
    episodes = [Episode.parse(r) for r in rows]
    assert [e.id for e in episodes] == [f"syn-3-{i}" for i in range(2000)]
    assert {e.scope.key for e in episodes} == {"bench/agent-0", "bench/agent-1"}


def test_time_advances_from_start() -> None:
    start = datetime(2026, 3, 1, tzinfo=UTC)
    times = [Episode.parse(r).created_at for r in synthetic_episodes(500, start=start)]
    assert times[0] > start
    assert all(a < b for a, b in pairwise(times))


def test_outcome_lesson_and_error_mix() -> None:
    episodes = [Episode.parse(r) for r in synthetic_episodes(10_000, seed=0)]
    outcomes = Counter(str(e.outcome) for e in episodes)
    assert 0.50 < outcomes["success"] / 10_000 < 0.60
    assert 0.25 < outcomes["failure"] / 10_000 < 0.35
    assert all(e.error for e in episodes if str(e.outcome) in ("failure", "timeout"))
    assert not any(e.error for e in episodes if str(e.outcome) == "success")
    lessons = [e.lesson for e in episodes if e.lesson]
    real = sum(text not in TEMPLATE_LESSONS for text in lessons)
    assert 0.12 < real / 10_000 < 0.18
    assert 0.07 < (len(lessons) - real) / 10_000 < 0.13
    assert len({(e.category, tuple(e.tools)) for e in episodes}) == len(TOPICS) >= 40


def test_queries_include_some_about_nothing_stored() -> None:
    queries = synthetic_queries(300)
    assert len(queries) == 300
    assert any("Eiffel" in q or "pizza" in q or "capital" in q for q in queries)
