"""``reverie daemon`` and ``reverie schedule``: dream on a schedule, and see when each scope is due.

The schedule comes from ``--schedule FILE.toml`` (see :mod:`reverie.runtime.daemon`) with the
flags on top as the default for every scope. ``daemon --events`` prints one JSON object per step
on stdout (started, dreamed, failed, busy, catch-up, skipped, stopped) for logs and supervisors.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich import box
from rich.table import Table
from rich.text import Text

from reverie.cli.common import (
    chosen_embedder,
    fail,
    new_console,
    open_brain,
    parse_scope,
    scope_option,
)
from reverie.config import resolve_db
from reverie.errors import ReverieError

if TYPE_CHECKING:
    from reverie.runtime.scheduler import Schedules

__all__ = ["daemon", "schedule"]

ScheduleFile = Annotated[
    Path | None,
    typer.Option("--schedule", metavar="FILE.toml", help="Per-scope schedules (TOML)."),
]
Interval = Annotated[
    str | None, typer.Option("--interval", metavar="AGE", help="Dream every AGE (e.g. 6h).")
]
CronOpt = Annotated[
    str | None, typer.Option("--cron", metavar="EXPR", help='5-field cron, e.g. "30 2 * * *".')
]
MoonOpt = Annotated[
    list[str] | None, typer.Option("--moon", metavar="new|full", help="Dream at moon phases.")
]
Scopes = Annotated[
    list[str] | None,
    scope_option("Only these brains."),
]


def _schedules(
    file: Path | None,
    interval: str | None,
    cron: str | None,
    moon: list[str] | None,
    extra: dict[str, Any],
    scopes: list[str] | None,
) -> Schedules:
    from reverie.runtime.daemon import config_from_mapping, load_schedules
    from reverie.runtime.scheduler import Schedules

    flags: dict[str, Any] = {k: v for k, v in extra.items() if v is not None}
    if interval is not None:
        flags["interval"] = interval
    if cron is not None:
        flags["cron"] = cron
        flags.setdefault("interval", None if interval is None else interval)
    if moon:
        flags["moon"] = moon
        flags.setdefault("interval", None if interval is None else interval)
    try:
        base = config_from_mapping(flags)
        found = load_schedules(file, base) if file else Schedules(default=base)
        keys = tuple(parse_scope(s).key for s in scopes) if scopes else None
    except ReverieError as exc:
        fail(exc)
    return Schedules(default=found.default, per_scope=found.per_scope, scopes=keys)


def daemon(  # noqa: PLR0913 (typer: one parameter per CLI option)
    ctx: typer.Context,
    schedule_file: ScheduleFile = None,
    interval: Interval = None,
    cron: CronOpt = None,
    moon: MoonOpt = None,
    min_hours: Annotated[
        float | None, typer.Option("--min-hours", help="Gate: hours since the last run.")
    ] = None,
    min_new: Annotated[
        int | None, typer.Option("--min-new", help="Gate: pending episodes at least this many.")
    ] = None,
    gate: Annotated[str | None, typer.Option("--gate", metavar="and|or")] = None,
    catch_up: Annotated[
        bool | None, typer.Option("--catch-up/--no-catch-up", help="Run a missed slot at start.")
    ] = None,
    jitter: Annotated[str | None, typer.Option("--jitter", metavar="AGE")] = None,
    scope: Scopes = None,
    lease_ttl: Annotated[
        float, typer.Option("--lease-ttl", min=1.0, help="Seconds a dead daemon holds a scope.")
    ] = 60.0,
    max_sleep: Annotated[float, typer.Option("--max-sleep", min=0.05, hidden=True)] = 60.0,
    owner: Annotated[str | None, typer.Option("--owner", help="Name in leases and logs.")] = None,
    once: Annotated[
        bool, typer.Option("--once", help="One pass over due scopes, then exit.")
    ] = False,
    events: Annotated[bool, typer.Option("--events", help="Print JSON events on stdout.")] = False,
    hold: Annotated[float, typer.Option("--hold", min=0.0, hidden=True)] = 0.0,
) -> None:
    """Dream on a schedule until stopped (SIGINT/SIGTERM stop cleanly)."""
    from reverie.runtime.daemon import run_daemon

    extra = {"min_hours": min_hours, "min_new_episodes": min_new, "gate": gate}
    extra |= {"catch_up": catch_up, "jitter": jitter}
    schedules = _schedules(schedule_file, interval, cron, moon, extra, scope)
    emit = (lambda e: typer.echo(json.dumps(e))) if events else None

    def phase(name: str) -> None:  # --hold: a slow model call, for demos and the kill test
        if emit is not None:
            emit(
                {
                    "event": "phase",
                    "phase": name,
                    "owner": owner,
                    "at": datetime.now(UTC).isoformat(),
                }
            )
        if name == "distill":
            time.sleep(hold)

    try:
        reports = run_daemon(
            resolve_db(ctx.obj),
            schedules,
            lease_ttl=lease_ttl,
            max_sleep=max_sleep,
            owner=owner,
            once=once,
            on_event=emit,
            on_phase=phase if hold else None,
            embedder=chosen_embedder(ctx),
        )
    except ReverieError as exc:
        fail(exc)
    if not events:
        typer.echo(f"daemon stopped after {len(reports)} cycle(s)")


def schedule(
    ctx: typer.Context,
    schedule_file: ScheduleFile = None,
    interval: Interval = None,
    cron: CronOpt = None,
    moon: MoonOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON to stdout.")] = False,
) -> None:
    """When each scope dreams next, and how its last scheduled run went."""
    from reverie.runtime.schedule import ScheduleConfig, ScheduleState, next_due

    schedules = _schedules(schedule_file, interval, cron, moon, {}, None)
    now = datetime.now(UTC)
    with open_brain(ctx) as rv:
        records = rv.store.schedule_records(now)
    rows: list[dict[str, Any]] = []
    for r in records:
        config: ScheduleConfig = schedules.of(r.scope)
        due = next_due(ScheduleState.of(r), config, now)
        rows.append(
            {
                "scope": r.scope.key,
                "next": due.at.isoformat() if due.at else None,
                "ready": due.ready(now),
                "reason": due.reason,
                "last_run": r.last_run.isoformat() if r.last_run else None,
                "last_status": r.last_status,
                "failures": r.failures + r.crashed,
                "pending": r.pending,
                "running": r.running_owner,
            }
        )
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    table = Table(title=f"schedule at {now:%Y-%m-%d %H:%M} UTC", box=box.SIMPLE_HEAD)
    for col in ("scope", "next", "why", "last run", "status", "fails", "pending"):
        table.add_column(col, overflow="fold")
    for row in rows:
        table.add_row(
            row["scope"],
            "now" if row["ready"] else (row["next"] or "never")[:16],
            Text(row["reason"]),
            (row["last_run"] or "—")[:16],
            row["last_status"] or "—",
            str(row["failures"]),
            str(row["pending"]),
        )
    new_console().print(table)
