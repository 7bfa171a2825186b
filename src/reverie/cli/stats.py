"""CLI commands for the dream log and cumulative stats: ``reverie stats`` and
``reverie log``.

``stats`` shows, per scope, what dreaming has cost and done so far — cycles completed and failed,
model calls, cache hits, tokens, time, episodes consolidated — kept apart from the checkpoint
(:mod:`reverie.store.sql.cumulative`). ``log`` is the dream journal with that summary on top.
Registered on the main app by :func:`register`; no logic here.
"""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime
from typing import TYPE_CHECKING, Any

import typer
from rich.table import Table

from reverie.cli.common import (
    JsonFlag,
    NewestOpt,
    ScopeOpt,
    ScopeReq,
    emit_json,
    journal_data,
    maybe_scope,
    new_console,
    open_brain,
    parse_scope,
)

if TYPE_CHECKING:
    from reverie.store.base import DreamStats

__all__ = ["register", "stats_line", "stats_table"]


def _when(value: datetime | None) -> str:
    return f"{value:%Y-%m-%d %H:%M}" if value else "-"


def _as_json(s: DreamStats) -> dict[str, Any]:
    data = asdict(s)
    data["scope"] = s.scope.key
    for key in ("last_completed_at", "last_failed_at"):
        data[key] = data[key].isoformat() if data[key] else None
    return data


def stats_line(s: DreamStats) -> str:
    """One line: ``12 cycles completed, 1 failed · 30 model calls (4 cached) · …``."""
    line = (
        f"{s.cycles_completed} cycles completed, {s.cycles_failed} failed"
        f" · {s.model_calls} model calls ({s.cache_hits} cached)"
        f" · {s.input_tokens:,} tokens in, {s.output_tokens:,} out"
        f" · {s.duration_s:.1f} s dreaming · {s.episodes:,} episodes consolidated"
    )
    if s.last_error:
        line += f"\nlast failure {_when(s.last_failed_at)}: {s.last_error}"
    return line


def stats_table(rows: list[DreamStats]) -> Table:
    table = Table(title="cumulative dream stats", title_justify="left")
    names = ("scope", "done", "failed", "calls", "cached", "tok in", "tok out", "secs")
    for name in (*names, "episodes", "last cycle", "last failure"):
        table.add_column(name, justify="left" if name.startswith(("scope", "last")) else "right")
    for s in rows:
        failure = f"{_when(s.last_failed_at)} {s.last_error}" if s.last_error else "-"
        table.add_row(
            s.scope.key,
            str(s.cycles_completed),
            str(s.cycles_failed),
            str(s.model_calls),
            str(s.cache_hits),
            f"{s.input_tokens:,}",
            f"{s.output_tokens:,}",
            f"{s.duration_s:.1f}",
            f"{s.episodes:,}",
            _when(s.last_completed_at),
            failure,
        )
    return table


def stats(ctx: typer.Context, scope: ScopeOpt = None, as_json: JsonFlag = False) -> None:
    """Cumulative dream stats: cycles completed and failed, model calls, tokens, time."""
    target = maybe_scope(scope)
    with open_brain(ctx) as rv:
        rows = rv.dream_stats(target)
    if as_json:
        emit_json([_as_json(s) for s in rows])
        return
    if not rows:
        typer.echo("no cycle has run yet" + (f" for {target}" if target else ""))
        return
    new_console().print(stats_table(rows))


def log(
    ctx: typer.Context, scope: ScopeReq, limit: NewestOpt = 20, as_json: JsonFlag = False
) -> None:
    """The dream log: cumulative stats, then the journal's newest entries."""
    target = parse_scope(scope)
    with open_brain(ctx) as rv:
        rows = rv.dream_stats(target)
        entries = rv.journal(target, limit)
    if as_json:
        stats = _as_json(rows[0]) if rows else None
        emit_json({"stats": stats, "journal": journal_data(entries)})
        return
    typer.echo(f"# dream log of {target}")
    typer.echo((stats_line(rows[0]) if rows else "no cycle has run yet") + "\n")
    for e in entries:
        typer.echo(e.text + "\n")


def register(app: typer.Typer) -> None:
    app.command(name="stats")(stats)
    app.command(name="log")(log)
