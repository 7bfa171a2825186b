"""``reverie`` and ``reverie --help`` without loading a single command.

Typer builds the root help by importing every command module and, for its formatting, rich's
markdown, syntax and traceback machinery. The root help needs none of that: only each command's
first paragraph and the root's options, in their panels. So the index of them lives beside this
module in ``help_index.json``, read from the real app by :func:`index_of` (``python -m
reverie.cli.roothelp`` rewrites it; tests/test_cli.py fails when it and the app disagree), and
:func:`show` prints it with rich's console and tables alone. Every other command line, and this
one when the index cannot be read, runs the Typer app.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

__all__ = ["INDEX", "index_of", "show", "wanted", "write"]

INDEX = Path(__file__).with_name("help_index.json")
"""The root help's content: ``about``, ``usage``, ``options`` rows and ``panels`` of commands."""


def wanted(args: list[str]) -> bool:
    """Whether ``args`` ask for the root help and nothing else (no arguments, or ``--help``)."""
    return args in ([], ["--help"])


def show(path: Path = INDEX) -> bool:
    """Print the root help from the index at ``path``; False, printing nothing, when it cannot
    be read (the caller then runs the app, which prints the same help the slow way)."""
    try:
        index = json.loads(path.read_text(encoding="utf-8"))
        panels = _rendered(index)
    except (OSError, ValueError, KeyError, TypeError):
        return False
    from rich.console import Console

    console = Console(highlight=False)
    for part in panels:
        console.print(part)
    return True


def _rendered(index: dict[str, Any]) -> list[Any]:
    from rich.padding import Padding
    from rich.text import Text

    parts: list[Any] = [
        Padding(Text(f"Usage: {index['usage']}", style="yellow"), (1, 1, 0, 1)),
        Padding(Text(index["about"]), (1, 1, 1, 1)),
        _panel("Options", [[Text(o, style="bold cyan"), Text(m, style="bold yellow"), Text(h)]
                           for o, m, h in index["options"]]),
    ]  # fmt: skip
    width = max(len(name) for _title, rows in index["panels"] for name, _help in rows)
    for title, rows in index["panels"]:
        cells = [[Text(name, style="bold cyan"), Text(text)] for name, text in rows]
        parts.append(_panel(title, cells, first=width))
    return parts


def _panel(title: str, rows: list[list[Any]], first: int | None = None) -> Any:
    from rich.panel import Panel
    from rich.table import Table

    table = Table(show_header=False, box=None, expand=True, padding=(0, 1), pad_edge=False)
    for n in range(len(rows[0]) - 1):
        table.add_column(no_wrap=True, width=first if n == 0 else None)
    table.add_column(ratio=10)
    for row in rows:
        table.add_row(*row)
    return Panel(table, border_style="dim", title=title, title_align="left")


def index_of(app: Any) -> dict[str, Any]:
    """The root help's content as the Typer ``app`` itself would print it."""
    import typer.main
    from typer import _click
    from typer.core import TyperGroup

    from reverie.cli.shape import unwrapped

    def first_paragraph(text: str | None) -> str:
        return unwrapped(text or "").split("\n\n")[0]

    group = typer.main.get_command(app)
    assert isinstance(group, TyperGroup), "the reverie app is a group of commands"
    ctx = _click.Context(group, info_name="reverie")
    options = [
        [
            ", ".join([*p.opts, *p.secondary_opts]),
            p.metavar or "",
            first_paragraph(getattr(p, "help", "")),
        ]
        for p in group.get_params(ctx)
        if not getattr(p, "hidden", False)
    ]
    panels: dict[str, list[list[str]]] = {}
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None or command.hidden:
            continue
        text = first_paragraph(command.short_help or command.help)
        panels.setdefault(getattr(command, "rich_help_panel", None) or "Commands", []).append(
            [name, text]
        )
    return {
        "usage": "reverie [OPTIONS] COMMAND [ARGS]...",
        "about": first_paragraph(group.help),
        "options": options,
        "panels": [[title, rows] for title, rows in panels.items()],
    }


def write(path: Path = INDEX) -> None:
    """Rewrite the index at ``path`` from the real app."""
    from reverie.cli.app import app

    path.write_text(_dumped(index_of(app)), encoding="utf-8")


def _dumped(index: dict[str, Any]) -> str:
    """The index as JSON with one row per line, so a changed help shows as a one-line diff."""

    def rows(items: list[Any], indent: str) -> str:
        return ",\n".join(indent + json.dumps(i, ensure_ascii=False) for i in items)

    panels = ",\n".join(
        f"  [{json.dumps(title)}, [\n{rows(items, '    ')}\n  ]]"
        for title, items in index["panels"]
    )
    return (
        f'{{"usage": {json.dumps(index["usage"])},\n "about": {json.dumps(index["about"])},\n'
        f' "options": [\n{rows(index["options"], "  ")}\n ],\n "panels": [\n{panels}\n ]}}\n'
    )


if __name__ == "__main__":
    write(Path(sys.argv[1]) if len(sys.argv) > 1 else INDEX)
