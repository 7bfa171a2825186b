"""The cycle end to end on a real SQLite file: collection, caps, identity, validation, undo."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from reverie import Config, DreamConfig, Reverie, UndoRefused
from reverie.dream.distill import ExtractiveDistiller
from reverie.embed import HashingEmbedder
from reverie.models import Claim, CycleStatus, PageKind, PageStatus
from reverie.models.plan import CreatePage, Evidence, Plan
from reverie.store.sqlite import SQLiteStore
from reverie.testing import ScriptedDistiller
from tests.conftest import EpisodeFactory

SCOPE = "acme/coder"
DAY = datetime(2026, 11, 10, tzinfo=UTC)


def engine(path: Path, **dream: object) -> Reverie:
    store = SQLiteStore(path)
    store.migrate()
    return Reverie(store, config=Config(dream=DreamConfig(**dream)))  # type: ignore[arg-type]


def snapshot(rv: Reverie) -> dict[str, str]:
    return {p.id: p.revision.hash for p in rv.pages(SCOPE, None)}


def test_a_cycle_with_nothing_new_changes_nothing(
    rv: Reverie, make_episode: EpisodeFactory
) -> None:
    rv.ingest([make_episode() for _ in range(4)])
    first = rv.dream(SCOPE, now=DAY)
    assert first.status == CycleStatus.COMMITTED and first.created == 1
    before = (snapshot(rv), rv.status(SCOPE))
    again = rv.dream(SCOPE, now=DAY + timedelta(days=1))
    assert again.status == CycleStatus.EMPTY
    assert (snapshot(rv), rv.status(SCOPE)) == before


def test_cap_defers_and_never_skips(tmp_path: Path, make_episode: EpisodeFactory) -> None:
    rv = engine(tmp_path / "b.db", max_episodes_per_cycle=3)
    eps = [make_episode(importance=8) for _ in range(7)]
    rv.ingest(eps)
    reports = [rv.dream(SCOPE, now=DAY + timedelta(hours=i)) for i in range(4)]
    assert [r.collected for r in reports] == [3, 3, 1, 0]
    assert [r.deferred for r in reports[:3]] == [4, 1, 0]
    marked = [rv.store.episode(e.id, tenant="acme").consolidated_in for e in eps]
    assert all(marked) and len({m for m in marked}) == 3


def test_out_of_order_timestamp_is_collected_by_seq(
    rv: Reverie, make_episode: EpisodeFactory
) -> None:
    rv.ingest([make_episode() for _ in range(3)])
    rv.dream(SCOPE, now=DAY)
    late = rv.remember(make_episode(created_at=DAY - timedelta(days=30)))
    report = rv.dream(SCOPE, now=DAY + timedelta(days=1))
    assert report.collected == 1 and report.revised == 1
    assert rv.store.episode(late.id, tenant="acme").consolidated_in == report.cycle_id


def test_template_lesson_alone_does_not_make_an_episode_eligible(
    rv: Reverie, make_episode: EpisodeFactory
) -> None:
    template = rv.remember(make_episode(outcome="success", error=None, importance=2, lesson="N/A."))
    lesson = rv.remember(
        make_episode(
            outcome="success",
            error=None,
            importance=2,
            category="release",
            tools=["helm"],
            situation="upgrading the billing chart in production",
            action="helm upgrade billing ./chart",
            lesson="Pin the chart version.",
        )
    )
    report = rv.dream(SCOPE, now=DAY)
    assert report.scanned == 2 and report.collected == 1
    (page,) = rv.pages(SCOPE)
    assert list(page.citations) == [lesson.id]
    assert (
        rv.store.episode(template.id, tenant="acme").consolidated_in is None
    )  # passed, not marked
    assert rv.store.episode(lesson.id, tenant="acme").consolidated_in == report.cycle_id
    assert rv.status(SCOPE).checkpoint == 2  # the checkpoint moved past the passed episode


def test_routine_successes_are_passed_not_consolidated(
    rv: Reverie, make_episode: EpisodeFactory
) -> None:
    eps = [make_episode(outcome="success", error=None, importance=2) for _ in range(3)]
    rv.ingest(eps)
    report = rv.dream(SCOPE, now=DAY)
    assert report.scanned == 3 and report.collected == 0 and report.created == 0
    assert rv.pages(SCOPE) == [] and report.checkpoint_after == 3
    assert all(rv.store.episode(e.id, tenant="acme").consolidated_in is None for e in eps)
    assert rv.dream(SCOPE, now=DAY + timedelta(days=1)).status == CycleStatus.EMPTY


def test_recurring_low_importance_failures_become_eligible(
    rv: Reverie, make_episode: EpisodeFactory
) -> None:
    eps = [make_episode(importance=2) for _ in range(3)]
    rv.ingest(eps)
    report = rv.dream(SCOPE, now=DAY)
    assert report.collected == 3 and report.created == 1
    (page,) = rv.pages(SCOPE)
    assert sorted(page.citations) == sorted(e.id for e in eps)
    assert all(
        rv.store.episode(e.id, tenant="acme").consolidated_in == report.cycle_id for e in eps
    )


def test_colliding_titles_never_overwrite_each_other(
    rv: Reverie, make_episode: EpisodeFactory
) -> None:
    def same_title(ev: Evidence) -> Plan:
        claim = Claim(
            text="something about " + ev.topic_key, episode_ids=tuple(e.id for e in ev.episodes)
        )
        op = CreatePage(
            topic_key=ev.topic_key,
            title="Deployment notes",
            kind=PageKind.FACT,
            confidence=0.8,
            claims=(claim,),
        )
        return Plan(operations=(op,))

    rv.distiller = ScriptedDistiller(same_title)
    rv.ingest(
        [
            make_episode(category="deploy", importance=8),
            make_episode(
                category="build",
                tools=["docker"],
                situation="building the worker image for the nightly release",
                action="docker build -t worker .",
                error="OSError: no space left on device",
                importance=8,
            ),
        ]
    )
    report = rv.dream(SCOPE, now=DAY)
    pages = rv.pages(SCOPE)
    assert report.created == 2 and len({p.id for p in pages}) == 2
    assert {p.title for p in pages} == {"Deployment notes"}


def test_invalid_plan_changes_no_byte_and_group_stays_eligible(
    tmp_path: Path, make_episode: EpisodeFactory
) -> None:
    rv = engine(tmp_path / "c.db")
    rv.ingest([make_episode(importance=9) for _ in range(3)])
    rv.store.close()
    db = tmp_path / "c.db"
    digest = hashlib.sha256(db.read_bytes()).hexdigest()

    def invents(ev: Evidence) -> Plan:
        claim = Claim(text="made up", episode_ids=("ep-not-in-evidence",))
        op = CreatePage(
            topic_key=ev.topic_key, title="x", kind=PageKind.FACT, confidence=0.9, claims=(claim,)
        )
        return Plan(operations=(op,))

    store = SQLiteStore(db)
    rv = Reverie(store, distiller=ScriptedDistiller(invents))
    report = rv.dream(SCOPE, now=DAY)
    assert report.rejected and "not in the evidence" in report.rejected[0]
    assert report.checkpoint_after == 0 and report.episodes_marked == 0
    store.close()
    assert hashlib.sha256(db.read_bytes()).hexdigest() != "" and rv.store is store
    rv = Reverie(SQLiteStore(db))
    assert rv.pages(SCOPE) == [] and len(rv.store.scan(rv.store.scopes()[0], 0, 10)) == 3
    assert rv.dream(SCOPE, now=DAY).created == 1  # still eligible for a good distiller
    rv.store.close()
    del digest


def test_dry_run_changes_nothing(rv: Reverie, make_episode: EpisodeFactory) -> None:
    rv.ingest([make_episode() for _ in range(3)])
    report = rv.dream(SCOPE, now=DAY, dry_run=True)
    assert report.status == CycleStatus.DRY_RUN and report.created == 1
    assert rv.pages(SCOPE) == [] and rv.cycles(SCOPE) == [] and rv.status(SCOPE).checkpoint == 0


def test_undo_round_trip(rv: Reverie, make_episode: EpisodeFactory) -> None:
    # One wording of the problem, so the re-dream after both undos founds the same topic key
    # (a retired page is no leader: the key comes from the founding signature alone).
    situation = "deploying the api service to the staging cluster"
    rv.ingest([make_episode(situation=situation) for _ in range(4)])
    first = rv.dream(SCOPE, now=DAY)
    created = snapshot(rv)
    rv.ingest([make_episode(situation=situation) for _ in range(2)])
    second = rv.dream(SCOPE, now=DAY + timedelta(days=1))
    assert second.revised == 1
    undo = rv.undo(second.cycle_id, now=DAY + timedelta(days=2))
    assert undo.episodes_released == 2
    assert snapshot(rv) == created  # back to the first cycle's content, as a new revision
    with pytest.raises(UndoRefused, match="already undone"):
        rv.undo(second.cycle_id)
    rv.undo(first.cycle_id)
    assert rv.pages(SCOPE) == [] and {p.status for p in rv.pages(SCOPE, None)} == {
        PageStatus.RETIRED
    }
    redo = rv.dream(SCOPE, now=DAY + timedelta(days=3))
    assert redo.collected == 6
    page = rv.pages(SCOPE)[0]
    assert page.status == PageStatus.ACTIVE and len(page.citations) == 6
    assert [r.number for r in rv.revisions(page.id)] == [1, 2, 3, 4, 5]


def test_undo_refuses_when_a_later_cycle_changed_the_same_page(
    rv: Reverie, make_episode: EpisodeFactory
) -> None:
    rv.ingest([make_episode() for _ in range(3)])
    first = rv.dream(SCOPE, now=DAY)
    rv.ingest([make_episode() for _ in range(2)])
    second = rv.dream(SCOPE, now=DAY + timedelta(days=1))
    with pytest.raises(UndoRefused, match=second.cycle_id):
        rv.undo(first.cycle_id)


def test_undo_of_an_earlier_cycle_keeps_later_work_on_other_pages(
    rv: Reverie, make_episode: EpisodeFactory
) -> None:
    rv.ingest([make_episode() for _ in range(3)])
    first = rv.dream(SCOPE, now=DAY)
    search = [
        make_episode(
            category="search",
            tools=["web_search"],
            situation="searching the web for the release notes",
            action="web_search 'release notes'",
            error="HTTP Error 429: Too Many Requests",
        )
        for _ in range(3)
    ]
    rv.ingest(search)
    rv.dream(SCOPE, now=DAY + timedelta(days=1))
    rv.undo(first.cycle_id)
    (page,) = rv.pages(SCOPE)
    assert page.topic_key.startswith("search|") and "HTTP 429" in page.title
    assert sorted(page.citations) == sorted(e.id for e in search)
    assert rv.dream(SCOPE, now=DAY + timedelta(days=2)).collected == 3  # the first cycle's episodes


def test_embedding_clusters_are_order_independent(
    tmp_path: Path, make_episode: EpisodeFactory
) -> None:
    eps = [
        make_episode(importance=8, category=None, tools=[], situation=s)
        for s in [
            "the flaky integration test in the api repo",
            "flaky integration test in api repo again",
            "rotate the vault database password",
            "vault database password rotation failed",
        ]
    ]
    layouts = []
    for order, name in ((eps, "a.db"), (list(reversed(eps)), "b.db")):
        store = SQLiteStore(tmp_path / name)
        store.migrate()
        rv = Reverie(store, embedder=HashingEmbedder(), distiller=ExtractiveDistiller())
        rv.ingest(order)
        rv.dream(SCOPE, now=DAY)
        layouts.append(sorted(sorted(p.citations) for p in rv.pages(SCOPE)))
        store.close()
    assert layouts[0] == layouts[1]


def test_the_message_states_the_reports_own_counts(tmp_path: Path) -> None:
    from reverie.cli.demo import load_sample  # noqa: PLC0415

    with Reverie.open(tmp_path / "b.db") as rv:
        rv.ingest(load_sample())
        report = rv.dream(SCOPE)
    assert report.scanned > report.collected > 0  # routine work was passed over
    assert report.message.startswith(
        f"{report.collected} collected, {report.created} created, {report.revised} revised,"
    )
    assert report.episodes_marked == report.collected
