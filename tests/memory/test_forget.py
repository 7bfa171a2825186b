"""``forget`` at every level, through the facade, the CLI and HTTP: what each target reaches
(and what it must not), retention by age, pages re-derived from the evidence kept, verify after
an erasure, the mirror rewritten at once, receipts, and the admin right."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from reverie import Reverie
from reverie.cli.app import app
from reverie.errors import InvalidInput, NotFound
from reverie.memory.mirror import FOLDER
from reverie.models import Scope
from reverie.server.app import create_app
from tests.pg import schema_url
from tests.server.conftest import start_server, stop_server

T0 = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)
NOW = T0 + timedelta(days=500)


def _problem(scope: str, prefix: str, n: int, day: int, topic: str) -> list[dict[str, Any]]:
    """``n`` failures of one problem in ``scope``, stored ``day`` days after T0."""
    return [
        {
            "id": f"{prefix}-{i}",
            "scope": scope,
            "created_at": (T0 + timedelta(days=day, hours=i)).isoformat(),
            "situation": f"{topic} failed on staging ({prefix} {i})",
            "action": f"retry the {topic} with kubectl",
            "outcome": "failure",
            "error": "TimeoutError: timed out",
            "lesson": f"raise the {topic} timeout to ten minutes",
            "tools": ["kubectl"],
        }
        for i in range(n)
    ]


@pytest.fixture
def brain(tmp_path: Path) -> Any:
    with Reverie.open(tmp_path / "brain.db") as rv:
        rv.ingest(
            _problem("acme/coder", "old", 4, 0, "rollout")
            + _problem("acme/coder", "new", 4, 450, "rollout")
            + _problem("acme/coder/alice", "al", 4, 450, "migration")
            + _problem("acme/tester", "ts", 4, 450, "build")
            + _problem("globex/bot", "gx", 4, 450, "rollout")
        )
        rv.dream_all(now=NOW)
        yield rv


def _ids(rv: Reverie, scope: str) -> set[str]:
    return {e.id for e in rv.store.recent_episodes(Scope.parse(scope), 1000)}


def test_retention_keeps_claims_only_where_kept_evidence_supports_them(brain: Reverie) -> None:
    page = next(p for p in brain.pages("acme/coder") if "rollout" in p.title)
    assert {"old-0", "new-0"} <= set(page.citations)
    dry = brain.forget(older_than="400d", scope="acme/coder", now=NOW)
    assert dry.applied is False and dry.details["episodes"] == [f"old-{i}" for i in range(4)]
    assert brain.page(page.id) == page  # a dry run changes nothing
    done = brain.forget(older_than="400d", scope="acme/coder", apply=True, now=NOW)
    assert done.details["pages_rederived"] == [page.id] and done.counts["citations"] >= 4
    kept = brain.page(page.id)
    assert not {c for c in kept.citations if c.startswith("old-")} and kept.revision.claims
    assert all(set(c.episode_ids) <= _ids(brain, "acme/coder") for c in kept.revision.claims)
    stones = [t for t in done.tombstones if t.page_id == page.id]
    assert stones and stones[-1].hash_after == kept.revision.hash
    report = brain.verify()
    assert report.ok and report.erased == len(stones) and report.unfinished == []
    assert _ids(brain, "acme/coder/alice") == {f"al-{i}" for i in range(4)}  # other scopes: kept


def test_a_scope_is_matched_exactly_an_agent_reaches_its_users_a_tenant_everything(
    brain: Reverie,
) -> None:
    coder = brain.forget(scope="acme/coder", now=NOW)
    assert coder.details["scopes_erased"] == ["acme/coder"]  # not acme/coder/alice
    agent = brain.forget(agent="acme/coder", now=NOW)
    assert agent.details["scopes_erased"] == ["acme/coder", "acme/coder/alice"]
    tenant = brain.forget(tenant="acme", apply=True, now=NOW)
    assert "acme/tester" in tenant.details["scopes_erased"]
    assert [s.key for s in brain.scopes()] == ["globex/bot"]
    assert brain.pages("globex/bot") and brain.verify().ok
    with pytest.raises(NotFound):
        brain.forget(tenant="acme", now=NOW)  # nothing left to erase


def test_forgetting_a_page_erases_its_content_and_keeps_its_episodes(brain: Reverie) -> None:
    page = brain.pages("acme/tester")[0]
    done = brain.forget(page=page.id, apply=True, reason="asked by the owner", now=NOW)
    assert done.details["pages_deleted"] == [page.id] and done.details["episodes"] == []
    assert {t.hash_after for t in done.tombstones} == {None}
    with pytest.raises(NotFound):
        brain.page(page.id)
    assert _ids(brain, "acme/tester") == {f"ts-{i}" for i in range(4)}
    assert brain.erasure(done.id).details["reason"] == "asked by the owner"


def test_a_request_names_one_thing_and_a_subject_long_enough(brain: Reverie) -> None:
    with pytest.raises(InvalidInput, match="one thing"):
        brain.forget(page="pg_x", subject="rollout", now=NOW)
    with pytest.raises(InvalidInput, match="at least 3"):
        brain.forget(subject="ab", now=NOW)
    with pytest.raises(InvalidInput, match="what to erase"):
        brain.forget(now=NOW)


def test_the_mirror_is_rewritten_at_once_and_erased_files_go(
    brain: Reverie, tmp_path: Path
) -> None:
    mirror = tmp_path / "mirror"
    brain.export_markdown("acme/tester", mirror)
    (before,) = (mirror / FOLDER).glob("*.md")
    brain.forget(subject="build failed", scope="acme/tester", apply=True, now=NOW)
    assert not before.exists() and not list((mirror / FOLDER).glob("*.md"))
    assert "build" not in (mirror / "MEMORY.md").read_text()


def test_a_claude_code_folder_is_rewritten_at_once_and_its_erased_files_go(
    brain: Reverie, tmp_path: Path
) -> None:
    folder = tmp_path / "claude-memory"
    (folder).mkdir()
    (folder / "mine.md").write_text("a note of my own about the build\n")  # not Reverie's
    brain.export_markdown("acme/tester", folder, layout="claude-code")
    written = [p for p in folder.glob("*.md") if p.name not in ("MEMORY.md", "mine.md")]
    assert written and all("build" in p.read_text() for p in written)
    brain.forget(subject="build failed", scope="acme/tester", apply=True, now=NOW)
    assert not any(p.exists() for p in written)
    assert "build" not in (folder / "MEMORY.md").read_text()
    assert (folder / "mine.md").read_text() == "a note of my own about the build\n"


def _cli(db: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["--db", str(db), *args])
    return result.exit_code, result.stdout + result.stderr


def test_the_cli_dry_runs_applies_and_shows_the_receipt(brain: Reverie, tmp_path: Path) -> None:
    db = Path(brain.store.url.removeprefix("sqlite:///"))
    code, out = _cli(db, "forget", "--episode", "ts-0")
    assert code == 2 and "episode ids are a tenant's own" in out  # whose ts-0?
    code, out = _cli(db, "forget", "--episode", "ts-0", "--episode", "nope", "--tenant", "acme")
    assert code == 0 and "dry run" in out and "ts-0" in out and "not found" in out
    code, out = _cli(db, "forget", "--episode", "ts-0", "--tenant", "acme", "--apply", "--json")
    receipt = json.loads(out)
    assert code == 0 and receipt["applied"] and receipt["episodes"] == ["ts-0"]
    code, out = _cli(db, "forget", "--receipt", receipt["id"])
    assert code == 0 and receipt["id"] in out and "episodes (1): ts-0" in out
    code, out = _cli(db, "forget", "--resume")
    assert code == 0 and "0 erasure(s) still unfinished" in out
    code, out = _cli(db, "forget")
    assert code == 2 and "name what to forget" in out
    code, out = _cli(db, "verify")
    assert code == 0 and "ok" in out


def test_http_erasure_needs_an_admin_key_and_stays_in_its_tenant(brain: Reverie) -> None:
    _key, writer = brain.keys.create("acme", rights="write")
    _key, admin = brain.keys.create("acme", rights="admin")
    running = start_server(create_app(brain))
    url = running.url + "/v1/forget"
    try:

        def post(token: str, body: dict[str, Any]) -> httpx.Response:
            return httpx.post(url, json=body, headers={"Authorization": f"Bearer {token}"})

        assert post(writer, {"subject": "rollout"}).status_code == 403  # write is not enough
        dry = post(admin, {"subject": "rollout"}).json()
        assert dry["applied"] is False and "gx-0" not in dry["episodes"]  # bounded to acme
        assert set(dry["scopes"]) <= {"acme/coder", "acme/coder/alice", "acme/tester", "acme/_org"}
        assert post(admin, {"tenant": "globex"}).status_code == 403
        huge = post(admin, {"older_than": "9999999999d", "scope": "acme/coder"})
        assert huge.status_code == 422 and huge.json()["error"]["field"] == "older_than"
        assert post(admin, {"episodes": ["gx-0"], "apply": True}).json()["not_found"] == ["gx-0"]
        done = post(admin, {"episodes": ["ts-1"], "apply": True}).json()
        got = httpx.get(f"{url}/{done['id']}", headers={"X-API-Key": admin})
        assert got.status_code == 200 and got.json()["episodes"] == ["ts-1"]
    finally:
        stop_server(running)
    assert brain.episode("gx-0", tenant="globex").scope.tenant == "globex"


def test_a_receipt_is_readable_by_the_key_that_made_it_even_when_it_touched_nothing(
    brain: Reverie,
) -> None:
    """The receipt belongs to the place its request named: its maker reads it back even when
    nothing matched (no scope touched); a key bound elsewhere gets 404 as for no receipt."""
    _key, coder = brain.keys.create("acme", agent="coder", rights="admin")
    _key, tester = brain.keys.create("acme", agent="tester", rights="admin")
    _key, globex = brain.keys.create("globex", rights="admin")
    running = start_server(create_app(brain))
    url = running.url + "/v1/forget"
    try:
        made = httpx.post(
            url, json={"episodes": ["no-such"], "apply": True}, headers={"X-API-Key": coder}
        ).json()
        assert made["scopes"] == [] and made["not_found"] == ["no-such"]
        codes = [
            httpx.get(f"{url}/{made['id']}", headers={"X-API-Key": token}).status_code
            for token in (coder, tester, globex)
        ]
        assert codes == [200, 404, 404]
    finally:
        stop_server(running)


def test_the_cli_says_what_postgresql_keeps_and_vacuums_it_when_asked() -> None:
    with schema_url() as url:
        with Reverie.open(url) as rv:
            rv.ingest(_problem("acme/coder", "pq", 3, 0, "rollout"))
            rv.dream_all(now=T0 + timedelta(days=1))
        base = ["--db", url, "forget", "--subject", "pq 1", "--scope", "acme/coder"]
        dry = CliRunner().invoke(app, base)
        assert dry.exit_code == 0 and "would keep old versions" in dry.stdout
        assert "--apply --vacuum does it" in dry.stdout and "to purge: VACUUM FULL" in dry.stdout
        done = json.loads(CliRunner().invoke(app, [*base, "--apply", "--json"]).stdout)
        tables = done["physical"]["tables"]
        assert any(t.endswith(".episodes") for t in tables) and done["physical"]["wal"]
        assert done["physical"]["purge"][0] == "VACUUM FULL " + ", ".join(tables)
        base[4] = "pq 2"
        vacuumed = CliRunner().invoke(app, [*base, "--apply", "--vacuum"])
        assert vacuumed.exit_code == 0 and "vacuumed (VACUUM FULL):" in vacuumed.stdout
        assert "to purge: VACUUM FULL" not in vacuumed.stdout
        assert "to purge: CHECKPOINT" in vacuumed.stdout  # the WAL is the operator's


def test_sqlite_keeps_nothing_the_receipt_must_name(brain: Reverie, tmp_path: Path) -> None:
    receipt = brain.forget(subject="build failed", scope="acme/tester", apply=True, now=NOW)
    assert receipt.physical == {"tables": [], "vacuumed": [], "wal": False, "purge": []}


def test_a_request_id_that_names_the_subject_is_kept_without_it(
    brain: Reverie, tmp_path: Path
) -> None:
    receipt = brain.forget(
        subject="rollout", scope="acme/coder", request_id="ticket-7 ROLLOUT", apply=True, now=NOW
    )
    assert receipt.tombstones and "rollout" not in receipt.request_id.lower()
    assert "ticket-7" in receipt.request_id
    with sqlite3.connect(tmp_path / "brain.db") as conn:
        kept = conn.execute(
            "SELECT request_id FROM erasures UNION ALL SELECT request_id FROM tombstones"
        ).fetchall()
    assert len(kept) > 1 and not any("rollout" in row[0].lower() for row in kept)
