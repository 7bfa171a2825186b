"""``reverie serve``, ``reverie keys …`` and ``reverie mcp``: the service edges of the CLI.

Registered in :mod:`reverie.cli.app`; like every command they only parse, call the facade (or the
server factory) and print. The server binds to 127.0.0.1 unless ``--host`` says otherwise.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table
from rich.text import Text

from reverie.cli.common import fail, maybe_scope, new_console, open_brain, scope_option
from reverie.config import resolve_db
from reverie.errors import MissingExtra, ReverieError
from reverie.server.ratelimit import SPEC_HELP

if TYPE_CHECKING:
    from reverie.engine import Reverie
    from reverie.keys import ApiKey

__all__ = ["keys_app", "mcp_command", "serve_command"]

keys_app = typer.Typer(help="API keys for the HTTP service (stored hashed; shown once).")

_LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")

Dreaming = Annotated[
    bool,
    typer.Option(
        "--dream/--no-dream",
        help="Dream on a schedule in this process (off when separate workers or daemons dream).",
    ),
]
ScheduleFile = Annotated[
    Path | None,
    typer.Option(
        "--schedule", metavar="FILE.toml", help="Per-scope schedules (as `reverie daemon`)."
    ),
]
MaxSleep = Annotated[float, typer.Option("--max-sleep", min=0.05, hidden=True)]


@contextmanager
def _dreaming(
    ctx: typer.Context, rv: Reverie, on: bool, file: Path | None, max_sleep: float
) -> Iterator[None]:
    """The scheduler beside the service while it runs (reverie.runtime.background)."""
    if not on:
        yield
        return
    from reverie.runtime.background import BackgroundScheduler
    from reverie.runtime.daemon import load_schedules
    from reverie.runtime.schedule import ScheduleConfig
    from reverie.runtime.scheduler import Schedules

    try:
        schedules = load_schedules(file) if file else Schedules(default=ScheduleConfig())
    except ReverieError as exc:
        fail(exc)
    background = BackgroundScheduler(resolve_db(ctx.obj), schedules, like=rv, max_sleep=max_sleep)
    background.start()
    try:
        yield
    finally:
        background.stop()


def serve_command(  # noqa: PLR0913 (typer: one parameter per CLI option)
    ctx: typer.Context,
    host: Annotated[
        str, typer.Option("--host", help="Interface to bind; 0.0.0.0 opens it to the network.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", "-p", min=0, max=65535)] = 8765,
    max_body: Annotated[
        int, typer.Option("--max-body", min=1024, metavar="BYTES", help="Largest request body.")
    ] = 8 * 1024 * 1024,
    log_level: Annotated[str, typer.Option("--log-level")] = "info",
    dream: Dreaming = True,
    schedule_file: ScheduleFile = None,
    max_sleep: MaxSleep = 60.0,
    rate_limit: Annotated[
        str,
        typer.Option("--rate-limit", metavar="SPEC", help="Per-key request limits: " + SPEC_HELP),
    ] = "auto",
) -> None:
    """Serve the HTTP API and the dashboard (http://HOST:PORT/dashboard/)."""
    try:
        import uvicorn

        from reverie.server.app import create_app
    except ImportError:
        fail(MissingExtra("fastapi and uvicorn", "server"))
        return
    from reverie.server.ratelimit import limits_for

    err = new_console(stderr=True)
    try:
        limits = limits_for(rate_limit, host)
    except ReverieError as exc:
        fail(exc)
        return
    if host not in _LOCAL_HOSTS:
        err.print(Text(f"warning: listening on {host}: reachable from other machines", "yellow"))
    with (
        open_brain(ctx, create=True) as rv,  # the service takes episodes
        _dreaming(ctx, rv, dream, schedule_file, max_sleep),
    ):
        app = create_app(rv, max_body_bytes=max_body, rate_limits=limits)
        err.print(Text(f"dashboard: http://{host}:{port}/dashboard/  (keys: reverie keys create)"))
        uvicorn.run(app, host=host, port=port, log_level=log_level, ws="none")


def mcp_command(
    ctx: typer.Context,
    scope: Annotated[
        str | None,
        scope_option("Bind every tool to this brain."),
    ] = None,
    dream: Dreaming = True,
    schedule_file: ScheduleFile = None,
    max_sleep: MaxSleep = 60.0,
) -> None:
    """Serve the brain to a model over MCP (stdio): recall, remember, assert_fact, why, …"""
    from reverie.server.mcp import serve_stdio

    bound = maybe_scope(scope)
    with (
        open_brain(ctx, create=True) as rv,  # remember stores episodes
        _dreaming(ctx, rv, dream, schedule_file, max_sleep),
    ):
        serve_stdio(rv, bound)


def _key_row(key: ApiKey) -> list[str]:
    when = key.created_at.strftime("%Y-%m-%d %H:%M")
    revoked = key.revoked_at.strftime("%Y-%m-%d %H:%M") if key.revoked_at else ""
    return [key.id, key.name, key.bound_to, str(key.rights), when, revoked]


@keys_app.command("create")
def create_key(
    ctx: typer.Context,
    tenant: Annotated[str, typer.Option("--tenant", "-t", help="The tenant the key may touch.")],
    agent: Annotated[
        str | None, typer.Option("--agent", "-a", help="Restrict the key to one agent.")
    ] = None,
    rights: Annotated[
        str, typer.Option("--rights", "-r", help="read, write or admin (admin may also erase).")
    ] = "read",
    name: Annotated[str, typer.Option("--name", "-n", help="A label for the key.")] = "",
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Create a key and print its token once (only a salted hash is stored)."""
    with open_brain(ctx, create=True) as rv:  # the first step of setting up a service
        key, token = rv.keys.create(tenant, agent=agent, rights=rights, name=name)
    if as_json:
        typer.echo(json.dumps({**key.public(), "token": token}, indent=2))
        return
    typer.echo(token)
    new_console(stderr=True).print(
        Text(
            f"key {key.id} for {key.bound_to} ({key.rights}); store the token now:"
            " it is not shown again",
            "yellow",
        ),
        soft_wrap=True,
    )


@keys_app.command("list")
def list_keys(
    ctx: typer.Context, as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False
) -> None:
    """List keys (never their secrets)."""
    with open_brain(ctx) as rv:
        found = rv.keys.list()
    if as_json:
        typer.echo(json.dumps([k.public() for k in found], indent=2))
        return
    table = Table("id", "name", "bound to", "rights", "created", "revoked", title="API keys")
    for key in found:
        table.add_row(*(Text(cell) for cell in _key_row(key)))
    new_console().print(table)


@keys_app.command("revoke")
def revoke_key(
    ctx: typer.Context,
    key_id: Annotated[str, typer.Argument(metavar="KEY_ID", help="The id from `keys list`.")],
) -> None:
    """Revoke a key: every request with it gets 401 from now on."""
    with open_brain(ctx) as rv:
        key = rv.keys.revoke(key_id)
    typer.echo(f"revoked key {key.id} ({key.bound_to})")
