"""One failing scope never stops the others, and a lost archive bundle is named, never hidden.

Two brains share a database file: ``acme/a`` is broken — its archive bundle is deleted or
altered on disk, or one of its rows is poisoned by an older version that stored metadata nested
300 deep — and ``acme/b`` is healthy. Every multi-scope operation (dream all, archive, the
training export, a dream worker) does ``acme/b`` and names ``acme/a``; every read of the broken
lineage (``why`` in the library, the CLI and over HTTP; ``GET /v1/episodes/ID``) says which
bundle is missing and what to do, instead of a traceback, a 500 or silently empty evidence.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner, Result

from reverie import Reverie
from reverie.cli.app import app
from reverie.dream.archive import Archive
from reverie.errors import ArchiveUnreadable, ScopesFailed
from reverie.memory.export import write_training
from reverie.runtime.worker import Worker
from reverie.server import create_app
from tests.conftest import failed_deploys
from tests.server.conftest import start_server, stop_server

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
ARCHIVED = T0 + timedelta(days=90)
BROKEN, HEALTHY = "acme/a", "acme/b"


def cli(db: Path, *args: str) -> Result:
    return CliRunner().invoke(app, ["--db", str(db), *args])


def archived_brains(db: Path) -> dict[str, str]:
    """Both scopes dreamed and archived; the bundle hash of each scope."""
    with Reverie.open(db) as rv:
        for scope in (BROKEN, HEALTHY):
            rv.ingest(failed_deploys(scope, T0, scope[-1]), now=T0 + timedelta(days=1))
        rv.dream_all(now=T0 + timedelta(days=1))
        run = Archive(rv.store).run(timedelta(days=30), ARCHIVED, apply=True)
    return {b.scope.key: b.hash for b in run.bundles}


def bundle_file(db: Path, bundle: str) -> Path:
    return db.parent / "archive" / f"{bundle.removeprefix('sha256:')}.jsonl.gz"


@pytest.fixture(params=["missing", "altered"])
def broken(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, str, str]:
    """A database whose acme/a bundle is missing or altered: (db, bundle, problem)."""
    db = tmp_path / "b.db"
    bundle = archived_brains(db)[BROKEN]
    path = bundle_file(db, bundle)
    if request.param == "missing":
        path.unlink()
        return db, bundle, "is missing"
    path.write_bytes(path.read_bytes()[:-8] + b"\0" * 8)
    return db, bundle, "was altered"


def page_of(db: Path, scope: str) -> str:
    with Reverie.open(db) as rv:
        return rv.pages(scope)[0].id


def test_why_names_the_bundle_and_the_remedy(broken: tuple[Path, str, str]) -> None:
    db, bundle, problem = broken
    with Reverie.open(db) as rv, pytest.raises(ArchiveUnreadable, match=problem) as failed:
        rv.why(rv.pages(BROKEN)[0].id)
    assert failed.value.bundle == bundle and "put that file back" in str(failed.value)
    result = cli(db, "why", page_of(db, BROKEN))
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert result.stderr.startswith("error: archive bundle " + bundle)
    as_json = cli(db, "why", "--json", page_of(db, BROKEN))  # the error as JSON on stdout
    assert as_json.exit_code == 2 and "Traceback" not in as_json.output
    assert json.loads(as_json.stdout)["error"]["message"].startswith("archive bundle " + bundle)
    assert cli(db, "why", page_of(db, HEALTHY)).exit_code == 0


def test_dream_all_goes_on_past_the_broken_scope(broken: tuple[Path, str, str]) -> None:
    db, bundle, _problem = broken
    later = ARCHIVED + timedelta(days=1)
    with Reverie.open(db) as rv:
        for scope in (BROKEN, HEALTHY):
            rv.ingest(
                failed_deploys(scope, later, f"new-{scope[-1]}"), now=later + timedelta(days=1)
            )
        with pytest.raises(ScopesFailed) as failed:
            rv.dream_all(now=later + timedelta(days=1))
        assert list(failed.value.failures) == [BROKEN] and bundle in failed.value.failures[BROKEN]
        assert [r.scope.key for r in failed.value.done] == [HEALTHY]
        assert rv.store.pending_scopes() == [rv.scopes()[0]]  # acme/a waits, nothing lost
    again = cli(db, "dream", "--now", (later + timedelta(days=2)).isoformat())
    assert (
        again.exit_code == 2 and f"error: dream of {BROKEN} failed: archive bundle" in again.stderr
    )


def test_the_training_export_writes_the_others_and_names_the_bundle(
    broken: tuple[Path, str, str], tmp_path: Path
) -> None:
    db, bundle, _problem = broken
    out = tmp_path / "train.jsonl"
    with Reverie.open(db) as rv, pytest.raises(ScopesFailed, match=bundle) as failed:
        write_training(rv.store, out)
    assert failed.value.done.rows == 1
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["metadata"]["scope"] for r in rows] == [HEALTHY]
    assert "Situation: deploying the api" in rows[0]["messages"][1]["content"]
    result = cli(db, "export", "training", str(tmp_path / "again.jsonl"))
    assert result.exit_code == 2 and "wrote 1 row " in result.stdout
    assert f"error: export training of {BROKEN} failed: archive bundle {bundle}" in result.stderr


@pytest.fixture
def served(broken: tuple[Path, str, str]) -> Iterator[tuple[httpx.Client, str]]:
    db, bundle, _problem = broken
    rv = Reverie.open(db)
    token = rv.keys.create("acme", rights="read", name="reader")[1]
    running = start_server(create_app(rv))
    try:
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=running.url, headers=headers, timeout=30) as client:
            yield client, bundle
    finally:
        stop_server(running)
        rv.close()


def test_http_answers_the_bundle_problem_not_a_500(served: tuple[httpx.Client, str]) -> None:
    client, bundle = served
    page = client.get("/v1/pages", params={"scope": BROKEN}).json()[0]["id"]
    for path in (f"/v1/pages/{page}/why", "/v1/episodes/a0"):
        response = client.get(path)
        assert response.status_code == 503, (path, response.text)
        error = response.json()["error"]
        assert error["code"] == "archive_unreadable" and bundle in error["message"]
    assert client.get("/v1/episodes/b0").json()["situation"] == "deploying the api to staging"


def poison(db: Path, episode_id: str, levels: int) -> None:
    """What an older version let in: metadata nested past what any reader can serialise."""
    deep = '{"a": ' * levels + "{}" + "}" * levels
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE episodes SET metadata = ? WHERE id = ?", (deep, episode_id))
    conn.close()


def test_archive_goes_on_past_a_poisoned_row(tmp_path: Path) -> None:
    db = tmp_path / "b.db"
    with Reverie.open(db) as rv:
        for scope in (BROKEN, HEALTHY):
            rv.ingest(failed_deploys(scope, T0, scope[-1]), now=T0 + timedelta(days=1))
        rv.dream_all(now=T0 + timedelta(days=1))
    poison(db, "a1", 900)
    result = cli(db, "archive", "--older-than", "30", "--apply", "--now", ARCHIVED.isoformat())
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "moved 4 episodes" in result.stdout
    assert result.stderr.startswith(f"error: archive of {BROKEN} failed:")
    with Reverie.open(db) as rv:
        assert [b.scope.key for b in Archive(rv.store).bundles()] == [HEALTHY]
        assert rv.episode("a0", tenant="acme").situation  # the broken scope kept every episode hot


def test_a_poisoned_row_still_reads_back_with_a_note(tmp_path: Path) -> None:
    db = tmp_path / "b.db"
    with Reverie.open(db) as rv:
        rv.ingest(failed_deploys(BROKEN, T0, "a"), now=T0 + timedelta(days=1))
        rv.dream(BROKEN, now=T0 + timedelta(days=1))
    poison(db, "a1", 900)
    result = cli(db, "why", "--json", page_of(db, BROKEN))
    assert result.exit_code == 0, result.output
    episodes = {e["id"]: e for e in json.loads(result.stdout)["episodes"]}
    assert "_unreadable" in episodes["a1"]["metadata"] and episodes["a1"]["situation"]
    with Reverie.open(db) as rv:
        assert "nested more than" in rv.episode("a1", tenant="acme").metadata["_unreadable"]


def test_a_worker_dreams_the_others_and_leaves_the_broken_scope_pending(
    broken: tuple[Path, str, str],
) -> None:
    db, bundle, _problem = broken
    later = ARCHIVED + timedelta(days=1)
    with Reverie.open(db) as rv:
        for scope in (BROKEN, HEALTHY):
            rv.ingest(failed_deploys(scope, later, f"new-{scope[-1]}"), now=later)
        events: list[dict[str, Any]] = []
        worker = Worker(rv, rv.store, poll=0.01, backoff=0, on_event=events.append)
        stats = worker.run(until_idle=True)  # returns: only the failed scope is left pending
        assert stats.scopes == [HEALTHY] and list(stats.failed) == [BROKEN]
        assert bundle in stats.failed[BROKEN]
        assert {e["scope"] for e in events if e["event"] == "failed"} == {BROKEN}
        assert [s.key for s in rv.store.pending_scopes()] == [BROKEN]  # waits, nothing lost
    result = cli(db, "worker", "--until-idle", "--poll", "0.01", "--backoff", "0")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"error: dream of {BROKEN} failed: ArchiveUnreadable: archive bundle" in result.stderr
