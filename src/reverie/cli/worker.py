"""``reverie worker`` and ``reverie migrate``: the scale-out commands (docs/scaling.md).

Thin edges: the worker loop lives in :mod:`reverie.runtime.worker`, the copy in
:mod:`reverie.store.copy`. ``worker`` prints one JSON line per step on stdout (claimed, dreamed,
conflict, failed, released, lost) so a supervisor or a test can follow it; SIGTERM and SIGINT
finish the cycle in hand, release its lease and exit 0.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from typing import Annotated, Any

import typer
from rich.table import Table

from reverie.cli.common import chosen_embedder, new_console
from reverie.config import resolve_db
from reverie.errors import ReverieError
from reverie.text.counts import counted

__all__ = ["migrate_command", "worker_command"]


def _fail(exc: ReverieError) -> None:
    typer.echo(f"error: {exc}", err=True)
    raise typer.Exit(2)


def _print_event(event: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def worker_command(  # noqa: PLR0913 (typer: one parameter per CLI option)
    ctx: typer.Context,
    url: Annotated[
        str | None,
        typer.Option("--url", metavar="URL", help="Database URL (default: --db / REVERIE_DB)."),
    ] = None,
    ttl: Annotated[float, typer.Option(min=1.0, help="Lease length in seconds.")] = 60.0,
    poll: Annotated[float, typer.Option(min=0.01, help="Seconds to wait when idle.")] = 2.0,
    batch: Annotated[int, typer.Option(min=1, help="Scopes claimed per round.")] = 1,
    backoff: Annotated[
        float, typer.Option(min=0.0, help="Seconds a failed scope stays leased.")
    ] = 300.0,
    until_idle: Annotated[
        bool,
        typer.Option(
            "--until-idle",
            help="Exit once no scope has pending episodes but those that failed in this run"
            " (exit code 2, one line each).",
        ),
    ] = False,
    owner: Annotated[
        str | None, typer.Option(help="Worker name in leases (default: host:pid:random).")
    ] = None,
    hold: Annotated[float, typer.Option(hidden=True, min=0.0)] = 0.0,
) -> None:
    """Dream due scopes, claimed through leases; run as many as you like, on any machines."""
    from reverie.engine import Reverie
    from reverie.runtime.worker import Worker
    from reverie.store import open_store

    target = url or resolve_db(ctx.obj)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda _s, _f: stop.set())
    try:
        with Reverie.open(target, embedder=chosen_embedder(ctx)) as rv:
            leases = open_store(target)
            try:
                worker = Worker(
                    rv,
                    leases,
                    owner=owner,
                    ttl=ttl,
                    poll=poll,
                    batch=batch,
                    backoff=backoff,
                    hold=hold,
                    on_event=_print_event,
                )
                stats = worker.run(until_idle=until_idle, stop=stop)
            finally:
                leases.close()
    except ReverieError as exc:
        _fail(exc)
    typer.echo(
        f"worker {worker.owner}: {counted(stats.dreamed, 'cycle')},"
        f" {counted(stats.marked, 'episode')} consolidated, {counted(stats.conflicts, 'conflict')},"
        f" {counted(stats.failures, 'failure')}",
        err=True,
    )
    if until_idle and stats.failed:  # left pending, episodes kept: say which and why
        for key, reason in stats.failed.items():
            typer.echo(f"error: dream of {key} failed: {reason}", err=True)
        raise typer.Exit(2)


def migrate_command(
    source: Annotated[
        str, typer.Option("--from", metavar="URL", help="The SQLite store: sqlite:///path.")
    ],
    target: Annotated[
        str, typer.Option("--to", metavar="URL", help="An empty PostgreSQL database URL.")
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Copy a SQLite brain into PostgreSQL and verify every table's row count and hash."""
    from reverie.store.copy import copy_store

    err = new_console(stderr=True)
    try:
        report = copy_store(
            source, target, on_table=lambda t, n: err.print(f"copied {n} rows of {t}")
        )
    except ReverieError as exc:
        _fail(exc)
    if as_json:
        rows = [{"table": t.table, "rows": t.rows, "digest": t.digest} for t in report.tables]
        out = {"seconds": report.seconds, "tables": rows, "bundles": report.bundles}
        typer.echo(json.dumps(out, indent=2))
        return
    table = Table(title=f"copied and verified in {report.seconds:.1f} s")
    for name in ("table", "rows", "sha256 (source = copy)"):
        table.add_column(name)
    for t in report.tables:
        table.add_row(t.table, str(t.rows), t.digest.removeprefix("sha256:")[:16])
    new_console().print(table)
    if report.bundles:
        new_console().print(
            f"{report.bundles} archive bundle(s) copied into the database, each checked"
            " against its name"
        )
