"""How the command line meets a person's habits: what ``--help`` groups, where ``--db`` may go,
and flags shown without a type.

- **Panels.** :data:`PANELS` sorts every command into one help panel (everyday, memory over
  time, operations, service, bench); :func:`shape` applies it after every module registered
  its commands, and refuses a command that is in no panel, so a new command cannot hide.
- **``--db`` anywhere.** It belongs to the root (``reverie --db PATH pages``); a person types it
  after the command too (``reverie pages --db PATH``). :class:`RootGroup` moves every ``--db``
  (before a ``--``) to the front before parsing, so both spellings mean the same.
- **Flags.** Help shows an option's type (``<int>``); a flag takes no value, so its type column
  is left empty instead of ``<bool>``.
- **Lazy groups.** A :class:`LazyGroup` is listed from its own help text and imports its commands
  only when it runs, so ``reverie --help`` and every other command never load the benchmarks.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable
from typing import Any, ClassVar

import typer
import typer.main
from typer.core import TyperCommand, TyperGroup

from reverie.cli.common import JSON_ASKED, fail, unexpected

__all__ = ["PANELS", "LazyGroup", "QuietCommand", "QuietGroup", "RootGroup", "hoist_db", "shape"]

PANELS: dict[str, tuple[str, ...]] = {
    "Everyday": (
        "init",
        "remember",
        "ingest",
        "dream",
        "recall",
        "pages",
        "page",
        "why",
        "status",
        "undo",
        "demo",
    ),
    "Memory over time": (
        "history",
        "restore",
        "verify",
        "journal",
        "cycles",
        "plans",
        "plan",
        "export",
        "import",
        "forget",
    ),
    "Operations": (
        "daemon",
        "schedule",
        "report",
        "stats",
        "log",
        "archive",
        "doctor",
        "worker",
        "migrate",
        "reembed",
    ),
    "Service": ("serve", "mcp", "keys", "hook"),
    "Bench": ("bench",),
}


def hoist_db(args: list[str]) -> list[str]:
    """``args`` with every ``--db VALUE`` / ``--db=VALUE`` before ``--`` moved to the front."""
    front: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            rest += args[i:]
            break
        if arg == "--db" and i + 1 < len(args):
            front += args[i : i + 2]
            i += 2
            continue
        (front if arg.startswith("--db=") else rest).append(arg)
        i += 1
    return front + rest


def _quiet_flags(params: list[Any]) -> list[Any]:
    for param in params:
        if getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = ""  # the help's type column; a flag takes no value
    return params


class QuietCommand(TyperCommand):
    """A command whose flags show no ``<bool>``."""

    def get_params(self, ctx: Any) -> list[Any]:  # typer's own click Context
        return _quiet_flags(super().get_params(ctx))


class QuietGroup(TyperGroup):
    """A group of commands whose flags show no ``<bool>``."""

    def get_params(self, ctx: Any) -> list[Any]:  # typer's own click Context
        return _quiet_flags(super().get_params(ctx))


class LazyGroup(QuietGroup):
    """A group whose commands come from the Typer app :attr:`load` returns, on first use."""

    load: ClassVar[Callable[[], typer.Typer]]
    _loaded: Any = None

    def _real(self) -> Any:  # the loaded app's click group
        if self._loaded is None:
            app = type(self).load()
            _quiet(app)
            self._loaded = typer.main.get_command(app)
        return self._loaded

    def list_commands(self, ctx: Any) -> list[str]:
        return list(self._real().list_commands(ctx))

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        return self._real().get_command(ctx, cmd_name)


def _asks_json(args: list[str]) -> bool:
    return "--json" in (args[: args.index("--")] if "--" in args else args)


class RootGroup(QuietGroup):
    """The ``reverie`` group: takes ``--db`` wherever it is given, and turns an exception no
    command expected into one line and exit 2 (``REVERIE_DEBUG=1`` shows the traceback)."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        JSON_ASKED.set(_asks_json(args))
        return super().parse_args(ctx, hoist_db(args))

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except Exception as exc:
            if _passes_through(exc):
                raise
            fail(unexpected(exc))


def _passes_through(exc: Exception) -> bool:
    """Exits, usage errors and aborts are the CLI framework's own; debugging shows the rest."""
    module = type(exc).__module__
    return module.startswith(("click", "typer")) or bool(os.environ.get("REVERIE_DEBUG"))


def _panel_of() -> dict[str, str]:
    return {name: panel for panel, names in PANELS.items() for name in names}


def unwrapped(text: str) -> str:
    """A docstring as help: the lines of each paragraph joined, so the terminal wraps them at
    its own width instead of breaking where the source did."""
    paragraphs = [" ".join(p.split()) for p in text.strip().split("\n\n")]
    return "\n\n".join(p for p in paragraphs if p)


def _quiet(app: typer.Typer) -> None:
    for command in app.registered_commands:
        if command.cls is None or command.cls is TyperCommand:
            command.cls = QuietCommand
        doc = command.help or inspect.getdoc(command.callback)
        if doc:
            command.help = unwrapped(doc)
    for group in app.registered_groups:
        if not (isinstance(group.cls, type) and issubclass(group.cls, LazyGroup)):
            group.cls = QuietGroup
        if group.typer_instance is not None:
            _quiet(group.typer_instance)


def _name(info: Any) -> str:
    return str(info.name or (info.callback.__name__ if info.callback else ""))


def shape(app: typer.Typer) -> None:
    """Put every command of ``app`` in its help panel (panels in :data:`PANELS`' order) and
    quiet every flag."""
    panel_of = _panel_of()
    order = {name: n for n, name in enumerate(panel_of)}
    infos: list[Any] = [*app.registered_commands, *app.registered_groups]
    for info in infos:
        name = _name(info)
        if name not in panel_of:
            raise RuntimeError(f"command {name!r} is in no help panel (reverie.cli.shape.PANELS)")
        info.rich_help_panel = panel_of[name]
    app.registered_commands.sort(key=lambda info: order[_name(info)])
    app.registered_groups.sort(key=lambda info: order[_name(info)])
    _quiet(app)
