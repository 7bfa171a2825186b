"""``reverie hook claude-code install | uninstall | doctor``: Reverie's hooks in Claude Code.

The hooks run the interpreter that ran ``install``, by its absolute path, so a venv or pipx
install works without ``python3`` on the PATH knowing Reverie
(:mod:`reverie.integrations.claude_settings`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from reverie.cli.common import fail
from reverie.config import resolve_db
from reverie.errors import ReverieError
from reverie.integrations.claude_settings import diagnose, install, settings_path, uninstall

__all__ = ["hook_app"]

hook_app = typer.Typer(help="Install Reverie's hooks into agent tools (Claude Code).")
claude_app = typer.Typer(help="Claude Code: recall at start and per prompt, learn at session end.")
hook_app.add_typer(claude_app, name="claude-code")

Project = Annotated[
    Path | None,
    typer.Option("--project", metavar="DIR", help="The project (default: the current folder)."),
]
User = Annotated[
    bool, typer.Option("--user", help="~/.claude/settings.json instead of the project's.")
]


def _absolute(db: str) -> str:
    """A file path made absolute (the hook runs in another folder); a URL as it is."""
    return db if "://" in db else str(Path(db).expanduser().resolve())


@claude_app.command("install")
def install_command(
    ctx: typer.Context,
    project: Project = None,
    user: User = False,
    scope: Annotated[
        str | None,
        typer.Option(
            "--scope", "-s", envvar="REVERIE_SCOPE", help="Default: claude-code/<project folder>."
        ),
    ] = None,
) -> None:
    """Write the SessionStart, UserPromptSubmit and SessionEnd hooks (idempotent)."""
    path = settings_path(project, user=user)
    try:
        data = install(path, db=_absolute(resolve_db(ctx.obj)), scope=scope)
    except ReverieError as exc:
        fail(exc)
    typer.echo(f"installed Reverie's hooks in {path}:")
    for event, entries in data["hooks"].items():
        for entry in entries:
            for hook in entry["hooks"]:
                if "reverie.integrations.claude_code" in hook["command"]:
                    typer.echo(f"  {event}: {hook['command']}")


@claude_app.command("uninstall")
def uninstall_command(project: Project = None, user: User = False) -> None:
    """Remove Reverie's hooks, and nothing else, from the settings file."""
    path = settings_path(project, user=user)
    try:
        removed = uninstall(path)
    except ReverieError as exc:
        fail(exc)
    typer.echo(f"removed Reverie's hooks from {path}" if removed else f"no Reverie hooks in {path}")


@claude_app.command("doctor")
def doctor_command(
    project: Project = None,
    user: User = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Say what is wrong with the hooks: missing events, an interpreter that cannot run them."""
    path = settings_path(project, user=user)
    try:
        found = diagnose(path)
    except ReverieError as exc:
        fail(exc)
    if as_json:
        typer.echo(json.dumps({"settings": str(path), "ok": found.ok, "problems": found.problems}))
    else:
        for line in found.ok:
            typer.echo(f"ok       {line}")
        for line in found.problems:
            typer.echo(f"problem  {line}")
    raise typer.Exit(1 if found.problems else 0)
