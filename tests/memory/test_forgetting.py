"""Forgetting follows evidence, not the calendar.

Disuse is measured on the scope's activity clock; a well-supported lesson is never retired by
time alone, and a cycle with nothing new changes nothing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from reverie import Reverie
from reverie.config import Config, DreamConfig, MemoryConfig
from reverie.models import PageStatus

SCOPE = "acme/coder"
MARCH = datetime(2025, 3, 1, 9, tzinfo=UTC)
LATER = datetime(2026, 4, 1, 9, tzinfo=UTC)
TOPICS = {
    "deploy": ("kubectl", "Raise the rollout timeout before retrying a deploy."),
    "search": ("web_search", "Back off for a minute after a 429 from the vendor search."),
    "db": ("psql", "Run the migrations before the api starts."),
    "tests": ("pytest", "Clear the fixture cache when the schema changes."),
}


def lesson(topic: str, n: int, when: datetime) -> dict[str, Any]:
    tool, text = TOPICS[topic]
    return {
        "id": f"{topic}-{n:03d}",
        "scope": SCOPE,
        "created_at": when,
        "situation": f"working on the {topic} task",
        "action": f"ran {tool}",
        "outcome": "failure",
        "error": "it broke",
        "lesson": text,
        "category": topic,
        "tools": [tool],
    }


def unrelated(n: int, when: datetime) -> dict[str, Any]:
    return {
        "id": f"other-{n:03d}",
        "scope": SCOPE,
        "created_at": when,
        "situation": "answering a question about the office plants",
        "action": "looked it up",
        "outcome": "success",
        "importance": 8,
        "category": "chat",
    }


def march_history() -> list[dict[str, Any]]:
    return [
        lesson(topic, n, MARCH + timedelta(days=n % 28, hours=i))
        for i, topic in enumerate(TOPICS)
        for n in range(30)
    ]


def lesson_pages(rv: Reverie, status: str | None = "active") -> dict[str, Any]:
    return {p.topic_key: p for p in rv.pages(SCOPE, status) if p.kind == "lesson"}


def test_old_well_supported_lessons_survive_a_year_of_calendar(rv: Reverie) -> None:
    rv.ingest(march_history(), now=MARCH + timedelta(days=30))
    rv.dream(SCOPE, now=MARCH + timedelta(days=30))
    before = lesson_pages(rv)
    assert len(before) == 4
    cycles, journal = rv.status(SCOPE).cycles, len(rv.journal(SCOPE))
    idle = rv.dream(SCOPE, now=LATER)  # a year later, nothing new
    assert idle.status == "empty" and idle.retired == 0
    assert rv.status(SCOPE).cycles == cycles and len(rv.journal(SCOPE)) == journal  # nothing
    assert {k: p.revision.hash for k, p in lesson_pages(rv).items()} == {
        k: p.revision.hash for k, p in before.items()
    }
    rv.ingest([unrelated(n, LATER + timedelta(hours=n)) for n in range(3)], now=LATER)
    busy = rv.dream(SCOPE, now=LATER + timedelta(hours=5))  # a year of new experience
    assert busy.status == "committed" and busy.retired == 0
    assert set(lesson_pages(rv)) == set(before)


def test_importing_last_years_history_and_dreaming_twice_keeps_recall(rv: Reverie) -> None:
    rv.ingest(march_history(), now=LATER)
    rv.dream(SCOPE, now=LATER)
    second = rv.dream(SCOPE, now=LATER + timedelta(days=1))
    assert second.status == "empty" and len(lesson_pages(rv)) == 4
    recall = rv.recall("rollout timeout deploy", SCOPE, 400, now=LATER + timedelta(days=1))
    assert any(i.kind == "page" for i in recall.items)


def test_weak_support_and_long_disuse_on_the_scopes_clock_still_retires(rv: Reverie) -> None:
    rv.remember(lesson("search", 0, MARCH), now=MARCH)
    rv.dream(SCOPE, now=MARCH + timedelta(days=1))
    (weak,) = rv.pages(SCOPE)  # one episode: a note
    assert rv.dream(SCOPE, now=LATER).status == "empty"  # the calendar alone: nothing
    assert rv.page(weak.id).status is PageStatus.ACTIVE
    rv.ingest([unrelated(n, LATER + timedelta(hours=n)) for n in range(3)], now=LATER)
    report = rv.dream(SCOPE, now=LATER + timedelta(hours=5))
    assert report.retired == 1
    page = rv.page(weak.id)
    assert page.status is PageStatus.RETIRED
    assert "weak support (1 episode(s), 1 cycle(s))" in (page.revision.reason or "")
    assert "scope's experience reached 2026-04-01" in (page.revision.reason or "")


def test_support_from_distinct_cycles_protects_a_page(rv: Reverie) -> None:
    for n in range(3):  # one episode in each of three cycles
        when = MARCH + timedelta(days=7 * n)
        rv.remember(lesson("db", n, when), now=when)
        rv.dream(SCOPE, now=when + timedelta(hours=1))
    strength = rv.store.strengths([p.id for p in lesson_pages(rv).values()])
    assert [s.cycles for s in strength.values()] == [3]
    rv.ingest([unrelated(n, LATER + timedelta(hours=n)) for n in range(3)], now=LATER)
    assert rv.dream(SCOPE, now=LATER + timedelta(hours=5)).retired == 0
    assert len(lesson_pages(rv)) == 1


def test_an_explicit_policy_retires_by_the_calendar_even_in_an_empty_cycle(
    tmp_path: Path,
) -> None:
    config = Config(dream=DreamConfig(memory=MemoryConfig(retire_after_days=180)))
    with Reverie.open(tmp_path / "b.db", config=config) as rv:
        rv.ingest(march_history(), now=MARCH + timedelta(days=30))
        rv.dream(SCOPE, now=MARCH + timedelta(days=30))
        assert rv.dream(SCOPE, now=MARCH + timedelta(days=100)).status == "empty"
        report = rv.dream(SCOPE, now=LATER)
        assert report.retired == 4 and not lesson_pages(rv)
        reasons = {p.revision.reason for p in lesson_pages(rv, "retired").values()}
        assert all("retired by policy" in (r or "") for r in reasons)
