"""``reverie remember``: one episode from flags, for a shell script or a person at a prompt.

The same episode a JSON line would carry; what is not given is left to the model's defaults
(the outcome ``unknown``, the time the ingest clock's now). It prints the stored episode's id
and seq, or the episode with ``--json``; sending the same ``--id`` again is a duplicate, not a
second episode.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from reverie.cli.common import JsonFlag, NowOpt, ScopeReq, emit_json, fail, open_brain, parse_now
from reverie.errors import ReverieError

__all__ = ["register"]


def remember(  # noqa: PLR0913 (typer: one parameter per CLI option)
    ctx: typer.Context,
    scope: ScopeReq,
    situation: Annotated[str, typer.Option(help="What the agent faced.")],
    action: Annotated[str, typer.Option(help="What it did.")] = "",
    outcome: Annotated[
        str, typer.Option(help="success, failure, partial, timeout or unknown.")
    ] = "unknown",
    error: Annotated[str | None, typer.Option(help="The error it met, if any.")] = None,
    lesson: Annotated[str | None, typer.Option(help="What it learned, if it said.")] = None,
    tool: Annotated[list[str] | None, typer.Option(help="A tool it used (repeatable).")] = None,
    category: Annotated[str | None, typer.Option(help="A kind of work, if any.")] = None,
    episode_id: Annotated[
        str | None, typer.Option("--id", help="A stable id: sending it again is a duplicate.")
    ] = None,
    now: NowOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """Store one episode given by flags and print its id."""
    fields: dict[str, Any] = {"situation": situation, "action": action, "outcome": outcome}
    optional = {"error": error, "lesson": lesson, "category": category, "id": episode_id}
    fields |= {k: v for k, v in optional.items() if v is not None}
    if tool:
        fields["tools"] = tool
    at = parse_now(now)
    with open_brain(ctx, create=True) as rv:
        try:
            stored = rv.remember(fields, scope=scope, now=at)
        except ReverieError as exc:
            fail(exc)
    if as_json:
        emit_json(stored.model_dump(mode="json"))
    else:
        typer.echo(f"remembered {stored.id} (seq {stored.seq}) in {stored.scope}")


def register(app: typer.Typer) -> None:
    app.command("remember")(remember)
