"""Insight scoring, the score-ordered group cap, reports and recommendations."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from reverie import Config, DreamConfig, Reverie
from reverie.dream.cluster import Group
from reverie.dream.recommend import recommend
from reverie.dream.score import cosine, insight_score, rank_for_cap, score_groups
from reverie.models import CycleReport, CycleStatus, Episode, Insight, Scope
from reverie.store.sqlite import SQLiteStore

SCOPE = Scope.parse("acme/coder")
DAY = datetime(2026, 11, 10, tzinfo=UTC)


def engine(path: Path, **dream: Any) -> Reverie:
    store = SQLiteStore(path)
    store.migrate()
    return Reverie(store, config=Config(dream=DreamConfig(**dream)))


def episodes(topic: str, n: int, start: int, **extra: Any) -> list[dict[str, Any]]:
    texts = {
        "deploy": ("deploying the billing service to the staging cluster", "kubectl rollout"),
        "search": ("searching quarterly revenue figures for the finance report", "web search"),
        "email": ("sending the weekly newsletter to subscribers", "smtp batch send"),
    }
    situation, action = texts[topic]
    return [
        {
            "id": f"{topic}-{start + i}",
            "scope": SCOPE.key,
            "created_at": (DAY + timedelta(minutes=start + i)).isoformat(),
            "situation": f"{situation} attempt {i}",
            "action": action,
            "outcome": "failure",
            "error": "TimeoutError: timed out",
            "category": topic,
            "tools": [topic + "-tool"],
            "importance": 7,
            **extra,
        }
        for i in range(n)
    ]


def test_formula() -> None:
    assert insight_score(1.0, 1.0, 1.0, 9) == 1.0
    assert insight_score(0.5, 0.5, 1.0, 9) == 0.25
    assert insight_score(0.7, 1.0, 1.0, 0) == 0.0
    assert cosine(Counter("aab"), Counter("aab")) == pytest.approx(1.0)
    assert cosine(Counter("ab"), Counter("cd")) == 0.0


def test_a_pattern_the_brain_holds_scores_lower_than_a_new_one(tmp_path: Path) -> None:
    rv = engine(tmp_path / "b.db")
    rv.ingest(episodes("deploy", 4, 0))
    assert rv.dream(SCOPE, now=DAY).created == 1  # the brain now holds the deploy pattern
    known = [Episode.parse(e) for e in episodes("deploy", 4, 100)]
    new = [Episode.parse(e) for e in episodes("search", 4, 200)]
    groups = [Group("deploy|deploy-tool", tuple(known)), Group("search|search-tool", tuple(new))]
    scores = score_groups(rv.store, SCOPE, groups)
    held, fresh = scores["deploy|deploy-tool"], scores["search|search-tool"]
    assert held.novelty < 0.3 and fresh.novelty > 0.6, (held, fresh)
    assert held.closest_page == rv.pages(SCOPE)[0].id
    assert held.score < fresh.score
    # same importance, confidence and frequency: novelty alone made the difference
    assert (held.importance, held.confidence, held.frequency) == (
        fresh.importance,
        fresh.confidence,
        fresh.frequency,
    )


def test_novelty_also_finds_a_similar_page_under_another_topic(tmp_path: Path) -> None:
    rv = engine(tmp_path / "b.db")
    rv.ingest(episodes("deploy", 4, 0))
    rv.dream(SCOPE, now=DAY)
    same_text = [Episode.parse({**e, "tools": ["helm"]}) for e in episodes("deploy", 4, 50)]
    scores = score_groups(rv.store, SCOPE, [Group("deploy|helm", tuple(same_text))])
    assert scores["deploy|helm"].novelty < 0.5


def _score(key: str, value: float) -> Insight:
    return Insight(
        topic_key=key,
        pattern="failure",
        importance=1,
        novelty=1,
        confidence=1,
        frequency=1,
        score=value,
    )


def _group(key: str, seq: int) -> Group:
    ep = Episode.parse({"id": f"e{seq}", "scope": SCOPE.key, "situation": key}).model_copy(
        update={"seq": seq}
    )
    return Group(key, (ep,))


def test_cap_keeps_the_oldest_group_then_the_best_scores() -> None:
    groups = [_group("a", 1), _group("b", 2), _group("c", 3), _group("d", 4)]
    scores = {"a": _score("a", 0.1), "b": _score("b", 0.2), "c": _score("c", 0.9)}
    scores["d"] = _score("d", 0.5)
    kept, deferred = rank_for_cap(groups, scores, 2)
    assert [g.topic_key for g in kept] == ["a", "c"]  # oldest first, then the best score
    assert [g.topic_key for g in deferred] == ["d", "b"]
    assert rank_for_cap(groups, scores, 10) == (groups, [])


def test_scored_cap_defers_never_skips_and_reports(tmp_path: Path) -> None:
    rv = engine(tmp_path / "b.db", max_groups_per_cycle=2)
    rv.ingest(episodes("deploy", 4, 0))
    rv.dream(SCOPE, now=DAY)  # the brain holds "deploy"
    rv.ingest(
        episodes("email", 3, 300, importance=6)
        + episodes("deploy", 4, 400)
        + episodes("search", 4, 500)
    )
    first = rv.dream(SCOPE, now=DAY + timedelta(hours=1))
    assert first.groups == 3 and first.groups_deferred == 1
    # "email" holds the oldest pending episode, so it goes first whatever its score; then the
    # novel "search" pattern beats the "deploy" pattern the brain already holds
    assert sorted(c.page_id for c in first.changes) == sorted(
        p.id for p in rv.pages(SCOPE) if not p.topic_key.startswith("deploy")
    )
    top = {i.topic_key.split("|")[0]: i for i in first.insights}  # one problem per category
    assert len(top) == len(first.insights) == 3
    deploy = next(p for p in rv.pages(SCOPE) if p.topic_key.startswith("deploy|"))
    assert top["deploy"].topic_key == deploy.topic_key  # the known problem went to its page
    assert top["search"].score > top["deploy"].score
    assert top["deploy"].deferred and not top["search"].deferred
    assert (
        first.checkpoint_after == (rv.store.episode("deploy-400", tenant="acme").seq or 0) - 1
    )  # stops before
    second = rv.dream(SCOPE, now=DAY + timedelta(hours=2))
    assert [c.action for c in second.changes] == ["revised"]
    marks = Counter(e.consolidated_in for e in rv.store.recent_episodes(SCOPE, 100))
    assert None not in marks and sum(marks.values()) == 15  # each exactly once, none skipped


def test_report_has_volumes_timings_and_insights(tmp_path: Path) -> None:
    rv = engine(tmp_path / "b.db")
    rv.ingest(episodes("deploy", 5, 0) + episodes("search", 3, 10))
    report = rv.dream(SCOPE, now=DAY)
    assert report.status == CycleStatus.COMMITTED
    assert report.clustered == 8 and report.groups == 2 and report.groups_deferred == 0
    assert report.bytes_in > 0 and report.bytes_out > 0
    assert report.compression_ratio == round(report.bytes_in / report.bytes_out, 3)
    assert {"collect", "cluster", "score", "distill", "validate"} <= set(report.timings)
    assert report.insights[0].topic_key.startswith("deploy|deploy-tool|")  # 5 beats 3
    assert report.insights[1].topic_key.startswith("search|search-tool|")
    assert report.tool_stats == {"deploy-tool": [5, 5], "search-tool": [3, 3]}
    stored = rv.cycle(report.cycle_id).report
    assert stored.insights == report.insights and stored.bytes_in == report.bytes_in


def _report(**fields: Any) -> CycleReport:
    return CycleReport(cycle_id="c", scope=SCOPE, status=CycleStatus.COMMITTED, started_at=DAY,
                       **fields)  # fmt: skip


def test_recommendations() -> None:
    config = DreamConfig(max_episodes_per_cycle=100)
    past = [_report(scanned=20, collected=5, tool_stats={"curl": [10, 1]}, deferred=10)]
    now = _report(scanned=20, collected=5, tool_stats={"curl": [10, 6]}, deferred=40)
    kinds = {r.kind: r for r in recommend(now, past, config)}
    assert kinds["tool-failing-more"].subject == "curl"
    assert "dream more often" in kinds["backlog"].message
    steady = _report(scanned=20, collected=5, tool_stats={"curl": [10, 1]}, deferred=5)
    assert recommend(steady, past, config) == []
    idle = [_report(scanned=7, collected=0) for _ in range(3)]
    assert [r.kind for r in recommend(idle[0], idle[1:], config)] == ["nothing-eligible"]
    assert recommend(idle[0], idle[1:2], config) == []


def test_nothing_eligible_is_recommended_from_real_cycles(tmp_path: Path) -> None:
    rv = engine(tmp_path / "b.db", importance_threshold=10, min_pattern=99)
    for day in range(3):
        rv.ingest(
            [
                {"scope": SCOPE.key, "situation": f"routine check {day}-{i}", "importance": 2}
                for i in range(2)
            ]
        )
        report = rv.dream(SCOPE, now=DAY + timedelta(days=day))
    assert [r.kind for r in report.recommendations] == ["nothing-eligible"]
