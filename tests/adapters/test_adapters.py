"""Ingest adapters: OpenAI chat transcripts and coding-agent session logs become episodes;
unknown records are reported, never dropped silently; re-ingesting stores nothing new."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from reverie import Reverie
from reverie.adapters import parse
from reverie.cli.app import app
from reverie.models import Scope

CODER = Scope.parse("acme/coder")


def lines(*records: Any) -> list[tuple[int, str]]:
    return [(n, r if isinstance(r, str) else json.dumps(r)) for n, r in enumerate(records, 1)]


CHAT = {
    "id": "conv-1",
    "created": 1_795_000_000,
    "messages": [
        {"role": "system", "content": "You are a deploy bot."},
        {"role": "user", "content": "Deploy api to staging"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "kubectl", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "Error: timed out waiting"},
        {"role": "assistant", "content": "The deploy timed out."},
        {"role": "user", "content": [{"type": "text", "text": "Try with --timeout 10m"}]},
        {"role": "assistant", "content": "Done: rolled out."},
        {"role": "critic", "content": "???"},
    ],
}


def test_openai_chat_turns_become_episodes() -> None:
    parsed = parse("openai-chat", lines(CHAT, {"prompt": "not a chat"}, "[1]"), scope=CODER)
    first, second = parsed.items
    assert first["situation"] == "Deploy api to staging"
    assert first["outcome"] == "failure" and first["error"].startswith("Error: timed out")
    assert first["tools"] == ["kubectl"] and "The deploy timed out." in first["action"]
    assert second["outcome"] == "success" and second["situation"] == "Try with --timeout 10m"
    assert first["created_at"].startswith("2026-")
    assert parsed.line_of == [1, 1]
    assert sorted((f[0], f[1]) for f in parsed.failures) == [
        (1, "messages[7].role"),
        (2, "messages"),
        (3, "input"),
    ]


SESSION = [
    {"type": "summary", "summary": "deploy work"},
    {
        "type": "user",
        "sessionId": "s1",
        "timestamp": "2026-11-20T10:00:00Z",
        "message": {"role": "user", "content": "run the tests"},
    },
    {
        "type": "assistant",
        "sessionId": "s1",
        "timestamp": "2026-11-20T10:00:05Z",
        "message": {
            "content": [
                {"type": "text", "text": "Running pytest."},
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "pytest"}},
                {"type": "tool_use", "id": "t2", "name": "Read", "input": {"path": "a.py"}},
            ]
        },
    },
    {
        "type": "user",
        "sessionId": "s1",
        "timestamp": "2026-11-20T10:00:30Z",
        "message": {
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "is_error": True,
                    "content": "2 failed",
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "t2",
                    "content": [{"type": "text", "text": "ok"}],
                },
            ]
        },
    },
    {"type": "tool_call", "id": "f1", "name": "shell", "input": "make lint", "sessionId": "s1"},
    {"type": "tool_result", "call_id": "f1", "output": "", "exit_code": 2, "error": "lint failed"},
    {"type": "tool_call", "id": "f2", "name": "shell", "input": "git status", "sessionId": "s1"},
    {"type": "tool_result", "call_id": "zz", "output": "orphan"},
    {"type": "telemetry", "x": 1},
]


def test_coding_agent_tool_calls_become_episodes_with_outcome_and_error() -> None:
    parsed = parse("coding-agent", lines(*SESSION), scope=CODER)
    by_tool = {(i["tools"][0], i["metadata"]["call_id"]): i for i in parsed.items}
    bash = by_tool[("Bash", "t1")]
    assert bash["outcome"] == "failure" and bash["error"] == "2 failed"
    assert bash["situation"] == "run the tests" and '"command": "pytest"' in bash["action"]
    assert bash["session_id"] == "s1" and bash["created_at"] == "2026-11-20T10:00:30Z"
    assert by_tool[("Read", "t2")]["outcome"] == "success"
    assert by_tool[("shell", "f1")]["outcome"] == "failure"
    assert by_tool[("shell", "f1")]["error"] == "lint failed"
    assert by_tool[("shell", "f2")]["outcome"] == "unknown"
    assert [(f[0], f[1]) for f in parsed.failures] == [(8, "tool_result"), (9, "type")]


def test_cli_ingest_format_reports_and_is_idempotent(tmp_path: Path) -> None:
    log = tmp_path / "session.jsonl"
    log.write_text("\n".join(json.dumps(e) for e in SESSION) + "\n", encoding="utf-8")
    db = tmp_path / "brain.db"
    args = ["--db", str(db), "ingest", str(log), "--format", "coding-agent", "-s", "acme/coder"]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 1  # the orphan result and the unknown event were reported
    assert "stored 4 episodes, 0 duplicates skipped, 2 lines failed" in first.stdout
    assert "line 9: type: unknown event type 'telemetry'" in first.stderr
    again = CliRunner().invoke(app, args)
    assert "stored 0 episodes, 4 duplicates skipped" in again.stdout
    with Reverie.open(db) as rv:
        assert rv.status("acme/coder").episodes == 4
    no_scope = CliRunner().invoke(app, ["--db", str(db), "ingest", str(log), "-f", "openai-chat"])
    assert no_scope.exit_code == 2 and "needs --scope" in no_scope.stderr
    bad = CliRunner().invoke(app, ["--db", str(db), "ingest", str(log), "-f", "yaml", "-s", "a/b"])
    assert bad.exit_code == 2 and "is not one of jsonl, openai-chat, coding-agent" in bad.stderr
