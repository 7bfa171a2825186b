"""Recall asks the store for the superseded pages that name a question's values on every
question; the store answers a scope that has none without searching its text. Whether or not
it searches, the section is the same, and a scope that has one still has its old values
replaced."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest

from reverie import Reverie
from reverie.config import RecallConfig
from reverie.models import Page, Scope
from reverie.recall.search import recall
from reverie.store.sql.store import SQLStore
from tests.conftest import BACKENDS
from tests.pg import schema_url

CHANGED, KEPT = Scope.parse("acme/changed"), Scope.parse("acme/kept")
JAN, APR, AUG = (datetime(2026, 3, d, 9, tzinfo=UTC) for d in (2, 12, 22))
OLD, NEW = "https://telemetry.example.io/api", "https://insights.example.io"
QUESTIONS = ["old dashboard query for refunds usage", "metrics-api base", "telemetry api usage"]


class EverySearch:
    """The real store, whose page search always asks the text index, never first probing the
    scope for pages of the statuses asked."""

    def __init__(self, inner: SQLStore) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def search_pages(
        self, scope: Scope, terms: Sequence[str], limit: int, statuses: Iterable[str] = ("active",)
    ) -> list[tuple[Page, float]]:
        return self.inner.backend.search_pages(scope, terms, limit, list(statuses))


def _fact(scope: Scope, n: str, when: datetime, base: str) -> dict[str, object]:
    return {
        "id": f"{scope.agent}-{n}",
        "scope": scope.key,
        "created_at": when,
        "situation": "Metrics API health check",
        "action": f"curl {base}/health",
        "outcome": "success",
        "metadata": {"fact": {"subject": "metrics-api", "attribute": "base", "value": base}},
    }


def _stray(scope: Scope) -> dict[str, object]:
    """A later failure that still uses the old address: the only unit the first question finds."""
    return {
        "id": f"{scope.agent}-stray",
        "scope": scope.key,
        "created_at": AUG,
        "situation": "Old dashboard query for refunds usage",
        "action": f"GET {OLD}/usage",
        "outcome": "failure",
        "error": "404 from telemetry.example.io/api: endpoint moved",
    }


@pytest.fixture(params=BACKENDS)
def rv(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Reverie]:
    """A brain with two scopes: in ``CHANGED`` the address moved (its first fact page is
    superseded), in ``KEPT`` it never did (no page of the scope is superseded)."""
    if request.param == "postgres":
        with schema_url() as url, Reverie.open(url) as pg:
            yield _filled(pg)
        return
    with Reverie.open(tmp_path / "brain.db") as lite:
        yield _filled(lite)


def _filled(rv: Reverie) -> Reverie:
    rv.ingest([_fact(CHANGED, "1", JAN, OLD), _fact(CHANGED, "2", APR, NEW)], now=APR)
    rv.ingest([_fact(KEPT, "1", JAN, OLD), _fact(KEPT, "2", APR, OLD)], now=APR)
    for scope in (CHANGED, KEPT):
        rv.dream(scope, now=APR)
    rv.ingest([_stray(CHANGED), _stray(KEPT)], now=AUG)
    for scope in (CHANGED, KEPT):
        rv.dream(scope, now=AUG)
    return rv


def _sections(store: object, scope: Scope) -> list[str]:
    config = RecallConfig()
    return [
        recall(store, q, scope, 400, config=config, now=AUG).model_dump_json()  # type: ignore[arg-type]
        for q in QUESTIONS
    ]


def test_only_the_scope_with_a_superseded_page_has_one(rv: Reverie) -> None:
    assert [p.status for p in rv.store.pages(CHANGED, ["superseded"])] == ["superseded"]
    assert rv.store.pages(KEPT, ["superseded"]) == []


def test_a_scope_with_a_superseded_page_still_has_its_old_value_replaced(rv: Reverie) -> None:
    asked = rv.recall(QUESTIONS[0], CHANGED, 400, now=AUG)
    assert "telemetry.example.io" not in asked.text
    assert "insights.example.io" in asked.text  # the current value of what the question found


def test_a_scope_without_one_keeps_its_only_value(rv: Reverie) -> None:
    asked = rv.recall(QUESTIONS[1], KEPT, 400, now=AUG)
    assert "telemetry.example.io" in asked.text and "insights" not in asked.text


@pytest.mark.parametrize("scope", [CHANGED, KEPT], ids=["changed", "kept"])
def test_sections_are_the_same_when_every_search_asks_the_text_index(
    rv: Reverie, scope: Scope
) -> None:
    store = rv.store
    assert isinstance(store, SQLStore)
    fast = _sections(store, scope)
    assert any('"kind":"page"' in s for s in fast)
    assert fast == _sections(EverySearch(store), scope)
