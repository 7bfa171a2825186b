"""Storing the same episode twice stores it once: by id, by a content-derived id when none is
sent, and whether or not the client sent ``created_at`` (a date the server gave is no
difference between a retry and the first try)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from reverie import Reverie
from reverie.cli.app import app
from reverie.errors import Conflict
from reverie.models import Episode

pytest.importorskip("fastapi")

from reverie.server import create_app
from tests.server.conftest import start_server, stop_server

T0 = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
UNDATED = {"scope": "acme/coder", "situation": "deploy of api", "action": "kubectl apply",
           "outcome": "failure", "error": "ImagePullBackOff"}  # fmt: skip


def test_an_undated_episode_without_id_retried_later_is_stored_once(tmp_path: Path) -> None:
    with Reverie.open(tmp_path / "b.db") as rv:
        first = rv.remember(dict(UNDATED), now=T0)
        retry = rv.remember(dict(UNDATED), now=T0 + timedelta(minutes=5))
        assert retry.id == first.id and retry.seq == first.seq
        assert retry.created_at == T0  # the first arrival's date stays
        assert rv.store.stats().episodes == 1


def test_an_undated_episode_with_an_id_retried_later_is_stored_once(tmp_path: Path) -> None:
    with Reverie.open(tmp_path / "b.db") as rv:
        rv.remember({**UNDATED, "id": "e1"}, now=T0)
        result = rv.ingest([{**UNDATED, "id": "e1"}], now=T0 + timedelta(hours=1))
        assert (result.stored, result.duplicates, result.errors) == (0, 1, [])
        with pytest.raises(Conflict):  # other content under the same id still conflicts
            rv.remember({**UNDATED, "id": "e1", "action": "helm upgrade"}, now=T0)


def test_a_date_the_client_sent_is_part_of_the_episode(tmp_path: Path) -> None:
    with Reverie.open(tmp_path / "b.db") as rv:
        a = rv.remember({**UNDATED, "created_at": T0.isoformat()})
        b = rv.remember({**UNDATED, "created_at": (T0 + timedelta(days=1)).isoformat()})
        assert a.id != b.id and rv.store.stats().episodes == 2
        with pytest.raises(Conflict):
            rv.remember({**UNDATED, "id": a.id, "created_at": (T0 + timedelta(days=2)).isoformat()})


def test_the_derived_id_is_the_scopes_own_and_follows_the_content() -> None:
    base = Episode.parse(UNDATED)
    assert base.id.startswith("ep_") and not base.dated
    assert Episode.parse(dict(UNDATED)).id == base.id
    assert Episode.parse({**UNDATED, "scope": "globex/coder"}).id != base.id
    assert Episode.parse({**UNDATED, "error": "CrashLoopBackOff"}).id != base.id
    reordered = Episode.parse({**UNDATED, "metadata": {"b": 1, "a": 2}})
    assert Episode.parse({**UNDATED, "metadata": {"a": 2, "b": 1}}).id == reordered.id
    assert Episode.parse({**UNDATED, "id": "mine"}).id == "mine"


def test_one_batch_holding_a_retry_stores_it_once(tmp_path: Path) -> None:
    with Reverie.open(tmp_path / "b.db") as rv:
        result = rv.ingest([dict(UNDATED), dict(UNDATED), {**UNDATED, "action": "retry"}], now=T0)
        assert (result.stored, result.duplicates, result.errors) == (2, 1, [])


def test_reingesting_a_jsonl_file_without_ids_stores_nothing_new(tmp_path: Path) -> None:
    lines = [{**UNDATED, "action": f"step {i}"} for i in range(4)]
    lines += [{**UNDATED, "action": "dated", "created_at": T0.isoformat()}]
    path = tmp_path / "eps.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    db = str(tmp_path / "b.db")

    def run() -> str:
        result = CliRunner().invoke(app, ["--db", db, "ingest", str(path)])
        assert result.exit_code == 0, result.output
        return result.output.strip()

    assert run() == "stored 5 episodes, 0 duplicates skipped"
    assert run() == "stored 0 episodes, 5 duplicates skipped"
    with Reverie.open(db) as rv:
        assert rv.store.stats().episodes == 5


def test_a_retried_post_without_a_date_is_not_a_conflict(tmp_path: Path) -> None:
    rv = Reverie.open(tmp_path / "b.db")
    token = rv.keys.create("acme", rights="write")[1]
    running = start_server(create_app(rv))
    try:
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=running.url, headers=headers, timeout=10) as client:
            first = client.post("/v1/episodes", json=UNDATED)
            again = client.post("/v1/episodes", json=UNDATED)
        assert first.status_code == 201, first.text
        assert again.status_code == 201, again.text
        assert again.json()["id"] == first.json()["id"]
        assert again.json()["seq"] == first.json()["seq"]
    finally:
        stop_server(running)
        rv.close()


def test_one_batch_answers_a_dated_retry_as_two_calls_would(tmp_path: Path) -> None:
    dated = {**UNDATED, "id": "e1", "created_at": (T0 + timedelta(hours=1)).isoformat()}
    with Reverie.open(tmp_path / "two.db") as rv:
        rv.ingest([{**UNDATED, "id": "e1"}], now=T0)
        apart = rv.ingest([dated], now=T0 + timedelta(hours=2))
    with Reverie.open(tmp_path / "one.db") as rv:
        together = rv.ingest([{**UNDATED, "id": "e1"}, dated], now=T0 + timedelta(hours=2))
    assert (apart.duplicates, [e.field for e in apart.errors]) == (0, ["id"])
    assert (together.stored, together.duplicates) == (1, 0)
    assert [(e.index, e.reason) for e in together.errors] == [(1, apart.errors[0].reason)]
