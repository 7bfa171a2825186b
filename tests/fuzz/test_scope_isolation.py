"""Security sweep: reads for one scope never return another scope's data (DESIGN invariant 7)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, given, settings

from reverie import Reverie, Scope
from reverie.bench.synth import synthetic_episodes, synthetic_queries

SCOPES = ["acme/coder", "acme/coder/alice", "rival/coder"]
NOW = datetime(2026, 6, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def brain(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Reverie]:
    with Reverie.open(tmp_path_factory.mktemp("iso") / "iso.db") as rv:
        for i, scope in enumerate(SCOPES):  # the same texts in every scope
            rows = list(synthetic_episodes(300, seed=3))
            for row in rows:
                row["scope"], row["id"] = scope, f"{row['id']}-{i}"
            rv.ingest(rows)
            rv.dream(scope, now=NOW + timedelta(days=i))
        yield rv


def _owned(rv: Reverie, scope: str) -> tuple[set[str], set[str]]:
    pages = {p.id for p in rv.pages(scope, None)}
    episodes = {e.id for e in rv.store.recent_episodes(Scope.parse(scope), 10_000)}
    return pages, episodes


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    scope=st.sampled_from(SCOPES),
    query=st.sampled_from(synthetic_queries(40, seed=5)) | st.text(max_size=30),
)
def test_recall_never_crosses_scopes(brain: Reverie, scope: str, query: str) -> None:
    pages, episodes = _owned(brain, scope)
    result = brain.recall(query, scope, budget_tokens=2000)
    for item in result.items:
        assert item.id in (pages if item.kind == "page" else episodes)
        assert set(item.citations) <= episodes


@pytest.mark.parametrize("scope", SCOPES)
def test_scoped_reads_stay_in_scope(brain: Reverie, scope: str) -> None:
    pages, episodes = _owned(brain, scope)
    for page in brain.pages(scope, None):
        assert page.scope.key == scope
        assert set(page.citations) <= episodes
        assert {e.id for e in brain.why(page.id).episodes} <= episodes
    for cycle in brain.cycles(scope):
        assert cycle.scope.key == scope
    assert brain.status(scope).episodes == len(episodes) == 300
    assert pages
