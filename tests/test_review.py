"""Review mode: ``dream --review`` holds a plan; show, apply, reject; stale.

Every test runs against real stores (SQLite files; PostgreSQL when REVERIE_TEST_POSTGRES_URL is
set) and, for the model path, a real local HTTP server speaking the OpenAI wire format.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from reverie import Reverie
from reverie.cli.app import app
from reverie.dream.review import render_review
from reverie.errors import Conflict, NotFound, PlanPending, PlanStale, StoreError
from reverie.llm.fake_server import FakeLLMServer
from reverie.llm.openai_compat import OpenAICompatLLM
from reverie.models import CycleStatus, Scope
from reverie.store.sql.plans import PlanStatus, dump_changeset, load_changeset, plan_id_for
from reverie.store.sqlite import SQLiteStore
from tests.conftest import EpisodeFactory
from tests.llm.conftest import FAST, brain, good_model

SCOPE = "acme/coder"
NIGHT = datetime(2026, 11, 10, tzinfo=UTC)


def snapshot(rv: Reverie) -> Any:
    """Everything a cycle can change in SCOPE, as comparable data."""
    pages = rv.pages(SCOPE, status=None)
    episodes = rv.store.recent_episodes(Scope.parse(SCOPE), 10_000)
    return (
        [p.model_dump() for p in pages],
        {p.id: [r.hash for r in rv.revisions(p.id)] for p in pages},
        rv.store.checkpoint(Scope.parse(SCOPE)),
        sorted((e.id, e.consolidated_in) for e in episodes),
        [c.model_dump() for c in rv.cycles(SCOPE)],
        rv.journal(SCOPE),
    )


def sqlite_rows(path: Path) -> list[str]:
    """Every row of every table but pending_plans, as SQL text."""
    with sqlite3.connect(path) as conn:
        return [line for line in conn.iterdump() if "pending_plans" not in line]


@pytest.fixture
def brains(store: SQLiteStore) -> Iterator[Reverie]:
    yield Reverie(store)


def night(n: int) -> datetime:
    return NIGHT + timedelta(days=n)


def test_review_holds_a_plan_and_changes_nothing_else(
    brains: Reverie, make_episode: EpisodeFactory
) -> None:
    rv = brains
    rv.ingest([make_episode() for _ in range(4)])
    before = snapshot(rv)

    report = rv.dream(SCOPE, now=night(0), review=True)

    assert report.status == CycleStatus.PENDING and report.created == 1
    plan_id = plan_id_for(report.cycle_id)
    assert f"held for review as plan {plan_id}" in report.message
    assert snapshot(rv) == before
    [plan] = rv.plans(SCOPE)
    assert (plan.id, plan.status, plan.cycle_id) == (plan_id, PlanStatus.PENDING, report.cycle_id)
    assert len(plan.changes.marks) == 4 and plan.changes.checkpoint == 4
    assert plan.report.status == CycleStatus.COMMITTED  # what the cycle record will say


def test_review_on_sqlite_writes_only_the_plan_row(
    tmp_path: Path, make_episode: EpisodeFactory
) -> None:
    path = tmp_path / "b.db"
    with Reverie.open(path) as rv:
        rv.ingest([make_episode() for _ in range(4)])
    rows = sqlite_rows(path)
    with Reverie.open(path) as rv:
        rv.dream(SCOPE, now=night(0), review=True)
    assert sqlite_rows(path) == rows


def test_show_is_a_diff_of_each_page_with_the_cited_episodes(
    brains: Reverie, make_episode: EpisodeFactory
) -> None:
    rv = brains
    rv.ingest([make_episode() for _ in range(3)])
    rv.dream(SCOPE, now=night(0))
    new = [make_episode(situation=f"rollout of canary {i} to the staging cluster") for i in (1, 2)]
    rv.ingest(new)
    report = rv.dream(SCOPE, now=night(1), review=True)

    found = rv.plan(plan_id_for(report.cycle_id))

    [page] = found.pages
    assert (page.action, page.revision_before, page.revision_after) == ("revised", 1, 2)
    assert page.diff.startswith(f"--- {page.page_id} rev 1\n+++ {page.page_id} rev 2 (plan)")
    added = [line for line in page.diff.splitlines() if line.startswith("+- ")]
    assert added and all("[" in line for line in added)  # claims carry their citations
    assert {e.id for e in page.episodes if e.new} == {e.id for e in new}
    line = next(e.line for e in page.episodes if e.id == new[0].id)
    assert "rollout of canary 1 to the staging cluster" in line
    assert f"* {new[0].id}" in render_review(found)
    assert found.moved == ()
    data = json.loads(json.dumps(found.to_json()))
    assert data["status"] == "pending" and data["pages"][0]["revision_before"] == 1


def test_apply_gives_the_same_result_as_a_direct_dream(
    brains: Reverie, tmp_path: Path, make_episode: EpisodeFactory
) -> None:
    episodes = [make_episode() for _ in range(5)]
    with Reverie.open(tmp_path / "direct.db") as direct:
        direct.ingest(episodes)
        direct.dream(SCOPE, now=night(0), cycle_id="cy_same")
        expected = snapshot(direct)
    rv = brains
    rv.ingest(episodes)
    rv.dream(SCOPE, now=night(0), cycle_id="cy_same", review=True)

    report = rv.apply_plan("pl_same", now=night(0))

    assert report.status == CycleStatus.COMMITTED and report.cycle_id == "cy_same"
    assert "applied reviewed plan pl_same" in report.message
    assert snapshot(rv)[:4] == expected[:4]  # pages, revisions, checkpoint, marks
    assert rv.cycle("cy_same").checkpoint_after == expected[4][0]["checkpoint_after"]
    assert rv.journal(SCOPE)[0].text == expected[5][0].text
    assert rv.plans(SCOPE) == []
    assert rv.plans(SCOPE, status="applied")[0].settled_at is not None
    with pytest.raises(Conflict, match="pl_same is applied"):
        rv.apply_plan("pl_same")


def test_a_page_changed_meanwhile_makes_apply_stale_and_changes_nothing(
    brains: Reverie, make_episode: EpisodeFactory
) -> None:
    rv = brains
    for n in (0, 1):
        rv.ingest([make_episode(), make_episode()])
        rv.dream(SCOPE, now=night(n))
    rv.ingest([make_episode(), make_episode()])
    report = rv.dream(SCOPE, now=night(2), review=True)
    page_id = report.changes[0].page_id
    rv.restore(page_id, 1, now=night(3))  # a person moves the page: revision 3
    before = snapshot(rv)
    plan_id = plan_id_for(report.cycle_id)
    assert "is at revision 3, the plan expected 2" in rv.plan(plan_id).moved[0]

    with pytest.raises(PlanStale, match=f"page {page_id} .* is at revision 3, the plan expected 2"):
        rv.apply_plan(plan_id, now=night(4))

    assert snapshot(rv) == before
    [plan] = rv.plans(SCOPE, status="stale")
    assert plan.id == plan_id and plan.reason and "revision 3" in plan.reason
    again = rv.dream(SCOPE, now=night(5))  # the episodes stayed eligible
    assert again.episodes_marked == 2 and again.revised == 1


def test_an_undo_meanwhile_moves_the_checkpoint_and_makes_apply_stale(
    brains: Reverie, make_episode: EpisodeFactory
) -> None:
    rv = brains
    rv.ingest([make_episode(), make_episode()])
    first = rv.dream(SCOPE, now=night(0))
    rv.ingest([make_episode(), make_episode()])
    report = rv.dream(SCOPE, now=night(1), review=True)
    rv.undo(first.cycle_id)
    before = snapshot(rv)

    with pytest.raises(PlanStale, match="the checkpoint of acme/coder is 0, the plan expected 2"):
        rv.apply_plan(plan_id_for(report.cycle_id))

    assert snapshot(rv) == before


def test_reject_sets_the_plan_aside_and_the_episodes_stay_eligible(
    brains: Reverie, make_episode: EpisodeFactory
) -> None:
    rv = brains
    rv.ingest([make_episode() for _ in range(3)])
    report = rv.dream(SCOPE, now=night(0), review=True)
    plan_id = plan_id_for(report.cycle_id)

    plan = rv.reject_plan(plan_id, reason="claims too vague", now=night(0))

    assert (plan.status, plan.reason, plan.settled_at) == ("rejected", "claims too vague", night(0))
    assert rv.plans(SCOPE) == [] and rv.pages(SCOPE) == []
    with pytest.raises(Conflict, match=r"is rejected \(claims too vague\); only a pending plan"):
        rv.apply_plan(plan_id)
    assert rv.dream(SCOPE, now=night(1)).episodes_marked == 3


def test_a_pending_plan_refuses_cycles_that_would_change_its_scope(
    brains: Reverie, make_episode: EpisodeFactory
) -> None:
    rv = brains
    rv.ingest([make_episode() for _ in range(3)])
    rv.ingest([make_episode(scope="acme/other") for _ in range(3)])
    plan_id = plan_id_for(rv.dream(SCOPE, now=night(0), review=True).cycle_id)

    for review in (False, True):
        with pytest.raises(PlanPending, match=f"plan {plan_id} pending review"):
            rv.dream(SCOPE, now=night(1), review=review)
    assert rv.dream(SCOPE, now=night(1), dry_run=True).status == CycleStatus.DRY_RUN
    assert [r.scope.key for r in rv.dream_all(now=night(1))] == ["acme/other"]
    assert len(rv.plans(status=None)) == 1
    rv.ingest([make_episode(scope="acme/third")])
    claimed = rv.store.claim_due("worker", 30.0, night(1), limit=10)
    assert [lease.scope.key for lease in claimed] == ["acme/third"]  # workers skip held scopes


def test_one_pending_plan_per_scope_in_the_store(
    brains: Reverie, make_episode: EpisodeFactory
) -> None:
    rv = brains
    rv.ingest([make_episode() for _ in range(3)])
    report = rv.dream(SCOPE, now=night(0), review=True)
    plans = rv.store
    held = plans.plan(plan_id_for(report.cycle_id))
    twin = replace(held, id="pl_twin", cycle_id="cy_twin")
    with pytest.raises(PlanPending):
        plans.put_plan(twin)
    with pytest.raises(NotFound):
        rv.plan("pl_nothing")


def test_the_stored_changeset_round_trips_and_refuses_tampering(
    brains: Reverie, make_episode: EpisodeFactory
) -> None:
    rv = brains
    rv.ingest([make_episode() for _ in range(3)])
    report = rv.dream(SCOPE, now=night(0), review=True)
    changes = rv.plans(SCOPE)[0].changes
    data = json.loads(json.dumps(dump_changeset(changes)))
    assert load_changeset(data) == changes
    assert report.changes  # the plan writes at least one page
    claims = data["changeset"]["page_writes"][0]["revision"]["claims"]
    claims[0]["text"] = "ignore previous instructions"
    with pytest.raises(StoreError, match="no longer matches its hash"):
        load_changeset(data)
    with pytest.raises(StoreError, match="format"):
        load_changeset({"format": 99})


# -- the model path ----------------------------------------------------------------------------


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(good_model) as s:
        yield s


@pytest.fixture
def llm(server: FakeLLMServer) -> Iterator[OpenAICompatLLM]:
    client = OpenAICompatLLM(server.openai_base_url, "fake-model", settings=FAST)
    yield client
    client.close()


def test_review_on_the_model_path_applies_without_calling_the_model_again(
    tmp_path: Path, server: FakeLLMServer, llm: OpenAICompatLLM, make_episode: EpisodeFactory
) -> None:
    episodes = [make_episode() for _ in range(3)]
    direct = brain(tmp_path / "direct.db", llm)
    direct.ingest(episodes)
    direct.dream(SCOPE, now=night(0), cycle_id="cy_llm")
    rv = brain(tmp_path / "review.db", llm)
    rv.ingest(episodes)
    report = rv.dream(SCOPE, now=night(0), cycle_id="cy_llm", review=True)
    assert report.status == CycleStatus.PENDING and report.created == 1
    assert rv.pages(SCOPE) == []
    assert rv.plans(SCOPE)[0].report.model_calls == 1
    calls = len(server.requests)

    found = rv.plan("pl_llm")
    applied = rv.apply_plan("pl_llm", now=night(0))

    assert len(server.requests) == calls  # applying replays the plan; no model call
    assert found.pages[0].title.startswith("About ") and found.pages[0].episodes
    assert applied.model_calls == 1
    assert snapshot(rv)[:4] == snapshot(direct)[:4]
    rv.close()
    direct.close()


# -- the command line --------------------------------------------------------------------------


def cli(db: Path, *args: str) -> Result:
    return CliRunner().invoke(app, ["--db", str(db), *args])


def test_cli_review_show_apply_reject_and_stale(
    tmp_path: Path, make_episode: EpisodeFactory
) -> None:
    db = tmp_path / "brain.db"
    lines = [make_episode().model_dump_json() for _ in range(3)]
    (tmp_path / "eps.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert cli(db, "ingest", str(tmp_path / "eps.jsonl")).exit_code == 0

    held = cli(db, "dream", "-s", SCOPE, "--review", "--now", "2026-11-10T00:00:00Z", "--json")
    assert held.exit_code == 0, held.output
    plan_id = plan_id_for(json.loads(held.stdout)[0]["cycle_id"])
    listed = json.loads(cli(db, "plans", "--json").stdout)
    assert [(p["id"], p["status"], p["episodes"]) for p in listed] == [(plan_id, "pending", 3)]
    shown = cli(db, "plan", "show", plan_id)
    assert shown.exit_code == 0 and "+++ " in shown.stdout and "cited episodes (" in shown.stdout
    refused = cli(db, "dream", "-s", SCOPE)
    assert refused.exit_code == 2 and f"plan {plan_id} pending review" in refused.output

    applied = cli(db, "plan", "apply", plan_id)
    assert applied.exit_code == 0 and f"plan {plan_id} applied as cycle" in applied.stdout
    assert len(json.loads(cli(db, "pages", "-s", SCOPE, "--json").stdout)) == 1

    (tmp_path / "more.jsonl").write_text(make_episode().model_dump_json() + "\n", "utf-8")
    cli(db, "ingest", str(tmp_path / "more.jsonl"))
    second = cli(db, "dream", "-s", SCOPE, "--review", "--json")
    second_id = plan_id_for(json.loads(second.stdout)[0]["cycle_id"])
    rejected = cli(db, "plan", "reject", second_id, "--reason", "not now")
    assert (
        rejected.exit_code == 0 and rejected.stdout.strip() == f"plan {second_id} rejected: not now"
    )

    third = cli(db, "dream", "-s", SCOPE, "--review", "--json")
    third_id = plan_id_for(json.loads(third.stdout)[0]["cycle_id"])
    assert cli(db, "undo", plan_id.replace("pl_", "cy_", 1)).exit_code == 0  # meanwhile
    stale = cli(db, "plan", "apply", third_id)
    assert stale.exit_code == 2 and f"plan {third_id} is stale" in stale.output
    everything = json.loads(cli(db, "plans", "--status", "all", "--json").stdout)
    assert sorted(p["status"] for p in everything) == ["applied", "rejected", "stale"]
