"""Reverie's hooks in Claude Code's ``settings.json``: install, uninstall and doctor.

A hook's command names the interpreter that runs it by its absolute path (``sys.executable`` of
the process installing it), so the hooks work wherever Reverie lives: a venv, pipx, a system
Python. Three events are wired (:data:`EVENTS`): ``SessionStart`` recalls for the project,
``UserPromptSubmit`` recalls for the prompt, and ``SessionEnd`` ingests the transcript and starts
a dream in the background when one is due (:mod:`reverie.integrations.claude_code`).

Install merges into the settings file as it stands: other hooks and settings are kept, and ours
are recognised by the module they run (:data:`MODULE`), so installing twice changes nothing and
uninstall removes exactly what install added. A settings file that is not a JSON object is
refused, never overwritten.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reverie.errors import InvalidInput

__all__ = ["EVENTS", "MODULE", "Diagnosis", "diagnose", "install", "settings_path", "uninstall"]

MODULE = "reverie.integrations.claude_code"
EVENTS: dict[str, tuple[str, int, str | None]] = {
    # Claude Code event: (our hook's argument, timeout seconds, matcher)
    "SessionStart": ("session-start", 10, "startup|resume|clear|compact"),
    "UserPromptSubmit": ("user-prompt", 10, None),
    "SessionEnd": ("session-end", 30, None),
}


def settings_path(project: Path | None, *, user: bool = False) -> Path:
    """``~/.claude/settings.json`` for the user, else ``PROJECT/.claude/settings.json``."""
    if user:
        return Path.home() / ".claude" / "settings.json"
    return (project or Path.cwd()).resolve() / ".claude" / "settings.json"


def _command(argument: str, python: str, db: str | None, scope: str | None) -> str:
    words = [python, "-m", MODULE, argument]
    words += ["--db", db] if db else []
    words += ["--scope", scope] if scope else []
    return shlex.join(words)


def _ours(entry: Any) -> bool:
    hooks = entry.get("hooks", []) if isinstance(entry, dict) else []
    return any(isinstance(h, dict) and MODULE in str(h.get("command", "")) for h in hooks)


def _read(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except json.JSONDecodeError as exc:
        raise InvalidInput("settings", f"{path} is not valid JSON ({exc}); fix it first") from None
    if not isinstance(data, dict) or not isinstance(data.get("hooks", {}), dict):
        raise InvalidInput("settings", f"{path} must be a JSON object with a 'hooks' object")
    return data


def _write(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".json.tmp")
    partial.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    partial.replace(path)  # atomic: Claude Code never reads half a file


def _without_ours(hooks: dict[str, Any]) -> dict[str, Any]:
    kept: dict[str, Any] = {}
    for event, entries in hooks.items():
        rest = [e for e in entries if not _ours(e)] if isinstance(entries, list) else entries
        if rest:
            kept[event] = rest
    return kept


def install(
    path: Path, *, python: str | None = None, db: str | None = None, scope: str | None = None
) -> dict[str, Any]:
    """Add (or refresh) Reverie's hooks in the settings file at ``path``; the new settings."""
    data = _read(path)
    hooks = _without_ours(data.get("hooks", {}))
    for event, (argument, timeout, matcher) in EVENTS.items():
        hook = {
            "type": "command",
            "command": _command(argument, python or sys.executable, db, scope),
            "timeout": timeout,
        }
        entry: dict[str, Any] = {"hooks": [hook]}
        if matcher:
            entry = {"matcher": matcher, **entry}
        hooks.setdefault(event, []).append(entry)
    data["hooks"] = hooks
    _write(path, data)
    return data


def uninstall(path: Path) -> bool:
    """Remove Reverie's hooks from ``path``, keeping everything else; False if none were there."""
    data = _read(path)
    hooks = data.get("hooks", {})
    kept = _without_ours(hooks)
    if kept == hooks:
        return False
    if kept:
        data["hooks"] = kept
    else:
        data.pop("hooks", None)
    _write(path, data)
    return True


@dataclass
class Diagnosis:
    """What ``reverie hook claude-code doctor`` found: problems to fix, and what is fine."""

    ok: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _installed(data: dict[str, Any]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for event, entries in data.get("hooks", {}).items():
        for entry in entries if isinstance(entries, list) else []:
            if _ours(entry):
                found.setdefault(event, []).extend(str(h["command"]) for h in entry["hooks"])
    return found


def _runs(python: str) -> str | None:
    """None when the hook's interpreter imports Reverie, else what went wrong."""
    if not Path(python).is_file():
        return f"its interpreter {python} does not exist (reinstall the hooks from the venv)"
    done = subprocess.run(
        [python, "-c", f"import {MODULE}"], capture_output=True, text=True, timeout=60, check=False
    )
    if done.returncode:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return f"{python} cannot import Reverie: {last}"
    return None


def diagnose(path: Path) -> Diagnosis:
    """Check the settings at ``path``: every event wired, and each hook's interpreter works."""
    report = Diagnosis()
    if not path.exists():
        report.problems.append(f"{path} does not exist: run `reverie hook claude-code install`")
        return report
    installed = _installed(_read(path))
    for event in EVENTS:
        if event not in installed:
            report.problems.append(f"no Reverie hook for {event}: run the install again")
    checked: dict[str, str | None] = {}
    for event, commands in installed.items():
        for command in commands:
            python = shlex.split(command)[0]
            if python not in checked:
                checked[python] = _runs(python)
            problem = checked[python]
            if problem:
                report.problems.append(f"{event}: {problem}")
            else:
                report.ok.append(f"{event}: {command}")
    return report
