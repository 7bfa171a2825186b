"""One redaction policy for every read surface, edit episodes included.

An episode is raw evidence and is stored as sent; what leaves Reverie is redacted by the
engine's redactor: the library (unless ``raw=True``), ``why`` as text and ``--json``, HTTP
``/why``, ``/v1/episodes/{id}`` and ``/v1/episodes?q=``, MCP, and the edit episodes that the
Anthropic memory tool and a LangGraph ``put`` write (those are redacted when written).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reverie import Reverie
from reverie.cli.app import app
from reverie.memory.browse import EpisodeFilter
from reverie.memory.notes import NoteChange, commit_notes
from reverie.models import Scope
from reverie.server.mcp_tools import Tools

SECRET = "sk-proj-" + "Zq8wT3vL9xK2mB7nR4pY6cH1" * 2
SCOPE = "acme/coder"
T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


def _episode(rv: Reverie, n: int) -> None:
    rv.ingest(
        [
            {
                "id": f"e{n}",
                "scope": SCOPE,
                "created_at": T0.replace(hour=9 + n).isoformat(),
                "situation": f"deploy failed: OPENAI_API_KEY={SECRET} was rejected",
                "action": "rotated the key and redeployed",
                "outcome": "success",
                "lesson": f"export OPENAI_API_KEY={SECRET} before the deploy",
                "tools": ["deploy"],
                "metadata": {"env": {"api_key": SECRET, "region": "eu-west-1"}},
            }
        ]
    )


def _brain(path: Path) -> tuple[Reverie, str]:
    rv = Reverie.open(path, embedder=None)
    for n in range(3):
        _episode(rv, n)
    rv.dream(SCOPE, now=T0.replace(hour=20))
    (page,) = rv.pages(SCOPE)[:1]
    return rv, page.id


def test_the_library_redacts_what_it_hands_out_and_keeps_the_evidence_raw(tmp_path: Path) -> None:
    rv, page_id = _brain(tmp_path / "b.db")
    with rv:
        shown = rv.why(page_id).model_dump_json()
        assert SECRET not in shown and "[REDACTED]" in shown
        assert "eu-west-1" in shown  # only the secret goes
        assert SECRET not in rv.episode("e0", tenant="acme").model_dump_json()
        assert SECRET not in json.dumps([e.model_dump(mode="json") for e in rv.episodes(["e1"])])
        assert SECRET not in str(rv.search_episodes("deploy rejected", SCOPE))
        assert SECRET not in str(rv.browse_episodes(SCOPE).episodes)
        assert SECRET in rv.episode("e0", tenant="acme", raw=True).situation


def test_why_as_text_and_json_redacts_unless_raw(tmp_path: Path) -> None:
    db = tmp_path / "b.db"
    rv, page_id = _brain(db)
    rv.close()
    runner = CliRunner()
    for extra in ([], ["--json"]):
        out = runner.invoke(app, ["--db", str(db), "why", page_id, *extra])
        assert out.exit_code == 0, out.output
        assert SECRET[:20] not in out.output
    raw = runner.invoke(app, ["--db", str(db), "why", page_id, "--json", "--raw"])
    assert SECRET in raw.output


def test_http_why_and_episode_routes_redact_for_a_read_key(tmp_path: Path) -> None:
    pytest.importorskip("fastapi")
    import httpx  # noqa: PLC0415 (extra: dev)

    from reverie.server import create_app  # noqa: PLC0415 (extra: server)
    from tests.server.conftest import start_server, stop_server  # noqa: PLC0415

    rv, page_id = _brain(tmp_path / "b.db")
    token = rv.keys.create("acme", rights="read")[1]
    running = start_server(create_app(rv))
    try:
        with httpx.Client(
            base_url=running.url, headers={"Authorization": f"Bearer {token}"}, timeout=20
        ) as client:
            answers = [
                client.get(f"/v1/pages/{page_id}/why"),
                client.get("/v1/episodes/e0"),
                client.get("/v1/episodes", params={"scope": SCOPE, "q": "deploy"}),
                client.get("/v1/episodes", params={"scope": SCOPE, "q": SECRET}),
            ]
        for answer in answers:
            assert answer.status_code == 200, answer.text
        assert "[REDACTED]" in answers[0].text and "[REDACTED]" in answers[1].text
        assert all(SECRET not in a.text for a in answers)
    finally:
        stop_server(running)
        rv.close()


def test_mcp_why_redacts_episodes(tmp_path: Path) -> None:
    rv, page_id = _brain(tmp_path / "b.db")
    with rv:
        lineage = Tools(rv, Scope.parse(SCOPE)).why(page_id)
        assert SECRET not in lineage.model_dump_json()


def test_edit_episodes_of_notes_are_redacted_when_written(tmp_path: Path) -> None:
    with Reverie.open(tmp_path / "b.db", embedder=None) as rv:
        text = f"deploy notes\nthe token is {SECRET}"
        cycle = commit_notes(
            rv.store,
            Scope.parse(SCOPE),
            [NoteChange("/memories/deploy.md", text)],
            now=T0,
            summary=f"create /memories/deploy.md\n{text}",
        )
        assert cycle is not None
        (page,) = rv.pages(SCOPE)
        (edit,) = rv.why(page.id, raw=True).episodes
        assert edit.id.startswith("ed")
        assert SECRET not in edit.model_dump_json()  # stored redacted, not only shown so
        assert SECRET not in page.to_markdown()


def test_the_anthropic_memory_tools_edit_episode_holds_no_secret(tmp_path: Path) -> None:
    pytest.importorskip("anthropic", reason="needs the anthropic extra (in dev)")
    from reverie.integrations.anthropic_memory import ReverieMemoryTool  # noqa: PLC0415

    with Reverie.open(tmp_path / "b.db", embedder=None) as rv:
        tool = ReverieMemoryTool(rv, SCOPE, clock=lambda: T0)
        tool.call(
            {"command": "create", "path": "/memories/ops.md", "file_text": f"key: {SECRET}\n"}
        )
        tool.call(
            {
                "command": "str_replace",
                "path": "/memories/ops.md",
                "old_str": "key: [REDACTED]",
                "new_str": f"the password is Tr0ub4dor&3x and the key {SECRET}",
            }
        )
        (page,) = rv.pages(SCOPE)
        stored = rv.why(page.id, raw=True)
        assert {e.id[:2] for e in stored.episodes} == {"ed"}
        assert SECRET not in stored.model_dump_json()
        assert "Tr0ub4dor&3x" not in stored.model_dump_json()


def test_a_langgraph_put_redacts_inside_the_value(tmp_path: Path) -> None:
    pytest.importorskip("langgraph", reason="needs the langgraph extra (in dev)")
    from reverie.integrations.langgraph import ReverieStore  # noqa: PLC0415

    with Reverie.open(tmp_path / "b.db", embedder=None) as rv:
        store = ReverieStore(rv, "acme", "assistant")
        value = {
            "note": f"use {SECRET}",  # ends in a token redaction replaces
            "password": "hunter2-Xy9",  # a credential under a name that says so
            "secret": "the sauce is ketchup",  # a name alone decides nothing
            "tokens": 1200,
            "nested": {"list": ["plain", f"Bearer {SECRET}"]},
        }
        store.put(("prefs",), "k", value)
        got = store.get(("prefs",), "k")
        assert got is not None
        assert got.value["note"] == "use [REDACTED]"
        assert got.value["password"] == "[REDACTED]"
        assert got.value["secret"] == "the sauce is ketchup"
        assert got.value["tokens"] == 1200
        assert got.value["nested"]["list"][0] == "plain"
        assert SECRET not in json.dumps(got.value)
        assert [i.key for i in store.search(("prefs",))] == ["k"]  # the namespace still parses
        (page,) = rv.pages("acme/assistant")
        edits = rv.why(page.id, raw=True).episodes
        assert edits and SECRET not in json.dumps([e.model_dump(mode="json") for e in edits])
        assert "hunter2-Xy9" not in json.dumps([e.model_dump(mode="json") for e in edits])


def test_a_search_is_no_oracle_for_a_redacted_secret(tmp_path: Path) -> None:
    """A search matches stored text; an episode found only through words that redaction
    hides is not handed out, so the answer cannot say that the secret is stored."""
    rv, _page = _brain(tmp_path / "b.db")
    with rv:
        assert rv.search_episodes(SECRET, SCOPE) == []
        assert rv.browse_episodes(SCOPE, EpisodeFilter(text=SECRET)).episodes == []
        found = rv.search_episodes(f"{SECRET} rotated", SCOPE)
        assert [e.id for e in found] and all(SECRET not in e.text for e in found)
        assert [e.id for e in rv.search_episodes(SECRET, SCOPE, raw=True)]
