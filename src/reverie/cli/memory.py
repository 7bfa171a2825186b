"""CLI commands for memory over time (docs/memory.md): history, restore, verify, journal, and the
Markdown mirror (``export markdown DIR`` / ``import markdown DIR``).

Registered on the main app by :func:`register`; they hold no logic, only argument parsing, a
facade call and rendering. The shared plumbing (``--db``, error mapping, ``--json``) comes from
:mod:`reverie.cli.common`.
"""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from reverie.cli.common import (
    JsonFlag,
    NewestOpt,
    NowOpt,
    PageArg,
    ScopeOpt,
    ScopeReq,
    emit_json,
    journal_data,
    json_data,
    open_brain,
    parse_now,
    parse_scope,
    print_result,
)
from reverie.text.counts import counted

if TYPE_CHECKING:
    from reverie.models import Revision

__all__ = ["export_app", "import_app", "register"]

export_app = typer.Typer(help="Write a brain out in another form.", no_args_is_help=True)
import_app = typer.Typer(help="Read edits back into a brain.", no_args_is_help=True)


def _now(value: str | None) -> datetime | None:
    return parse_now(value)


def history_table(revisions: list[Revision]) -> Table:
    table = Table(title="history", title_justify="left")
    for name in ("rev", "when", "by", "status", "conf", "valid", "hash", "reason"):
        table.add_column(name, no_wrap=name in ("rev", "when", "hash"))
    for r in revisions:
        valid = f"{_day(r.valid_from)} → {_day(r.valid_until)}"
        table.add_row(
            str(r.number),
            f"{r.created_at:%Y-%m-%d %H:%M}",
            r.author,
            str(r.status),
            f"{r.confidence:.2f}",
            valid,
            r.hash.removeprefix("sha256:")[:12],
            Text(r.reason or ""),
        )
    return table


def _day(value: datetime | None) -> str:
    return value.date().isoformat() if value else "…"


def history(ctx: typer.Context, page_id: PageArg, as_json: JsonFlag = False) -> None:
    """Every revision of a page, oldest first: who wrote it, when, its validity and its hash."""
    with open_brain(ctx) as rv:
        revisions = rv.revisions(page_id)
    print_result(revisions, as_json, history_table)


def restore(
    ctx: typer.Context,
    page_id: PageArg,
    revision: Annotated[
        int,
        typer.Option("--revision", "-r", metavar="N", min=1, help="Revision to bring back."),
    ],
    now: NowOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """Make revision N current again, as a new revision (undo it with `reverie undo CYCLE`)."""
    with open_brain(ctx) as rv:
        cycle = rv.restore(page_id, revision, now=_now(now))
        page = rv.page(page_id)
    if as_json:
        emit_json({"cycle_id": cycle.id, "page_id": page_id, "revision": page.revision.number})
        return
    typer.echo(
        f"restored {page_id} to the content of revision {revision} as revision"
        f" {page.revision.number}; undo with: reverie undo {cycle.id}"
    )


def verify(
    ctx: typer.Context,
    scope: ScopeOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """Re-derive the sha256 of every stored revision; exit 1 when any does not match."""
    with open_brain(ctx) as rv:
        report = rv.verify(parse_scope(scope) if scope else None)
    if as_json:
        emit_json({**asdict(report), "ok": report.ok})
    else:
        for problem in report.problems:
            Console(stderr=True).print(Text(problem, style="red"), soft_wrap=True)
        verdict = "ok" if report.ok else counted(len(report.problems), "problem")
        erased = f" ({report.erased} rewritten by erasures, as their receipts say)"
        typer.echo(
            f"verified {counted(report.revisions, 'revision')} of"
            f" {counted(report.pages, 'page')}: {verdict}" + (erased if report.erased else "")
        )
        for erasure_id in report.unfinished:
            typer.echo(f"erasure {erasure_id}: file work still due; run `reverie forget --resume`")
    if not report.ok:
        raise typer.Exit(1)


def journal(
    ctx: typer.Context, scope: ScopeReq, limit: NewestOpt = 20, as_json: JsonFlag = False
) -> None:
    """The dream journal: what each cycle, undo, restore and import changed, and why."""
    with open_brain(ctx) as rv:
        entries = rv.journal(parse_scope(scope), limit)
    if as_json:
        emit_json(journal_data(entries))
        return
    if not entries:
        typer.echo("the journal is empty: no cycle has run for this scope yet")
    for e in entries:
        typer.echo(e.text + "\n")


class Layout(StrEnum):
    REVERIE = "reverie"
    CLAUDE_CODE = "claude-code"


@export_app.command("markdown")
def export_markdown(
    ctx: typer.Context,
    directory: Annotated[str, typer.Argument(metavar="DIR", help="The mirror folder.")],
    scope: ScopeReq,
    line_limit: Annotated[
        int, typer.Option("--line-limit", min=4, help="Most lines MEMORY.md may have.")
    ] = 200,
    with_journal: Annotated[
        bool, typer.Option("--journal", help="Also write the dream journal as journal.md.")
    ] = False,
    layout: Annotated[
        Layout,
        typer.Option(
            "--layout",
            help="reverie: the editable mirror; claude-code: Claude Code's memory folder"
            " (MEMORY.md + one file per active page, front matter name/description/type).",
        ),
    ] = Layout.REVERIE,
    as_json: JsonFlag = False,
) -> None:
    """Write MEMORY.md (index) and memories/<slug>.md (one per page) to DIR, atomically
    (--layout claude-code: Claude Code's memory folder instead)."""
    with open_brain(ctx) as rv:
        report = rv.export_markdown(
            parse_scope(scope),
            directory,
            line_limit=line_limit,
            journal=with_journal,
            layout=layout.value,
        )
    if as_json:
        emit_json(json_data(report))
        return
    for skipped in report.skipped:
        Console(stderr=True).print(Text(f"skipped {skipped}", style="yellow"), soft_wrap=True)
    typer.echo(
        f"exported to {directory}: {counted(len(report.written), 'file')} written,"
        f" {report.unchanged} unchanged, {len(report.skipped)} skipped;"
        f" MEMORY.md has {counted(report.index_lines, 'line')}"
        + (f" ({counted(report.overflow, 'page')} over the limit)" if report.overflow else "")
        + (
            f"; removed {counted(len(report.removed_temporaries), 'temporary file')}"
            " a killed export left"
            if report.removed_temporaries
            else ""
        )
    )


@import_app.command("markdown")
def import_markdown(
    ctx: typer.Context,
    directory: Annotated[str, typer.Argument(metavar="DIR", help="The mirror folder.")],
    scope: ScopeReq,
    now: NowOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """Turn a person's edits of DIR/memories/*.md into new revisions authored "human".

    Exit 1 when a file conflicts (edited by a person and changed by a cycle since the export) or
    cannot be read; the other edits are still imported.
    """
    with open_brain(ctx) as rv:
        report = rv.import_markdown(parse_scope(scope), directory, now=_now(now))
    if as_json:
        emit_json(json_data(report))
    else:
        err = Console(stderr=True)
        for line in report.conflicts + report.problems:
            err.print(Text(line, style="red"), soft_wrap=True)
        undo = f"; undo with: reverie undo {report.cycle_id}" if report.cycle_id else ""
        typer.echo(
            f"imported {len(report.revised)} edited pages, {report.unchanged} unchanged,"
            f" {len(report.conflicts)} conflicts, {len(report.problems)} problems{undo}"
        )
    if report.conflicts or report.problems:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add this module's commands to the main ``reverie`` app."""
    app.command(name="history")(history)
    app.command(name="restore")(restore)
    app.command(name="verify")(verify)
    app.command(name="journal")(journal)
    app.add_typer(export_app, name="export")
    app.add_typer(import_app, name="import")
