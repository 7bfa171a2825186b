"""Reinforcement and decay against a simulated year of daily cycles. Forgetting follows
evidence: disuse is measured on the scope's activity clock, and a
well-supported page is never retired by time alone."""

from __future__ import annotations

import math
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from reverie import Config, DreamConfig, Reverie
from reverie.config import MemoryConfig
from reverie.dream.decay import decayed_confidence, half_life_days
from reverie.models import PageKind, PageStatus

SCOPE = "acme/coder"
Y0 = datetime(2026, 1, 1, tzinfo=UTC)
DEFAULTS = MemoryConfig()


def episode(n: int, day: int, kind: str) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": f"{kind}-{n:04d}",
        "scope": SCOPE,
        "created_at": Y0 + timedelta(days=day, hours=10),
    }
    if kind == "deploy":  # recurs every week, all year
        return base | {
            "situation": "deploying the api to staging",
            "action": "kubectl apply -f k8s/",
            "outcome": "failure",
            "error": "TimeoutError: timed out waiting for the condition",
            "category": "deploy",
            "tools": ["kubectl"],
        }
    if kind == "search":  # once in January, never again
        return base | {
            "situation": "searching the vendor docs for the rate limit",
            "action": "web_search 'vendor rate limit'",
            "outcome": "failure",
            "error": "HTTP Error 429: Too Many Requests",
            "lesson": "Back off for a minute after a 429 from the vendor search.",
            "category": "search",
            "tools": ["web_search"],
        }
    return base | {  # a preference stated once, in February
        "situation": "the user asked for the test runner",
        "action": "ran pytest -q",
        "outcome": "success",
        "category": "preference",
        "metadata": {"fact": {"subject": "user", "attribute": "test runner", "value": "pytest"}},
    }


def year_of_episodes() -> dict[int, list[dict[str, Any]]]:
    days: dict[int, list[dict[str, Any]]] = {}
    for n, day in enumerate(range(0, 365, 7)):
        days.setdefault(day, []).append(episode(n, day, "deploy"))
    for n, day in enumerate((3,)):
        days.setdefault(day, []).append(episode(n, day, "search"))
    days.setdefault(40, []).append(episode(0, 40, "pref"))
    return days


@pytest.fixture(scope="module")
def year(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    rv = Reverie.open(tmp_path_factory.mktemp("year") / "brain.db")
    days = year_of_episodes()
    retired_on: dict[str, int] = {}
    for day in range(365):
        now = Y0 + timedelta(days=day, hours=23)
        rv.ingest(days.get(day, []), now=now)
        report = rv.dream(SCOPE, now=now)
        for change in report.changes:
            if change.action == "retired":
                retired_on[change.page_id] = day
    # one page per problem, each by the kind of episode it cites (its title is its lead claim)
    pages = {p.citations[0].split("-")[0]: p for p in rv.pages(SCOPE, None)}
    assert len(rv.pages(SCOPE, None)) == len(pages) == 3
    yield {"rv": rv, "pages": pages, "retired_on": retired_on}
    rv.close()


def test_the_weekly_pattern_is_reinforced_and_stays(year: dict[str, Any]) -> None:
    rv, deploy = year["rv"], year["pages"]["deploy"]
    assert deploy.status is PageStatus.ACTIVE
    strength = rv.store.strengths([deploy.id])[deploy.id]
    assert strength.cycles == 53 and strength.episodes == 53
    assert strength.last_seen == Y0 + timedelta(days=364, hours=10)


def test_the_january_lesson_fades_and_is_retired_on_the_predicted_day(
    year: dict[str, Any],
) -> None:
    rv, search = year["rv"], year["pages"]["search"]
    assert search.status is PageStatus.RETIRED
    before = rv.revisions(search.id)[-2]
    strength = rv.store.strengths([search.id])[search.id]
    assert strength.cycles == 1 and strength.last_seen == Y0 + timedelta(days=3, hours=10)
    days_left = DEFAULTS.half_life_days * math.log2(before.confidence / DEFAULTS.retire_below)
    # the scope's clock moves with its experience (the weekly deploys), not with the daily cycles
    predicted = min(day for day in range(0, 365, 7) if day - 3 > days_left)
    assert year["retired_on"][search.id] == predicted
    assert 100 < predicted < 200
    reason = search.revision.reason or ""
    assert "decayed: weak support (1 episode(s), 1 cycle(s))" in reason
    # retired: readable, out of default recall, every revision kept
    assert rv.page(search.id).revision.claims == before.claims
    assert search.id not in {p.id for p in rv.pages(SCOPE)}
    recall = rv.recall("vendor rate limit 429", SCOPE, 400, now=Y0 + timedelta(days=365))
    assert search.id not in {i.id for i in recall.items if i.kind == "page"}


def test_a_stable_preference_outlives_the_year(year: dict[str, Any]) -> None:
    pref = year["pages"]["pref"]
    assert pref.kind is PageKind.PREFERENCE and pref.status is PageStatus.ACTIVE


def test_restore_brings_a_retired_page_back_and_reaffirms_it(year: dict[str, Any]) -> None:
    rv, search = year["rv"], year["pages"]["search"]
    now = Y0 + timedelta(days=366)
    cycle = rv.restore(search.id, search.revision.number - 1, now=now)
    assert rv.page(search.id).status is PageStatus.ACTIVE
    assert rv.dream(SCOPE, now=now + timedelta(days=1)).retired == 0  # the clock restarted
    rv.undo(cycle.id, now=now + timedelta(days=2))
    assert rv.page(search.id).status is PageStatus.RETIRED


@pytest.mark.parametrize(
    ("kind", "cycles", "expected"),
    [
        (PageKind.LESSON, 1, 60.0),
        (PageKind.LESSON, 4, 180.0),
        (PageKind.WARNING, 8, 240.0),
        (PageKind.PREFERENCE, 1, 365.0),
        (PageKind.FACT, 2, 730.0),
    ],
)
def test_half_life_table(kind: PageKind, cycles: int, expected: float) -> None:
    assert half_life_days(kind, cycles, DEFAULTS) == pytest.approx(expected)


def test_decay_halves_per_half_life_of_the_scopes_clock(rv: Reverie) -> None:
    rv.remember(episode(0, 0, "search") | {"importance": 9})
    rv.dream(SCOPE, now=Y0 + timedelta(days=1))
    (page,) = rv.pages(SCOPE)
    strength = rv.store.strengths([page.id])[page.id]
    later = strength.last_seen + timedelta(days=60)
    value = decayed_confidence(page, strength, later, DEFAULTS)
    assert value == pytest.approx(page.confidence / 2)
    # 900 days of calendar with nothing new: nothing decays, nothing is written
    idle = rv.dream(SCOPE, now=Y0 + timedelta(days=900))
    assert idle.status == "empty" and idle.retired == 0
    # 900 days of the scope's own experience: a weakly supported lesson is retired
    rv.remember(episode(1, 900, "pref"), now=Y0 + timedelta(days=900, hours=12))
    assert rv.dream(SCOPE, now=Y0 + timedelta(days=900, hours=12)).retired == 1


def test_decay_can_be_turned_off(tmp_path: Any) -> None:
    config = Config(dream=DreamConfig(memory=MemoryConfig(decay=False)))
    with Reverie.open(tmp_path / "b.db", config=config) as rv:
        rv.remember(episode(0, 0, "search"))
        rv.dream(SCOPE, now=Y0 + timedelta(days=1))
        assert rv.dream(SCOPE, now=Y0 + timedelta(days=3000)).status == "empty"
        rv.remember(episode(1, 2999, "pref"), now=Y0 + timedelta(days=3000))
        assert rv.dream(SCOPE, now=Y0 + timedelta(days=3000)).retired == 0
        assert len(rv.pages(SCOPE)) == 2
