"""The Anthropic memory tool over a scope's pages, driven by the SDK's own tool runner.

A scripted Claude (the local fake server speaking the Messages wire format) issues every memory
command; the SDK runs them through ``ReverieMemoryTool`` and sends the results back, so the
test reads both what the model was told and what the brain now holds.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from reverie import Reverie
from reverie.llm.fake_server import FakeLLMServer, Reply, anthropic_message

anthropic = pytest.importorskip("anthropic", reason="needs the anthropic extra (in dev)")
from reverie.integrations.anthropic_memory import ReverieMemoryTool  # noqa: E402

SCOPE = "acme/claude"
T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


def _clock() -> Any:
    ticks = itertools.count()
    return lambda: T0 + timedelta(minutes=next(ticks))


def _message(blocks: list[dict[str, Any]], stop: str) -> Reply:
    return anthropic_message(blocks, stop, input_tokens=10, output_tokens=5)


def _memory_call(n: int, **command: Any) -> Reply:
    block = {"type": "tool_use", "id": f"toolu_{n}", "name": "memory", "input": command}
    return _message([block], "tool_use")


SCRIPT = [
    {"command": "view", "path": "/memories"},
    {
        "command": "create",
        "path": "/memories/user/preferences.md",
        "file_text": "# Preferences\n\n- tabs, not spaces\n- answers in French\n",
    },
    {
        "command": "str_replace",
        "path": "/memories/user/preferences.md",
        "old_str": "answers in French",
        "new_str": "answers in English",
    },
    {
        "command": "insert",
        "path": "/memories/user/preferences.md",
        "insert_line": 1,
        "insert_text": "- runs tests with ./scripts/test",
    },
    {"command": "create", "path": "/memories/scratch.md", "file_text": "temporary"},
    {"command": "rename", "old_path": "/memories/user", "new_path": "/memories/me"},
    {"command": "delete", "path": "/memories/scratch.md"},
    {"command": "view", "path": "/memories/me/preferences.md"},
    {"command": "str_replace", "path": "/memories/me/preferences.md", "old_str": "nope"},
]


def _run(tool: ReverieMemoryTool) -> list[dict[str, Any]]:
    """The scripted conversation; returns the tool results the SDK sent back to the model."""
    with FakeLLMServer() as server:
        server.push(*(_memory_call(n, **c) for n, c in enumerate(SCRIPT)))
        server.push(_message([{"type": "text", "text": "Noted."}], "end_turn"))
        client = anthropic.Anthropic(base_url=server.url, api_key="test", max_retries=0)
        runner = client.beta.messages.tool_runner(
            model="claude-test",
            max_tokens=512,
            messages=[{"role": "user", "content": "Remember how I like to work."}],
            tools=[tool],
        )
        final = runner.until_done()
        assert final.content[0].text == "Noted."  # type: ignore[union-attr]
        assert server.requests[0].body["tools"] == [{"type": "memory_20250818", "name": "memory"}]
        sent = [m for r in server.requests for m in r.body["messages"]]
    results: dict[str, dict[str, Any]] = {}
    for message in sent:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "tool_result":
                results[block["tool_use_id"]] = block
    return [results[f"toolu_{n}"] for n in range(len(SCRIPT))]


def _text(result: dict[str, Any]) -> str:
    content = result["content"]
    return content if isinstance(content, str) else content[0]["text"]


def test_a_scripted_claude_keeps_its_memory_directory_in_pages(tmp_path: Path) -> None:
    with Reverie.open(tmp_path / "brain.db") as rv:
        tool = ReverieMemoryTool(rv, SCOPE, clock=_clock())
        results = _run(tool)
        texts = [_text(r) for r in results]
        assert len(results) == len(SCRIPT)
        assert texts[0].endswith("excluding hidden items:\n0\t/memories")
        assert texts[1] == "File created successfully at: /memories/user/preferences.md"
        assert "answers in English" in texts[2]
        assert texts[5] == "Successfully renamed /memories/user to /memories/me"
        assert texts[7] == (
            "Here's the content of /memories/me/preferences.md with line numbers:\n"
            "     1\t# Preferences\n"
            "     2\t- runs tests with ./scripts/test\n"
            "     3\t- tabs, not spaces\n"
            "     4\t- answers in English"
        )
        assert results[8].get("is_error") is True
        assert "did not appear verbatim" in texts[8]

        (page,) = rv.pages(SCOPE)
        assert page.title == "/memories/me/preferences.md"
        lineage = rv.why(page.id)
        assert [r.author for r in lineage.revisions] == ["agent"] * 4
        reasons = [r.reason for r in lineage.revisions]
        assert reasons == [*["written"] * 3, "moved from /memories/user/preferences.md"]
        # every line cites the episode recording the write that brought it
        assert {len(c.episode_ids) for c in page.revision.claims} == {1}
        assert len(lineage.episodes) == 3  # create, str_replace, insert
        assert all(e.metadata["reverie"] == "agent-edit" for e in lineage.episodes)
        assert all(c.pinned for c in page.revision.claims)

        (scratch,) = rv.pages(SCOPE, "retired")
        assert scratch.title == "/memories/scratch.md"
        assert rv.why(scratch.id).revisions[-1].reason == "deleted /memories/scratch.md"


def test_each_mutation_is_undoable_and_recall_reads_the_notes(tmp_path: Path) -> None:
    with Reverie.open(tmp_path / "brain.db") as rv:
        tool = ReverieMemoryTool(rv, SCOPE, clock=_clock())
        _run(tool)
        recalled = rv.recall("which indentation does the user like, tabs?", SCOPE)
        assert "tabs, not spaces" in recalled.text

        view = {"command": "view", "path": "/memories/me/preferences.md"}
        before = tool.call(view)
        tool.call({"command": "delete", "path": "/memories/me"})
        assert rv.pages(SCOPE) == []
        with pytest.raises(anthropic.lib.tools.ToolError, match="does not exist"):
            tool.call(view)
        assert tool.last_cycle is not None
        rv.undo(tool.last_cycle)  # the delete is taken back: the page is active again
        assert tool.call(view) == before

        # a page's revisions stay: the undo is one more, nothing was erased
        (page,) = rv.pages(SCOPE)
        assert [r.status for r in rv.revisions(page.id)][-2:] == ["retired", "active"]


def test_bad_paths_and_long_lines_are_refused_and_change_nothing(tmp_path: Path) -> None:
    with Reverie.open(tmp_path / "brain.db") as rv:
        tool = ReverieMemoryTool(rv, SCOPE, clock=_clock())
        error = anthropic.lib.tools.ToolError
        with pytest.raises(error, match="must start with /memories"):
            tool.call({"command": "create", "path": "/etc/passwd", "file_text": "x"})
        with pytest.raises(error, match="escape"):
            tool.call({"command": "create", "path": "/memories/../x.md", "file_text": "x"})
        with pytest.raises(error, match="split lines over 4000"):
            tool.call({"command": "create", "path": "/memories/a.md", "file_text": "y" * 4001})
        with pytest.raises(error, match="Cannot delete"):
            tool.call({"command": "delete", "path": "/memories"})
        assert rv.pages(SCOPE, None) == []
        assert rv.status(SCOPE).episodes == 0
        tool.call({"command": "create", "path": "/memories/a.md", "file_text": "one"})
        with pytest.raises(error, match="already exists"):
            tool.call({"command": "create", "path": "/memories/a.md", "file_text": "two"})
        with pytest.raises(error, match="inside a file"):
            tool.call({"command": "create", "path": "/memories/a.md/b.md", "file_text": "two"})
        tool.call({"command": "create", "path": "/memories/d/c.md", "file_text": "three"})
        with pytest.raises(error, match="inside a file"):
            tool.call(
                {"command": "rename", "old_path": "/memories/d", "new_path": "/memories/a.md/d"}
            )
        with pytest.raises(error, match="inside itself"):
            tool.call({"command": "rename", "old_path": "/memories/d", "new_path": "/memories/d/e"})
        assert sorted(p.title for p in rv.pages(SCOPE)) == ["/memories/a.md", "/memories/d/c.md"]
        with pytest.raises(error, match=r"range \[0, 1\]"):
            tool.call(
                {
                    "command": "insert",
                    "path": "/memories/a.md",
                    "insert_line": 5,
                    "insert_text": "z",
                }
            )


def test_edit_records_never_reach_recall(tmp_path: Path) -> None:
    """A note's edit episodes are the evidence behind its revisions; recall answers from the
    note as it now reads, never from an edit record of words since replaced."""
    with Reverie.open(tmp_path / "brain.db", embedder=None) as rv:
        tool = ReverieMemoryTool(rv, SCOPE, clock=_clock())
        old = "the zebra password rotation happens on fridays"
        tool.call({"command": "create", "path": "/memories/ops.md", "file_text": old})
        tool.call(
            {"command": "str_replace", "path": "/memories/ops.md", "old_str": old,
             "new_str": "key rotation is monthly"}
        )  # fmt: skip
        assert rv.recall("zebra password fridays", SCOPE, 300).items == []
        now = rv.recall("key rotation", SCOPE, 300)
        assert [i.kind for i in now.items] == ["page"] and "monthly" in now.text
