"""CLI commands for review mode (docs/review.md): ``plans`` and ``plan show|apply|reject``.

``reverie dream --review`` (:data:`ReviewFlag`, on the ``dream`` command) holds a cycle's changes
as a pending plan; these commands list plans, show one as a readable diff with its cited
episodes, apply it exactly as made (refused as stale, exit 2, when what it was built on moved)
or reject it. No logic here: argument parsing, one facade call, rendering. The shared plumbing
(``--db``, error mapping, ``--json``) comes from :mod:`reverie.cli.common`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated

import typer
from rich import box
from rich.table import Table
from rich.text import Text

from reverie.cli.common import JsonFlag, ScopeOpt, emit_json, json_data, new_console, open_brain
from reverie.cli.tables import report_table, shorten

if TYPE_CHECKING:
    from reverie.store.records import PendingPlan

__all__ = ["ReviewFlag", "plan_app", "plans_command", "register"]

ReviewFlag = Annotated[
    bool,
    typer.Option(
        "--review",
        help="Validate and hold the changes as a pending plan instead of applying them"
        " (see `reverie plans`).",
    ),
]
PlanArg = Annotated[str, typer.Argument(metavar="ID", help="The plan id (pl_…).")]

plan_app = typer.Typer(
    help="Show, apply or reject a plan held for review (reverie dream --review).",
    no_args_is_help=True,
)

_STYLES = {"+": "green", "-": "red", "@": "cyan", "=": "bold"}


def _what(p: PendingPlan) -> str:
    counts = ", ".join(f"{n} {k}" for k, n in p.summary()["counts"].items() if n)
    cs = p.changes
    moved = f"{cs.expected_checkpoint}→{cs.checkpoint}"
    return f"{counts or 'no page change'}; {len(cs.marks)} eps; {moved}"


def plans_table(plans: Sequence[PendingPlan]) -> Table:
    """One row per plan (its id carries when it was made): scope, status, what it would change,
    and why it left pending when it did."""
    table = Table(title="plans", box=box.SIMPLE_HEAD, title_justify="left")
    names = ["id", "scope", "status", "would change"]
    names += ["reason"] if any(p.reason for p in plans) else []
    for name in names:
        wraps = name not in ("id", "status")
        table.add_column(name, no_wrap=not wraps, min_width=10 if wraps else None, overflow="fold")
    for p in plans:
        row: list[str | Text] = [
            p.id,
            Text(p.scope.key),
            str(p.status),
            Text(_what(p)),
            Text(shorten(p.reason, 40)),  # in full: plan show
        ]
        table.add_row(*row[: len(names)])
    return table


def plans_command(
    ctx: typer.Context,
    scope: ScopeOpt = None,
    status: Annotated[
        str,
        typer.Option(
            "--status", help="pending, applied, rejected, stale, or all (default: pending)."
        ),
    ] = "pending",
    limit: Annotated[
        int, typer.Option("--limit", "-n", min=1, help="How many, newest first.")
    ] = 50,
    as_json: JsonFlag = False,
) -> None:
    """List plans held for review (reverie dream --review), newest first."""
    with open_brain(ctx) as rv:
        found = rv.plans(scope, status=None if status == "all" else status, limit=limit)
    if as_json:
        emit_json([p.summary() for p in found])
        return
    if not found:
        typer.echo(f"no {'' if status == 'all' else status + ' '}plans")
        return
    new_console().print(plans_table(found))


@plan_app.command("show")
def show(ctx: typer.Context, plan_id: PlanArg, as_json: JsonFlag = False) -> None:
    """Show a plan: a diff of every page it would change, with the episodes it cites."""
    from reverie.dream.review import render_review

    with open_brain(ctx) as rv:
        found = rv.plan(plan_id)
    if as_json:
        emit_json(found.to_json())
        return
    console = new_console()
    for line in render_review(found).splitlines():
        console.print(Text(line, style=_STYLES.get(line[:1], "")), soft_wrap=True)


@plan_app.command("apply")
def apply(ctx: typer.Context, plan_id: PlanArg, as_json: JsonFlag = False) -> None:
    """Apply a pending plan exactly as made; refused (exit 2) if its pages or checkpoint moved."""
    with open_brain(ctx) as rv:
        report = rv.apply_plan(plan_id)
    if as_json:
        emit_json(json_data(report))
        return
    new_console().print(report_table(report))
    typer.echo(f"plan {plan_id} applied as cycle {report.cycle_id}")


@plan_app.command("reject")
def reject(
    ctx: typer.Context,
    plan_id: PlanArg,
    reason: Annotated[
        str | None, typer.Option("--reason", "-r", help="Why (kept with the plan).")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Reject a pending plan: nothing it holds is applied; its episodes stay eligible."""
    from reverie.dream.review import settled_line

    with open_brain(ctx) as rv:
        plan = rv.reject_plan(plan_id, reason=reason)
    if as_json:
        emit_json(plan.summary())
        return
    typer.echo(settled_line(plan))


def register(app: typer.Typer) -> None:
    """Add ``plans`` and ``plan show|apply|reject`` to the main app."""
    app.command(name="plans")(plans_command)
    app.add_typer(plan_app, name="plan")
