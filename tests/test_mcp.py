"""``reverie mcp`` over stdio, driven by the official MCP SDK's own client in a subprocess."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import Client, StdioServerParameters

from reverie import Reverie
from reverie.bench.demo import load_sample
from reverie.errors import InvalidInput
from reverie.server.mcp import Tools


def server(db: Path, *extra: str) -> StdioServerParameters:
    code = "from reverie.cli.app import main; main()"
    return StdioServerParameters(
        command=sys.executable,
        args=["-c", code, "--db", str(db), "mcp", *extra],
        env=dict(os.environ),
    )


def structured(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        data: dict[str, Any] = result.structured_content
        return data.get("result", data) if set(data) == {"result"} else data
    loaded: dict[str, Any] = json.loads(result.content[0].text)
    return loaded


def test_mcp_tools_over_stdio(tmp_path: Path) -> None:
    db = tmp_path / "brain.db"
    with Reverie.open(db) as rv:
        rv.ingest([e for e in load_sample() if e["scope"] == "acme/coder"])
        rv.ingest([{"scope": "globex/bot", "situation": "secret", "action": "x", "id": "gx-1"}])

    async def session() -> None:
        async with Client(server(db, "--scope", "acme/coder")) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            assert tools == {"remember", "recall", "dream_now", "list_pages", "read_page", "forget"}
            stored = structured(
                await client.call_tool(
                    "remember",
                    {"situation": "MCP test", "action": "called remember", "outcome": "success"},
                )
            )
            assert stored["scope"] == "acme/coder" and stored["seq"] > 0
            report = structured(await client.call_tool("dream_now", {}))
            assert report["status"] == "committed" and report["created"] >= 1
            pages = structured(await client.call_tool("list_pages", {}))["pages"]
            assert pages
            page = structured(await client.call_tool("read_page", {"page_id": pages[0]["id"]}))
            assert page["markdown"].startswith("# ") and page["citations"]
            recalled = structured(
                await client.call_tool("recall", {"query": "deploy to staging with kubectl"})
            )
            assert recalled["items"] and recalled["text"]
            foreign = await client.call_tool("list_pages", {"scope": "globex/bot"})
            assert foreign.is_error and "bound to acme/coder" in foreign.content[0].text
            await _forget_in_bound_scope(client, stored["id"])

    anyio.run(session)
    with Reverie.open(db) as rv:
        assert rv.episode("gx-1").situation == "secret"  # another scope's: untouched
        assert not rv.forget(subject="MCP test").details["episodes"]  # erased for real


async def _forget_in_bound_scope(client: Client, own_id: str) -> None:
    """``forget`` reaches the bound scope only, and is a dry run unless asked to apply."""
    dry = structured(await client.call_tool("forget", {"episode_ids": ["gx-1", own_id]}))
    assert dry["applied"] is False and dry["episodes"] == [own_id]
    assert dry["not_found"] == ["gx-1"]  # another scope's id reads as a missing one
    done = structured(await client.call_tool("forget", {"subject": "MCP test", "apply": True}))
    assert done["applied"] is True and done["episodes"] == [own_id]


def test_forget_needs_a_server_bound_to_a_scope(tmp_path: Path) -> None:
    with Reverie.open(tmp_path / "b.db") as rv, pytest.raises(InvalidInput, match="bound to"):
        Tools(rv).forget(subject="anything")
