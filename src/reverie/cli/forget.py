"""``reverie forget``: erasure from the command line (docs/privacy.md).

A dry run unless ``--apply``: it prints exactly what would be erased — the rows per store area,
the episode ids, the pages re-derived and deleted, the tombstones, the mirrors rewritten and
the exported files out of reach. ``--receipt ID`` shows a stored receipt, ``--resume`` finishes
the file work of erasures a crash interrupted. No logic here: arguments, one facade call, the
rendering.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from reverie.cli.common import (
    JsonFlag,
    NowOpt,
    emit_json,
    fail,
    new_console,
    open_brain,
    parse_now,
    scope_option,
)
from reverie.errors import InvalidInput

if TYPE_CHECKING:
    from reverie.store.records import Receipt

__all__ = ["forget_command", "register", "render_receipt"]

_LISTED = 20
"""Ids listed in full before the rest are counted."""


def _ids(title: str, ids: list[str]) -> str:
    shown = ", ".join(ids[:_LISTED]) + (
        f" … and {len(ids) - _LISTED} more" if len(ids) > _LISTED else ""
    )
    return f"{title} ({len(ids)}): {shown}"


def render_receipt(receipt: Receipt, console: Console) -> None:
    """The receipt as a person reads it: counts per area, then what it names."""
    data = receipt.to_json()
    head = "erased" if receipt.applied else "dry run — nothing was erased; --apply erases"
    console.print(Text(f"{head} · {receipt.id} · request {receipt.request_id}", style="bold"))
    table = Table(box=box.SIMPLE_HEAD, title="rows per store area", title_justify="left")
    table.add_column("area")
    table.add_column("rows", justify="right")
    for area, n in data["counts"].items():
        table.add_row(area, str(n))
    console.print(table)
    for key, title in (
        ("episodes", "episodes"),
        ("archived", "of them archived"),
        ("not_found", "not found (nothing erased for them)"),
        ("pages_rederived", "pages re-derived"),
        ("pages_deleted", "pages deleted"),
        ("scopes_erased", "scopes erased"),
        ("mirrors", "Markdown mirrors rewritten"),
    ):
        if data.get(key):
            console.print(Text(_ids(title, list(data[key]))), soft_wrap=True)
    for item in data.get("unreachable") or []:
        console.print(
            Text(
                f"out of reach: {item['path']} (training rows of"
                f" {', '.join(item['scopes'])}, exported {item['exported_at']}):"
                " delete or rewrite it yourself",
                style="yellow",
            ),
            soft_wrap=True,
        )
    if receipt.applied and receipt.pending:
        console.print(Text("file work still due: run `reverie forget --resume`", style="yellow"))
    _render_physical(receipt, console)


def _render_physical(receipt: Receipt, console: Console) -> None:
    """What the database files still hold of the erased rows, and the commands that purge it."""
    physical = receipt.physical
    verb = "keep" if receipt.applied else "would keep"
    if physical["vacuumed"]:
        console.print(Text(f"vacuumed (VACUUM FULL): {', '.join(physical['vacuumed'])}"))
    if physical["tables"]:
        tables = physical["tables"]
        hint = "" if receipt.applied else " (--apply --vacuum does it)"
        console.print(
            Text(
                f"physically: {len(tables)} table(s) {verb} old versions of the erased rows"
                f" until vacuumed: {', '.join(tables)}{hint}",
                style="yellow",
            ),
            soft_wrap=True,
        )
    for step in physical["purge"]:
        console.print(Text(f"to purge: {step}", style="yellow"), soft_wrap=True)


def forget_command(  # noqa: PLR0913 (a CLI command: one parameter per option)
    ctx: typer.Context,
    episode: Annotated[
        list[str] | None,
        typer.Option(
            "--episode",
            "-e",
            metavar="ID",
            help="Episode ids, with --tenant, --agent or --scope (ids are a tenant's own).",
        ),
    ] = None,
    page: Annotated[str | None, typer.Option("--page", metavar="ID", help="A page.")] = None,
    subject: Annotated[
        str | None,
        typer.Option(
            "--subject",
            metavar="TEXT",
            help="Every episode holding TEXT in any field, metadata included (any case).",
        ),
    ] = None,
    older_than: Annotated[
        str | None,
        typer.Option("--older-than", metavar="DUR", help="Episodes older than this (400d)."),
    ] = None,
    scope: Annotated[
        str | None,
        scope_option("This scope exactly (alone: all).", metavar="T/A[/U]"),
    ] = None,
    agent: Annotated[
        str | None,
        typer.Option("--agent", metavar="T/A", help="An agent and all its users (alone: all)."),
    ] = None,
    tenant: Annotated[
        str | None, typer.Option("--tenant", metavar="T", help="A tenant (alone: all of it).")
    ] = None,
    apply: Annotated[bool, typer.Option("--apply", help="Erase (default: a dry run).")] = False,
    reason: Annotated[str, typer.Option("--reason", help="Why, kept in the receipt.")] = "",
    request_id: Annotated[
        str | None, typer.Option("--request-id", help="Your ticket id, kept in the receipt.")
    ] = None,
    vacuum: Annotated[
        bool,
        typer.Option(
            "--vacuum",
            help="With --apply: VACUUM FULL the tables left holding old row versions"
            " (PostgreSQL; SQLite's file is vacuumed after every erasure).",
        ),
    ] = False,
    receipt: Annotated[
        str | None, typer.Option("--receipt", metavar="ID", help="Show a stored receipt.")
    ] = None,
    resume: Annotated[
        bool, typer.Option("--resume", help="Finish erasures a crash interrupted.")
    ] = False,
    now: NowOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """Erase episodes, a page, a scope, an agent, a tenant, a subject or old episodes, with
    everything derived from them; a dry run unless --apply."""
    when = parse_now(now)
    console = new_console()
    with open_brain(ctx) as rv:
        if receipt is not None or resume:
            shown = [rv.erasure(receipt)] if receipt else rv.finish_erasures(now=when)
            if as_json:
                emit_json([r.to_json() for r in shown] if resume else shown[0].to_json())
            for r in [] if as_json else shown:
                render_receipt(r, console)
            if resume and not as_json:
                typer.echo(f"{len(shown)} erasure(s) still unfinished")
            return
        if not (episode or page or subject or older_than or scope or agent or tenant):
            fail(InvalidInput("target", "name what to forget (see reverie forget --help)"))
        done = rv.forget(
            episodes=episode or (),
            page=page,
            subject=subject,
            older_than=older_than,
            scope=scope,
            agent=agent,
            tenant=tenant,
            apply=apply,
            reason=reason,
            request_id=request_id,
            vacuum=vacuum,
            now=when,
        )
    if as_json:
        emit_json(done.to_json())
    else:
        render_receipt(done, console)


def register(app: typer.Typer) -> None:
    """Add ``forget`` to the main app."""
    app.command(name="forget")(forget_command)
