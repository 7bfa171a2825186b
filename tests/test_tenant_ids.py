"""Episode ids are their tenant's own: two tenants may both store a ``b1``, each reads, dreams,
recalls and erases its own, and neither learns that the other has one. Ids derived from
content (by the store or an adapter) include the scope."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from reverie import Reverie
from reverie.adapters import parse
from reverie.cli.app import app
from reverie.models import Episode, Scope

ACME, GLOBEX = Scope.parse("acme/coder"), Scope.parse("globex/bot")
T0 = datetime(2026, 11, 2, 9, tzinfo=UTC)


def _problem(scope: Scope, prefix: str, what: str) -> list[dict[str, Any]]:
    """Four failed deploys of ``what``; the first has the id ``b1`` in both tenants."""
    return [
        {
            "id": "b1" if i == 0 else f"{prefix}{i}",
            "scope": scope.key,
            "created_at": (T0 + timedelta(hours=i)).isoformat(),
            "situation": f"deploying {what} with kubectl rollout",
            "action": "kubectl rollout restart",
            "outcome": "failure",
            "error": f"{what} ImagePullBackOff",
            "lesson": f"pin the {what} image tag before a rollout",
            "category": "deploy",
            "tools": ["kubectl"],
        }
        for i in range(4)
    ]


def test_two_tenants_each_keep_dream_and_recall_their_own_b1(rv: Reverie) -> None:
    assert rv.ingest(_problem(ACME, "a", "billing")).stored == 4
    assert rv.ingest(_problem(GLOBEX, "g", "search")).stored == 4  # no 409, no duplicate
    assert "billing" in rv.episode("b1", tenant="acme").situation
    assert "search" in rv.episode("b1", tenant="globex").situation
    for scope in (ACME, GLOBEX):
        rv.dream(scope, now=T0 + timedelta(days=1))
    [ours], [theirs] = rv.pages(ACME), rv.pages(GLOBEX)
    assert "b1" in ours.citations and "b1" in theirs.citations
    assert {e.scope for e in rv.why(ours.id).episodes} == {ACME}
    assert {e.scope for e in rv.why(theirs.id).episodes} == {GLOBEX}
    recalled = rv.recall("kubectl rollout ImagePullBackOff", ACME, 2000, now=T0 + timedelta(2))
    assert "billing" in recalled.text and "search" not in recalled.text

    receipt = rv.forget(episodes=["b1"], tenant="acme", apply=True, now=T0 + timedelta(days=3))
    assert receipt.details["episodes"] == ["b1"] and receipt.details["scopes"] == ["acme/coder"]
    assert rv.episodes(["b1"], tenant="acme") == []
    assert "search" in rv.episode("b1", tenant="globex").situation
    assert rv.page(theirs.id) == theirs and "b1" not in rv.page(ours.id).citations
    report = rv.verify()
    assert report.ok and report.erased >= 1


def test_the_engine_reads_the_identity_tenant_when_none_is_named(tmp_path: Path) -> None:
    with Reverie.open(tmp_path / "b.db") as rv:
        rv.remember({"id": "b1", "scope": "default/bot", "situation": "mine", "action": "a"})
        rv.remember({"id": "b1", "scope": "globex/bot", "situation": "theirs", "action": "a"})
        assert rv.episode("b1").situation == "mine"  # IdentityConfig.tenant is "default"
        assert [e.situation for e in rv.episodes(["b1"], tenant="globex")] == ["theirs"]


def test_ids_derived_from_content_include_the_scope() -> None:
    sent = {"situation": "deploy failed", "action": "kubectl apply", "created_at": T0}
    ours = Episode.parse({**sent, "scope": ACME.key})
    theirs = Episode.parse({**sent, "scope": GLOBEX.key})
    assert ours.content_id() != theirs.content_id()
    chat = json.dumps({"id": "conv-1", "messages": [{"role": "user", "content": "deploy api"}]})
    session = json.dumps({"type": "tool_call", "id": "t1", "name": "Bash", "sessionId": "s1"})
    for fmt, line in (("openai-chat", chat), ("coding-agent", session)):
        [a] = parse(fmt, [(1, line)], scope=ACME).items
        [again] = parse(fmt, [(1, line)], scope=ACME).items
        [g] = parse(fmt, [(1, line)], scope=GLOBEX).items
        assert a["id"] == again["id"] != g["id"]  # one record, one id per scope


def test_one_transcript_ingested_into_two_tenants_is_stored_in_both(tmp_path: Path) -> None:
    log = tmp_path / "chats.jsonl"
    chat = {"id": "conv-1", "messages": [{"role": "user", "content": "deploy the api"}]}
    log.write_text(json.dumps(chat) + "\n", encoding="utf-8")
    db = str(tmp_path / "brain.db")
    for scope, stored in (("acme/coder", 1), ("globex/bot", 1), ("globex/bot", 0)):
        args = ["--db", db, "ingest", str(log), "-f", "openai-chat", "-s", scope, "--json"]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["stored"] == stored  # again into globex: nothing new
    with Reverie.open(db) as rv:
        [ours] = rv.store.recent_episodes(ACME, 10)
        [theirs] = rv.store.recent_episodes(GLOBEX, 10)
        assert ours.id != theirs.id and ours.situation == theirs.situation
