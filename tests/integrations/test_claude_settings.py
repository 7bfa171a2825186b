"""``reverie hook claude-code install | uninstall | doctor`` on a real settings file, and the
hooks it writes run as Claude Code runs them: recall per prompt, a dream started at session end."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from reverie import Reverie
from reverie.cli.app import app

TRANSCRIPT = Path(__file__).parent / "data" / "claude_code_session.jsonl"
THEIRS = {"type": "command", "command": "echo their own hook"}


def _cli(db: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["--db", str(db), "hook", "claude-code", *args])
    return result.exit_code, result.stdout


def _settings(project: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((project / ".claude" / "settings.json").read_text())
    return loaded


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "shop"
    (project / ".claude").mkdir(parents=True)
    theirs = {"model": "opus", "hooks": {"SessionEnd": [{"hooks": [THEIRS]}]}}
    (project / ".claude" / "settings.json").write_text(json.dumps(theirs))
    return project


def _commands(settings: dict[str, Any]) -> dict[str, str]:
    return {
        event: hook["command"]
        for event, entries in settings["hooks"].items()
        for entry in entries
        for hook in entry["hooks"]
        if "reverie" in hook["command"]
    }


def test_install_is_idempotent_keeps_other_hooks_and_uninstall_undoes_it(tmp_path: Path) -> None:
    project, db = _project(tmp_path), tmp_path / "brain.db"
    before = _settings(project)
    code, out = _cli(db, "install", "--project", str(project))
    assert code == 0 and "UserPromptSubmit" in out
    once = _settings(project)
    assert _cli(db, "install", "--project", str(project))[0] == 0
    assert _settings(project) == once  # installing again changes nothing
    commands = _commands(once)
    assert set(commands) == {"SessionStart", "UserPromptSubmit", "SessionEnd"}
    for command in commands.values():
        words = shlex.split(command)
        assert words[0] == sys.executable and Path(words[0]).is_absolute()
        assert words[words.index("--db") + 1] == str(db.resolve())
    assert {"hooks": [THEIRS]} in once["hooks"]["SessionEnd"] and once["model"] == "opus"
    assert _cli(db, "uninstall", "--project", str(project)) == (
        0,
        f"removed Reverie's hooks from {project.resolve() / '.claude' / 'settings.json'}\n",
    )
    assert _settings(project) == before


def test_doctor_says_what_is_wrong(tmp_path: Path) -> None:
    project, db = _project(tmp_path), tmp_path / "brain.db"
    code, out = _cli(db, "doctor", "--project", str(project))
    assert code == 1 and "no Reverie hook for UserPromptSubmit" in out
    _cli(db, "install", "--project", str(project))
    code, out = _cli(db, "doctor", "--project", str(project), "--json")
    assert code == 0 and json.loads(out)["problems"] == []
    path = project / ".claude" / "settings.json"
    path.write_text(path.read_text().replace(sys.executable, str(tmp_path / "gone/python")))
    code, out = _cli(db, "doctor", "--project", str(project))
    assert code == 1 and "does not exist (reinstall the hooks from the venv)" in out


def _run(command: str, payload: dict[str, Any]) -> str:
    done = subprocess.run(
        shlex.split(command),
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stderr == ""
    return done.stdout


def test_the_installed_hooks_learn_at_session_end_and_recall_per_prompt(tmp_path: Path) -> None:
    project, db = _project(tmp_path), tmp_path / "brain.db"
    _cli(db, "install", "--project", str(project), "--scope", "claude-code/shop")
    commands = _commands(_settings(project))
    end = {"transcript_path": str(TRANSCRIPT), "cwd": str(project), "reason": "exit"}
    assert _run(commands["SessionEnd"], end) == ""  # returns at once; the dream runs detached
    deadline = time.monotonic() + 60
    while True:
        with Reverie.open(db) as rv:
            pages = rv.pages("claude-code/shop")
        if pages or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert pages, "no dream ran after the session ended"
    prompt = {"prompt": "the checkout total test fails again", "cwd": str(project)}
    answer = json.loads(_run(commands["UserPromptSubmit"], prompt))["hookSpecificOutput"]
    assert answer["hookEventName"] == "UserPromptSubmit"
    assert "checkout" in answer["additionalContext"].lower()
    silent = json.loads(_run(commands["UserPromptSubmit"], {"prompt": "zebra migration routes"}))
    assert silent == {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit"}}
