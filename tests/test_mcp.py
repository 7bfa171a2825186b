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
from reverie.cli.demo import load_sample
from reverie.errors import InvalidInput
from reverie.models import Outcome, PageStatus, Scope
from reverie.server.mcp import TOOLS, build_server
from reverie.server.mcp_tools import Tools


def server(db: Path, *extra: str) -> StdioServerParameters:
    """The MCP server with its own scheduler off: these tests dream when they say so."""
    code = "from reverie.cli.app import main; main()"
    return StdioServerParameters(
        command=sys.executable,
        args=["-c", code, "--db", str(db), "mcp", "--no-dream", *extra],
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
            assert tools == {*TOOLS, "forget"}  # erasure only where the server is bound
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
            # a bound server has no scope parameter: one passed anyway reaches no other brain
            foreign = structured(await client.call_tool("list_pages", {"scope": "globex/bot"}))
            assert [p["id"] for p in foreign["pages"]] == [p["id"] for p in pages]
            await _forget_in_bound_scope(client, stored["id"])

    anyio.run(session)
    with Reverie.open(db) as rv:
        assert rv.pages("globex/bot") == [] and {p.scope.key for p in rv.pages("acme/coder")}
        assert (
            rv.episode("gx-1", tenant="globex").situation == "secret"
        )  # another scope's: untouched
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


def _listing(rv: Reverie, scope: Scope | None) -> tuple[str | None, dict[str, Any]]:
    async def listing() -> tuple[str | None, dict[str, Any]]:
        async with Client(build_server(rv, scope)) as client:
            tools = (await client.list_tools()).tools
            return client.instructions, {t.name: t for t in tools}

    return anyio.run(listing)


def test_the_listing_tells_a_model_what_each_tool_and_parameter_is(tmp_path: Path) -> None:
    with Reverie.open(tmp_path / "brain.db") as rv:
        instructions, tools = _listing(rv, None)
    assert set(tools) == {*TOOLS} >= {"why", "history", "search_episodes", "assert_fact"}
    assert instructions and "call `recall`" in instructions and "`scope`" in instructions
    assert "reverie mcp" not in instructions  # written for the model, not the developer
    for name, tool in tools.items():
        assert tool.description and len(tool.description) > 40, name
        properties = tool.input_schema["properties"]
        for param, schema in properties.items():
            assert schema.get("description"), f"{name}.{param} has no description"
        if name not in ("read_page", "why", "history"):
            assert "scope" in properties, name
        assert tool.output_schema and tool.output_schema["type"] == "object", name
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is TOOLS[name].read_only
    outcome = tools["remember"].input_schema["properties"]["outcome"]
    assert outcome["enum"] == [str(o) for o in Outcome]
    status = tools["list_pages"].input_schema["properties"]["status"]
    assert status["enum"] == [*(str(s) for s in PageStatus), "all"]
    remember = tools["remember"].input_schema["properties"]
    assert {"entities", "metadata"} <= set(remember)
    fact = tools["assert_fact"].input_schema
    assert set(fact["required"]) == {"attribute", "value"}
    assert set(fact["properties"]) == {
        "attribute",
        "value",
        "subject",
        "entities",
        "metadata",
        "scope",
    }
    assert tools["recall"].output_schema["properties"].keys() >= {"text", "used_tokens", "items"}


def test_a_bound_server_has_no_scope_parameter(tmp_path: Path) -> None:
    with Reverie.open(tmp_path / "brain.db") as rv:
        instructions, tools = _listing(rv, Scope.parse("acme/coder"))
    assert instructions and "bound to the brain acme/coder" in instructions
    for name, tool in tools.items():
        assert "scope" not in tool.input_schema["properties"], name
        assert "scope" not in tool.input_schema.get("required", []), name


def test_why_history_search_episodes_and_assert_fact(tmp_path: Path) -> None:
    with Reverie.open(tmp_path / "brain.db") as rv:
        rv.ingest([e for e in load_sample() if e["scope"] == "acme/coder"])
        rv.ingest([{"scope": "globex/bot", "situation": "their page", "action": "x"}] * 1)
        rv.remember(
            {
                "situation": "token sk-ant-api03-" + "a" * 40 + " leaked in kubectl logs",
                "action": "rotated",
            },
            scope="acme/coder",
        )
        rv.dream("acme/coder")
        page_id = rv.pages("acme/coder")[0].id
        server = build_server(rv, Scope.parse("acme/coder"))

        async def session() -> None:
            async with Client(server) as client:
                lineage = structured(await client.call_tool("why", {"page_id": page_id}))
                assert lineage["page"]["id"] == page_id and lineage["revisions"]
                assert {e["id"] for e in lineage["episodes"]} == set(lineage["page"]["citations"])
                events = structured(await client.call_tool("history", {"memory_id": page_id}))
                assert events["events"][0]["event"] == "ADD"
                found = structured(
                    await client.call_tool("search_episodes", {"query": "kubectl logs", "limit": 3})
                )["episodes"]
                assert found and len(found) <= 3
                assert all("sk-ant-api03" not in e["situation"] for e in found)
                said = structured(
                    await client.call_tool(
                        "assert_fact",
                        {"attribute": "editor", "value": "vim", "metadata": {"source": "chat"}},
                    )
                )
                stored = rv.episode(said["id"], tenant="acme")
                assert stored.metadata == {
                    "source": "chat",
                    "fact": {"subject": "user", "attribute": "editor", "value": "vim"},
                }
                bad = await client.call_tool(
                    "remember", {"situation": "s", "action": "a", "outcome": "great"}
                )
                assert bad.is_error
                other = rv.pages("globex/bot") or []
                foreign = await client.call_tool("history", {"memory_id": "pg_not_here"})
                assert foreign.is_error and not other

        anyio.run(session)
    with Reverie.open(tmp_path / "brain.db") as rv:
        report = rv.dream("acme/coder")
        assert report.status in ("committed", "empty")
        facts = [p for p in rv.pages("acme/coder") if str(p.kind) == "fact"]
        assert any("vim" in p.body for p in facts)


def test_history_on_a_bound_server_finds_its_own_tenants_episodes(tmp_path: Path) -> None:
    """Episode ids are a tenant's own: a server bound to globex/bot reads globex's episode,
    not the default tenant's."""
    with Reverie.open(tmp_path / "brain.db") as rv:
        rv.ingest([{"id": "e1", "scope": "globex/bot", "situation": "theirs", "action": "x"}])
        tools = Tools(rv, Scope.parse("globex/bot"))
        events = tools.history("e1").events
        assert [e.event for e in events] == ["ADD"]


def test_a_duration_past_a_century_is_an_error_that_says_so(tmp_path: Path) -> None:
    async def forget_forever(rv: Reverie) -> Any:
        async with Client(build_server(rv, Scope.parse("acme/coder"))) as client:
            return await client.call_tool("forget", {"older_than": "9999999999d"})

    with Reverie.open(tmp_path / "brain.db") as rv:
        rv.remember({"id": "k1", "scope": "acme/coder", "situation": "kept", "action": "a"})
        result = anyio.run(forget_forever, rv)
        assert result.is_error and "longer than a hundred years" in result.content[0].text
        assert rv.episode("k1", tenant="acme").situation == "kept"
