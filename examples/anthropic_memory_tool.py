"""Claude's memory tool with its ``/memories`` directory kept in a Reverie scope.

Runs offline: ``pip install 'reverie[anthropic]' && python examples/anthropic_memory_tool.py``.
A local server speaking the Messages wire format plays Claude (two memory commands, then an
answer); point ``anthropic.Anthropic()`` at the real API and nothing else changes.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import anthropic

from reverie import Reverie
from reverie.integrations.anthropic_memory import ReverieMemoryTool
from reverie.llm.fake_server import FakeLLMServer, Reply


def _claude(blocks: list[dict[str, Any]], stop: str) -> Reply:
    body = {
        "id": "msg",
        "type": "message",
        "role": "assistant",
        "model": "fake",
        "content": blocks,
        "stop_reason": stop,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    return Reply(body=body)


def _memory(n: int, **command: Any) -> Reply:
    return _claude(
        [{"type": "tool_use", "id": f"t{n}", "name": "memory", "input": command}], "tool_use"
    )


def main(db: Path | None = None) -> str:
    path = db or Path(tempfile.mkdtemp(prefix="reverie-memory-tool-")) / "brain.db"
    with Reverie.open(path) as rv, FakeLLMServer() as claude:
        claude.push(
            _memory(1, command="create", path="/memories/user.md", file_text="- prefers tabs\n"),
            _memory(
                2,
                command="str_replace",
                path="/memories/user.md",
                old_str="prefers tabs",
                new_str="prefers tabs, 4 wide",
            ),
            _claude([{"type": "text", "text": "I'll remember that."}], "end_turn"),
        )
        client = anthropic.Anthropic(base_url=claude.url, api_key="offline")
        tool = ReverieMemoryTool(rv, "acme/claude")
        final = client.beta.messages.tool_runner(
            model="claude-sonnet-4-5",
            max_tokens=256,
            tools=[tool],
            messages=[{"role": "user", "content": "I like tabs, four wide."}],
        ).until_done()
        (page,) = rv.pages("acme/claude")
        for rev in rv.why(page.id).revisions:
            print(f"rev {rev.number} by {rev.author}: {[c.text for c in rev.claims]}")
        rv.undo(tool.last_cycle or "")  # the latest edit, taken back
        print("after undo:", rv.page(page.id).body)
        return str(final.content[0].text)  # type: ignore[union-attr]


if __name__ == "__main__":
    print(main())
