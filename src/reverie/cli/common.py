"""What the command line turns into one red line instead of a traceback.

:class:`~reverie.errors.ReverieError` already says what to fix. The failures of the world
around the library — the database file unreadable, read-only, corrupt or on a full disk, a
path that cannot be written, input nested past the interpreter's recursion limit — arrive as
``sqlite3.Error``, ``OSError`` or ``RecursionError``; :func:`edge_error` names the database
and what to do for each (a driver's failure is classified by :mod:`reverie.store.failures`,
the one place the HTTP service reads it from too). Commands that only read never create a
database: :func:`refuse_missing` stops them before a folder or a file is made.

Every command module shares the same few edge helpers, kept here so none imports another:
:func:`open_brain` opens the configured database and maps its errors, :func:`fail` prints one
red line and exits 2, :func:`parse_scope` / :func:`parse_now` turn option text into values, and
:func:`print_result` prints a command's result as ``--json`` or as its rich view. The arguments
and options several commands take (``--json``, ``--scope``, ``--now``, a page or cycle id,
``--limit``) are defined once here, so they read and behave the same in every command.
"""

from __future__ import annotations

import difflib
import json
import re
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, is_dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TypeVar

import typer
from rich.console import Console, RenderableType
from rich.table import Table
from rich.text import Text

from reverie.cli import complete
from reverie.config import resolve_db
from reverie.errors import (
    InvalidInput,
    NotFound,
    ReverieError,
    ScopesFailed,
    StoreError,
    UndoRefused,
)

if TYPE_CHECKING:
    from reverie.engine import Reverie
    from reverie.models import Scope
    from reverie.store.base import JournalEntry

__all__ = [
    "BENCH_HELP",
    "EDGE_ERRORS",
    "EMBEDDER_KEY",
    "JSON_ASKED",
    "REPORTED",
    "chosen_embedder",
    "edge_error",
    "emit_json",
    "error_data",
    "fail",
    "journal_data",
    "json_data",
    "maybe_scope",
    "new_console",
    "open_brain",
    "parse_now",
    "parse_scope",
    "print_result",
    "refuse_missing",
    "sqlite_path",
    "unexpected",
]

BENCH_HELP = "Benchmarks (slow; figures with ratios against in-process baselines)."
"""``reverie bench``'s help, shown by ``reverie --help`` without loading the benchmarks."""

EMBEDDER_KEY = "reverie.embedder"
"""Where the root command keeps ``--embedder`` for every subcommand (``ctx.meta``)."""

EDGE_ERRORS: tuple[type[Exception], ...] = (sqlite3.Error, OSError, RecursionError)
REPORTED: tuple[type[Exception], ...] = (ReverieError, *EDGE_ERRORS)
"""Everything a command reports in one red line (exit 2)."""


def scope_option(help: str = "The brain to use.", metavar: str = "TENANT/AGENT[/USER]") -> Any:
    """The ``--scope``/``-s`` option every command takes: ``REVERIE_SCOPE`` as its default, and
    Tab offering the brain's scopes."""
    return typer.Option(
        "--scope", "-s", envvar="REVERIE_SCOPE", metavar=metavar, help=help,
        autocompletion=complete.scopes,
    )  # fmt: skip


JsonFlag = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON to stdout.")]
ScopeOpt = Annotated[
    str | None,
    scope_option(),
]
ScopeReq = Annotated[
    str,
    scope_option(),
]
NowOpt = Annotated[
    str | None,
    typer.Option("--now", metavar="ISO", help="Pretend it is this time (ISO 8601; default: now)."),
]
"""The options most commands share: ``--json``, ``--scope`` and ``--now``."""
PageArg = Annotated[
    str, typer.Argument(metavar="ID", help="The page id.", autocompletion=complete.page_ids)
]
CycleArg = Annotated[
    str, typer.Argument(metavar="CYCLE", help="The cycle id.", autocompletion=complete.cycle_ids)
]
NewestOpt = Annotated[int, typer.Option("--limit", "-n", min=1, help="How many, newest.")]
"""``--limit N`` of a command that lists the newest records first (its default is its own)."""

T = TypeVar("T")


def sqlite_path(db: str) -> Path | None:
    """The file behind ``db`` when it names a SQLite file (a path or a ``file:`` URI; not
    ``:memory:``, not a server URL)."""
    from reverie.store.sqlite.target import MEMORY, database_file

    text = db.removeprefix("sqlite://") if db.startswith("sqlite://") else database_file(db)
    if text in ("", MEMORY, "/:memory:") or "://" in text:
        return None
    return Path(text)


def refuse_missing(db: str) -> None:
    """:class:`NotFound` when ``db`` is a SQLite file that does not exist."""
    path = sqlite_path(db)
    if path is not None and not path.exists():
        raise NotFound(
            f"no database at {path}; create it with `reverie init` (or `reverie ingest`),"
            " or point --db / REVERIE_DB at an existing one"
        )


def edge_error(exc: BaseException, db: str | None) -> ReverieError:
    """``exc`` as an error the CLI reports in one line."""
    where = f"database {db}: " if db else ""
    if isinstance(exc, sqlite3.Error):
        from reverie.store.failures import store_failure

        failure = store_failure(exc)
        return failure.kind(f"{where}{failure.remedy} ({failure.detail})", detail=failure.detail)
    if isinstance(exc, RecursionError):
        return StoreError("a value is nested too deeply to process (RecursionError)")
    if isinstance(exc, OSError):
        target = f" {exc.filename}" if exc.filename else ""
        return StoreError(f"cannot use{target}: {exc.strerror or exc}")
    return StoreError(f"{type(exc).__name__}: {exc}")


class _Console(Console):
    """A console whose tables keep their words whole where the width allows (:func:`fit`)."""

    def print(self, *objects: Any, **kwargs: Any) -> None:
        super().print(*(fit(o, self) if isinstance(o, Table) else o for o in objects), **kwargs)


_NARROWER: tuple[dict[str, Any], ...] = (
    {"show_edge": False, "pad_edge": False},
    {"padding": (0, 0)},
)


def fit(table: Table, console: Console) -> Table:
    """``table``, with less space around its columns while its columns' longest words do not
    fit the console (at 80 columns a cycle id and a scope name would otherwise be folded mid-word,
    "acme/re searche r"); a table that fits is left as it was drawn."""
    for narrower in _NARROWER:
        if table.__rich_measure__(console, console.options).minimum <= console.width:
            break
        for name, value in narrower.items():
            setattr(table, name, value)
    return table


def new_console(stderr: bool = False) -> Console:
    return _Console(stderr=stderr, highlight=False)


def json_data(value: Any) -> Any:
    """``value`` as plain JSON data: models dumped in JSON mode, dataclasses as dicts, lists and
    tuples item by item; anything else as it is."""
    from pydantic import BaseModel

    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list | tuple):
        return [json_data(v) for v in value]
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    return value


def emit_json(data: Any) -> None:
    """``data`` as indented JSON on stdout (a value JSON cannot hold is written as its text)."""
    typer.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def journal_data(entries: Sequence[JournalEntry]) -> list[dict[str, Any]]:
    """Journal entries as JSON data, each scope as its key."""
    return [{**asdict(e), "scope": e.scope.key} for e in entries]


def print_result(result: T, as_json: bool, view: Callable[[T], RenderableType]) -> None:
    """A command's ``result``: as JSON on stdout with ``--json``, else ``view(result)``."""
    if as_json:
        emit_json(json_data(result))
    else:
        new_console().print(view(result))


def _message(exc: ReverieError) -> list[str]:
    if isinstance(exc, InvalidInput):
        return [f"invalid {exc.field}: {exc.reason}"]
    if isinstance(exc, UndoRefused):
        return [f"undo refused: {exc}"]
    if isinstance(exc, ScopesFailed):
        return exc.lines()
    return [str(exc)]


def fail(exc: ReverieError) -> NoReturn:
    """One red line on stderr (one per failing scope of a multi-scope command), exit code 2.

    A command run with ``--json`` gets the error as JSON on stdout instead, in the shape the
    HTTP service answers (``{"error": {"code", "message", ...}}``), with the same exit code."""
    if _wants_json():
        emit_json({"error": error_data(exc)})
        raise typer.Exit(2)
    for message in _message(exc):
        new_console(stderr=True).print(Text(f"error: {message}", style="red"), soft_wrap=True)
    raise typer.Exit(2)


def error_data(exc: ReverieError) -> dict[str, Any]:
    """An error as JSON data: its code (the class name in snake case), its message lines, and
    the field to fix for bad input."""
    code = re.sub(r"(?<!^)(?=[A-Z])", "_", type(exc).__name__).lower()
    data: dict[str, Any] = {"code": code, "message": "; ".join(_message(exc))}
    if isinstance(exc, InvalidInput):
        data |= {"field": exc.field, "reason": exc.reason}
    return data


JSON_ASKED: ContextVar[bool] = ContextVar("JSON_ASKED", default=False)
"""Whether the command line asked for ``--json``: its errors are then JSON on stdout too."""


def _wants_json() -> bool:
    return JSON_ASKED.get()


def unexpected(exc: BaseException) -> ReverieError:
    """An exception no command expected, as one line that says what went wrong."""
    if isinstance(exc, ReverieError):
        return exc
    if isinstance(exc, OverflowError):
        return InvalidInput("date", f"a date or duration is out of range ({exc})")
    if isinstance(exc, sqlite3.Error | OSError | RecursionError):
        return edge_error(exc, None)
    return StoreError(
        f"unexpected {type(exc).__name__}: {exc} (REVERIE_DEBUG=1 shows the traceback;"
        " please report it)"
    )


@contextmanager
def open_brain(ctx: typer.Context, *, create: bool = False) -> Iterator[Reverie]:
    """Open the database named by ``--db`` / ``REVERIE_DB`` / the default; map errors to exit 2.

    Only commands that store (``create``: init, ingest, serve, mcp, keys create) may create
    the database; any other names a missing one as an error and creates nothing.
    """
    from reverie.engine import Reverie

    db = resolve_db(ctx.obj)
    try:
        if not create:
            refuse_missing(db)
        with Reverie.open(db, embedder=chosen_embedder(ctx)) as rv:
            yield rv
    except ReverieError as exc:
        fail(exc)
    except EDGE_ERRORS as exc:
        fail(edge_error(exc, db))


def known_scope(rv: Reverie, target: Scope) -> Scope:
    """``target`` when the brain holds it; else :class:`NotFound` naming the scopes it does
    hold that are closest, so a typo is told apart from a brain with nothing relevant."""
    held = [s.key for s in rv.scopes()]
    if target.key in held:
        return target
    close = difflib.get_close_matches(target.key, held, n=3, cutoff=0.5)
    if close:
        hint = f"did you mean {', '.join(close)}?"
    else:
        hint = f"it holds {', '.join(held[:5])}" if held else "the brain holds no scope yet"
    raise NotFound(f"unknown scope {target}: nothing was ever stored there; {hint}")


def chosen_embedder(ctx: typer.Context) -> str:
    """``--embedder`` when given, else :data:`~reverie.api.embedding.CONFIGURED` (the
    environment's, the config file's, the brain's recorded one, then auto)."""
    from reverie.api.embedding import CONFIGURED

    given = ctx.meta.get(EMBEDDER_KEY)
    return given if isinstance(given, str) and given else CONFIGURED


def parse_scope(value: str) -> Scope:
    from reverie.models import Scope

    try:
        return Scope.parse(value)
    except ReverieError as exc:
        fail(exc)


def maybe_scope(value: str | None) -> Scope | None:
    return None if value is None else parse_scope(value)


EARLIEST = datetime(1900, 1, 1, tzinfo=UTC)
LATEST = datetime(9000, 1, 1, tzinfo=UTC)
"""The dates an option may name: wide enough for any history, far enough from the calendar's
ends that adding a retention period or a clock skew to them stays a date."""


def parse_now(value: str | None, option: str = "--now") -> datetime | None:
    """An ISO 8601 date-time option, as UTC, between :data:`EARLIEST` and :data:`LATEST`."""
    if value is None:
        return None
    from reverie.models import utc

    try:
        when = utc(datetime.fromisoformat(value))
    except ValueError:
        fail(InvalidInput(option, f"{value!r} is not an ISO 8601 date-time"))
    if not EARLIEST <= when < LATEST:
        fail(InvalidInput(option, f"{value!r} is outside the years 1900 to 8999"))
    return when
