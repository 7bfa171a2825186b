"""CLI commands for running Reverie on its own: ``daemon``, ``schedule``, ``report``,
``export training`` and ``archive``.

Registered on the main app by :func:`register`; they parse arguments, call the library and
render. The shared plumbing (``--db``, error mapping) comes from :mod:`reverie.cli.common`.
"""

from __future__ import annotations

import sys
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from reverie.cli.common import (
    CycleArg,
    JsonFlag,
    NowOpt,
    emit_json,
    fail,
    json_data,
    new_console,
    open_brain,
    parse_now,
    parse_scope,
    print_result,
    scope_option,
)
from reverie.cli.daemon import daemon, schedule
from reverie.cli.memory import export_app
from reverie.config import parse_duration
from reverie.errors import InvalidInput, ReverieError, partial
from reverie.text.counts import counted

if TYPE_CHECKING:
    from reverie.dream.archive import Archive, ArchiveRun
    from reverie.engine import Reverie
    from reverie.models import Cycle, CycleReport, Scope

__all__ = ["archive_app", "register", "report_view"]

archive_app = typer.Typer(
    help="Move old consolidated episodes to verified cold bundles (dry run unless --apply).",
    invoke_without_command=True,
)

BundleArg = Annotated[str, typer.Argument(metavar="HASH", help="sha256:… or the bare hex.")]
ScopeList = Annotated[
    list[str] | None,
    scope_option("Only these brains."),
]


def _scopes(values: list[str] | None) -> list[Scope] | None:
    return [parse_scope(v) for v in values] if values else None


def _now(value: str | None = None) -> datetime:
    return parse_now(value) or datetime.now(UTC)


def _archive(rv: Reverie) -> Archive:
    from reverie.dream.archive import Archive

    return Archive(rv.store)


def _table(title: str, *columns: str) -> Table:
    table = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left")
    for col in columns:
        table.add_column(col, overflow="fold")
    return table


# -- report ----------------------------------------------------------------------------------


def _summary(r: CycleReport) -> Table:
    table = _table(f"cycle {r.cycle_id} · {r.scope} · {r.status}", "what", "value")
    rows = [
        ("started", f"{r.started_at:%Y-%m-%d %H:%M:%S}"),
        ("checkpoint", f"{r.checkpoint_before} → {r.checkpoint_after}"),
        ("scanned / collected / deferred", f"{r.scanned} / {r.collected} / {r.deferred}"),
        (
            "clustered",
            f"{counted(r.clustered, 'episode')} in {counted(r.groups, 'group')}"
            f" ({r.groups_deferred} deferred)",
        ),
        ("consolidated", str(r.episodes_marked)),
        (
            "pages",
            f"{r.created} created, {r.revised} revised, {r.merged} merged,"
            f" {r.superseded} superseded, {r.retired} retired, {r.unchanged} unchanged",
        ),
        (
            "bytes",
            f"{r.bytes_in:,} in → {r.bytes_out:,} out (compression {r.compression_ratio:g}×)",
        ),
        (
            "model",
            f"{r.model_calls} calls, {r.cache_hits} cached, {r.input_tokens:,} tokens in,"
            f" {r.output_tokens:,} out, {r.model_latency_s:.2f}s",
        ),
        ("message", r.message),
    ]
    rows += [("rejected", x) for x in r.rejected]
    rows += [("fallback", x) for x in r.fallbacks]
    for key, value in rows:
        table.add_row(key, Text(value))
    return table


def _timings(r: CycleReport) -> Table:
    table = _table("timings", "phase", "seconds")
    table.columns[1].justify = "right"
    for phase, seconds in r.timings.items():
        table.add_row(phase, f"{seconds:.4f}")
    return table


def _insights(r: CycleReport) -> Table:
    table = _table("top insights", "topic", "pattern", "imp", "nov", "conf", "freq", "score")
    for col in table.columns[2:]:
        col.justify = "right"
    for i in r.insights:
        topic = Text(i.topic_key + (" (deferred)" if i.deferred else ""))
        table.add_row(
            topic,
            Text(i.pattern),
            f"{i.importance:.2f}",
            f"{i.novelty:.2f}",
            f"{i.confidence:.2f}",
            str(i.frequency),
            f"{i.score:.3f}",
        )
    return table


def report_view(cycle: Cycle) -> RenderableType:
    """Everything a stored report says, as rich tables."""
    r = cycle.report
    parts: list[RenderableType] = [_summary(r), _timings(r)]
    if r.insights:
        parts.append(_insights(r))
    if r.recommendations:
        advice = _table("recommendations", "kind", "advice")
        for rec in r.recommendations:
            advice.add_row(
                rec.kind + (f" ({rec.subject})" if rec.subject else ""), Text(rec.message)
            )
        parts.append(advice)
    if cycle.undone_at:
        parts.append(Text(f"undone at {cycle.undone_at:%Y-%m-%d %H:%M}", style="yellow"))
    return Group(*parts)


def report(ctx: typer.Context, cycle_id: CycleArg, as_json: JsonFlag = False) -> None:
    """Show a cycle's full report: counts, timings, volumes, top insights, recommendations."""
    with open_brain(ctx) as rv:
        cycle = rv.cycle(cycle_id)
    print_result(cycle, as_json, report_view)


# -- export training -------------------------------------------------------------------------


def export_training(
    ctx: typer.Context,
    out: Annotated[Path, typer.Argument(metavar="OUT.jsonl", help="Where to write the rows.")],
    scope: ScopeList = None,
    min_confidence: Annotated[
        float, typer.Option("--min-confidence", min=0.0, max=1.0, help="Skip weaker pages.")
    ] = 0.0,
    force: Annotated[
        bool, typer.Option("--force", help="Replace OUT if it exists (default: refuse).")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Write every active page as a chat training example (system, cited episodes, page)."""
    if not force and (out.is_file() or out.is_symlink()):
        fail(InvalidInput("OUT", f"{out} exists; pass --force to replace it"))

    from reverie.memory.export import write_training

    scopes = _scopes(scope)
    with open_brain(ctx) as rv:
        done, failed = partial(
            lambda: write_training(
                rv.store,
                out,
                scopes,
                min_confidence=min_confidence,
                redactor=rv.redactor,
                recorded_at=_now(),
            )
        )
    if as_json:
        emit_json({**asdict(done), "path": str(done.path)})
    else:
        typer.echo(
            f"wrote {counted(done.rows, 'row')} ({counted(done.episodes, 'cited episode')},"
            f" {counted(done.scopes, 'scope')},"
            f" {done.bytes:,} bytes) to {done.path}"
        )
    if failed is not None:
        fail(failed)


# -- archive ---------------------------------------------------------------------------------


@archive_app.callback()
def archive(
    ctx: typer.Context,
    older_than: Annotated[
        str | None,
        typer.Option("--older-than", metavar="AGE", help="e.g. 30d (a bare number is days)."),
    ] = None,
    apply: Annotated[bool, typer.Option("--apply", help="Really move (default: dry run).")] = False,
    scope: ScopeList = None,
    now: NowOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """Archive consolidated episodes older than AGE into verified bundles next to the database."""
    if ctx.invoked_subcommand is not None:
        return
    if older_than is None:
        typer.echo(ctx.get_help())
        raise typer.Exit(2)

    try:
        age = parse_duration(
            older_than + "d" if older_than.isdigit() else older_than, "--older-than"
        )
    except ReverieError as exc:
        fail(exc)
        return
    scopes, at = _scopes(scope), _now(now)
    with open_brain(ctx) as rv:
        run, failed = partial(lambda: _archive(rv).run(age, at, apply=apply, scopes=scopes))
    if as_json:
        emit_json({**asdict(run), "bytes_cold": run.bytes_cold})
    else:
        _archive_view(run)
    if failed is not None:
        fail(failed)


def _archive_view(run: ArchiveRun) -> None:
    table = _table(
        f"archive ({'applied' if run.applied else 'dry run'}) · before {run.cutoff:%Y-%m-%d}",
        "bundle",
        "scope",
        "episodes",
        "seq",
        "bytes",
    )
    for b in run.bundles:
        table.add_row(
            b.hash, b.scope.key, str(b.episodes), f"{b.first_seq}–{b.last_seq}", f"{b.bytes:,}"
        )
    new_console().print(table)
    verb = "moved" if run.applied else "would move"
    typer.echo(
        f"{verb} {counted(run.episodes, 'episode')} ({run.bytes_hot:,} bytes of text) into"
        f" {counted(len(run.bundles), 'bundle')} of {run.bytes_cold:,} bytes"
        + ("" if run.applied else "; add --apply to do it")
    )


@archive_app.command("fetch")
def archive_fetch(ctx: typer.Context, bundle: BundleArg) -> None:
    """Print a bundle's episodes as JSON lines (checked against its hash)."""
    with open_brain(ctx) as rv:
        episodes = _archive(rv).fetch(bundle)
    for ep in episodes:
        sys.stdout.write(ep.model_dump_json() + "\n")


@archive_app.command("restore")
def archive_restore(ctx: typer.Context, bundle: BundleArg) -> None:
    """Bring a bundle's episodes back into the hot store."""
    with open_brain(ctx) as rv:
        restored = _archive(rv).restore(bundle, _now())
    typer.echo(f"restored {counted(restored, 'episode')} from {bundle}")


@archive_app.command("list")
def archive_list(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """List the bundles this database knows."""
    with open_brain(ctx) as rv:
        bundles = _archive(rv).bundles()
    if as_json:
        emit_json(json_data(bundles))
        return
    table = _table("archive bundles", "bundle", "scope", "episodes", "bytes", "created", "restored")
    for b in bundles:
        table.add_row(
            b.hash,
            b.scope.key,
            str(b.episodes),
            f"{b.bytes:,}",
            f"{b.created_at:%Y-%m-%d}",
            f"{b.restored_at:%Y-%m-%d}" if b.restored_at else "—",
        )
    new_console().print(table)


def register(app: typer.Typer) -> None:
    """Add this module's commands to the main ``reverie`` app."""
    app.command(name="report")(report)
    app.command(name="daemon")(daemon)
    app.command(name="schedule")(schedule)
    app.add_typer(archive_app, name="archive")
    export_app.command(name="training")(export_training)
