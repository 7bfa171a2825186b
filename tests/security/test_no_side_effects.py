"""Reading leaves no trace and a mistake is named: a read of a missing database creates
nothing, a dream of a made-up scope makes no scope, an unknown page status is refused, and an
import names what it could not use."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import anyio
import httpx
import pytest
from typer.testing import CliRunner

from reverie import Reverie
from reverie.cli.app import app
from reverie.errors import InvalidInput
from reverie.memory.mirror import FOLDER
from reverie.server import create_app
from tests.conftest import T0, EpisodeFactory
from tests.server.conftest import start_server, stop_server

READS = [
    ["status"],
    ["pages", "-s", "acme/coder"],
    ["cycles"],
    ["verify"],
    ["why", "pg_x"],
    ["recall", "q", "-s", "acme/coder"],
    ["export", "training", "OUT"],
    ["dream"],
]


@pytest.mark.parametrize("command", READS)
def test_a_read_of_a_missing_database_creates_nothing(tmp_path: Path, command: list[str]) -> None:
    db = tmp_path / "no" / "such" / "x.db"
    args = [str(tmp_path / "out.jsonl") if a == "OUT" else a for a in command]
    result = CliRunner().invoke(app, ["--db", str(db), *args])
    assert result.exit_code == 2 and f"no database at {db}" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_init_and_ingest_create_the_database(tmp_path: Path) -> None:
    first, second = tmp_path / "a" / "one.db", tmp_path / "b" / "two.db"
    assert CliRunner().invoke(app, ["--db", str(first), "init"]).exit_code == 0
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"scope": "acme/coder", "situation": "s"}) + "\n")
    assert CliRunner().invoke(app, ["--db", str(second), "ingest", str(source)]).exit_code == 0
    assert first.is_file() and second.is_file()


@pytest.fixture
def mirrored(tmp_path: Path, make_episode: EpisodeFactory) -> Iterator[tuple[Reverie, Path]]:
    with Reverie.open(tmp_path / "b.db") as rv:
        rv.ingest([make_episode(lesson="wait for the rollout") for _ in range(4)])
        rv.dream("acme/coder", now=T0 + timedelta(days=1))
        rv.export_markdown("acme/coder", tmp_path / "mirror")
        yield rv, tmp_path / "mirror"


def test_importing_a_missing_folder_is_an_error(mirrored: tuple[Reverie, Path]) -> None:
    rv, mirror = mirrored
    with pytest.raises(InvalidInput, match="holds no memories/ folder"):
        rv.import_markdown("acme/coder", mirror.parent / "typo")
    db = str(rv.store.path)  # type: ignore[attr-defined]
    args = ["--db", db, "import", "markdown", "-s", "acme/coder", str(mirror.parent / "typo")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2 and "invalid directory" in result.stderr


def test_two_files_editing_one_page_are_both_named(mirrored: tuple[Reverie, Path]) -> None:
    rv, mirror = mirrored
    page = sorted((mirror / FOLDER).glob("*.md"))[0]
    text = page.read_text(encoding="utf-8")
    page.write_text(text + "- one person's edit\n", encoding="utf-8")
    copy = page.with_name("copy-" + page.name)
    copy.write_text(text + "- another person's edit\n", encoding="utf-8")
    before = {p.id: p.revision.number for p in rv.pages("acme/coder", None)}
    report = rv.import_markdown("acme/coder", mirror, now=T0 + timedelta(days=2))
    assert report.revised == []
    [problem] = [p for p in report.problems if "none of them was imported" in p]
    assert str(page) in problem and str(copy) in problem
    assert {p.id: p.revision.number for p in rv.pages("acme/coder", None)} == before


def test_an_unknown_page_status_is_refused(rv: Reverie) -> None:
    with pytest.raises(InvalidInput, match="'bogus' is not a page status"):
        rv.pages("acme/coder", "bogus")
    assert rv.pages("acme/coder", "retired") == []


def test_mcp_list_pages_refuses_an_unknown_status(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    from mcp import Client  # noqa: PLC0415 (extra: mcp)

    from tests.test_mcp import server  # noqa: PLC0415 (extra: mcp)

    db = tmp_path / "m.db"
    Reverie.open(db).close()

    async def session() -> None:
        async with Client(server(db, "--scope", "acme/coder")) as client:
            result = await client.call_tool("list_pages", {"status": "bogus"})
            said = result.content[0].text  # the schema's enum refuses it, naming the choices
            assert result.is_error and "'active'" in said and "'all'" in said

    anyio.run(session)


def test_dreaming_a_made_up_scope_over_http_leaves_no_scope(tmp_path: Path) -> None:
    rv = Reverie.open(tmp_path / "h.db")
    rv.remember({"scope": "acme/coder", "situation": "real", "action": "a"})
    token = rv.keys.create("acme", rights="write", name="dreamer")[1]
    running = start_server(create_app(rv))
    try:
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=running.url, headers=headers, timeout=30) as client:
            for n in range(20):
                response = client.post("/v1/dreams", json={"scope": f"acme/made-up-{n}"})
                assert response.status_code == 404 and "nothing was ever stored" in response.text
            assert client.post("/v1/dreams", json={"scope": "acme/coder"}).status_code == 202
        assert [s.key for s in rv.scopes()] == ["acme/coder"]
    finally:
        stop_server(running)
        rv.close()
