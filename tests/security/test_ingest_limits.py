"""One row can never break a reader: what ingest accepts is bounded on every path.

Metadata nested past :data:`~reverie.limits.MAX_METADATA_DEPTH` or larger than
:data:`~reverie.limits.MAX_METADATA_BYTES`, and over-long tool names, are refused by the
library, the CLI, the HTTP service (over real HTTP) and the MCP server (through the SDK's own
client), with an error naming the field and the limit; nothing of the bad item is stored, the
good items beside it are.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from typer.testing import CliRunner

from reverie import Reverie
from reverie.cli.app import app
from reverie.errors import InvalidInput, NotFound
from reverie.limits import MAX_METADATA_BYTES, MAX_METADATA_DEPTH, MAX_TOOL
from reverie.server import create_app
from tests.server.conftest import start_server, stop_server

SCOPE = "acme/coder"


def nested(levels: int) -> dict[str, Any]:
    """Metadata ``levels`` objects deep (the metadata object itself is the first)."""
    value: dict[str, Any] = {}
    for _ in range(levels - 1):
        value = {"a": value}
    return value


def nested_text(levels: int) -> str:
    """:func:`nested` as JSON text, built without recursing."""
    return '{"a": ' * (levels - 1) + "{}" + "}" * (levels - 1)


def item_text(ident: str, levels: int) -> str:
    head = json.dumps(item(ident))[:-1]
    return f'{head}, "metadata": {nested_text(levels)}}}'


def item(ident: str, **fields: Any) -> dict[str, Any]:
    return {"id": ident, "scope": SCOPE, "situation": "deploy", "action": "kubectl", **fields}


POISON = [
    ("metadata", {"metadata": nested(MAX_METADATA_DEPTH + 1)}, f"{MAX_METADATA_DEPTH} levels"),
    ("metadata", {"metadata": nested(990)}, f"{MAX_METADATA_DEPTH} levels"),
    ("metadata", {"metadata": {"x": "y" * MAX_METADATA_BYTES}}, f"{MAX_METADATA_BYTES:,}"),
    ("tools.0", {"tools": ["t" * (MAX_TOOL + 1)]}, str(MAX_TOOL)),
]


@pytest.mark.parametrize(("field", "fields", "limit"), POISON)
def test_the_library_refuses_past_the_limits(
    rv: Reverie, field: str, fields: dict[str, Any], limit: str
) -> None:
    with pytest.raises(InvalidInput, match=limit) as refused:
        rv.remember(item("bad", **fields))
    assert refused.value.field == field
    result = rv.ingest([item("bad", **fields), item("good")])
    assert result.stored == 1 and [(e.index, e.field) for e in result.errors] == [(0, field)]
    with pytest.raises(NotFound):
        rv.episode("bad", tenant="acme")


def test_the_deepest_accepted_metadata_reads_back_everywhere(rv: Reverie) -> None:
    rv.remember(item("edge", metadata=nested(MAX_METADATA_DEPTH)))
    episode = rv.episode("edge", tenant="acme")
    assert json.loads(episode.model_dump_json())["metadata"] == nested(MAX_METADATA_DEPTH)


def test_the_cli_reports_the_line_field_and_limit(tmp_path: Path) -> None:
    lines = [json.dumps(item("good")), json.dumps(item("bad", metadata=nested(40)))]
    source = tmp_path / "in.jsonl"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["--db", str(tmp_path / "b.db"), "ingest", str(source)])
    assert result.exit_code == 1
    assert f"line 2: metadata: is nested more than {MAX_METADATA_DEPTH} levels" in result.stderr
    assert "stored 1 episode," in result.stdout


@pytest.fixture
def api(tmp_path: Path) -> Iterator[tuple[httpx.Client, Reverie]]:
    rv = Reverie.open(tmp_path / "h.db")
    token = rv.keys.create("acme", rights="write", name="limits")[1]
    running = start_server(create_app(rv))
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    try:
        with httpx.Client(base_url=running.url, headers=headers, timeout=30) as client:
            yield client, rv
    finally:
        stop_server(running)
        rv.close()


@pytest.mark.parametrize("levels", [MAX_METADATA_DEPTH + 1, 256, 600])
def test_http_refuses_deep_metadata_and_stores_nothing(
    api: tuple[httpx.Client, Reverie], levels: int
) -> None:
    client, _rv = api
    response = client.post("/v1/episodes", content=item_text("deep", levels))
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["field"] == "metadata" and str(MAX_METADATA_DEPTH) in error["reason"]
    assert client.get("/v1/episodes/deep").status_code == 404
    batch = f'{{"episodes": [{item_text("deep", levels)}, {json.dumps(item("fine"))}]}}'
    out = client.post("/v1/episodes/batch", content=batch).json()
    assert out["stored"] == 1 and [e["field"] for e in out["errors"]] == ["metadata"]
    assert client.get("/v1/episodes/fine").status_code == 200


@pytest.mark.parametrize("levels", [990, 100_000])
def test_http_refuses_json_nested_past_the_parser(
    api: tuple[httpx.Client, Reverie], levels: int
) -> None:
    client, rv = api
    response = client.post("/v1/episodes", content=item_text("deeper", levels))
    assert response.status_code in (400, 422), response.text
    error = response.json()["error"]
    assert error["field"] in ("body", "metadata") and str(MAX_METADATA_DEPTH) in error["message"]
    assert rv.status().episodes == 0


def test_mcp_remember_refuses_an_over_long_tool(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    from mcp import Client  # noqa: PLC0415 (extra: mcp)

    from tests.test_mcp import server  # noqa: PLC0415 (extra: mcp)

    db = tmp_path / "m.db"
    Reverie.open(db).close()

    async def session() -> None:
        async with Client(server(db, "--scope", SCOPE)) as client:
            tools = ["t" * (MAX_TOOL + 1)]
            result = await client.call_tool(
                "remember", {"situation": "s", "action": "a", "tools": tools}
            )
            assert result.is_error
            assert f"tools.0: String should have at most {MAX_TOOL}" in result.content[0].text

    anyio.run(session)
    with Reverie.open(db) as rv:
        assert rv.status().episodes == 0
