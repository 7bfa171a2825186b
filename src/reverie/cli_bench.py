"""``reverie bench …``: benchmarks run on demand, never in the default test run.

Each prints its figures next to a baseline measured in the same process, as ratios.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

__all__ = ["bench_app"]

bench_app = typer.Typer(help="Benchmarks (slow; figures with ratios against in-process baselines).")


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(part.replace("_", "")) for part in text.split(",") if part.strip()]
    except ValueError:
        raise typer.BadParameter("give comma-separated episode counts, e.g. 10000,100000") from None
    if not sizes or min(sizes) < 1:
        raise typer.BadParameter("sizes must be positive")
    return sizes


@bench_app.command("core")
def core(
    sizes: Annotated[
        str, typer.Option(help="Comma-separated episode counts; one cycle each.")
    ] = "10000,100000",
    queries: Annotated[int, typer.Option(min=1, help="Recall queries at the largest size.")] = 300,
    budget: Annotated[int, typer.Option(min=1, help="Recall budget in tokens.")] = 400,
    workdir: Annotated[
        Path | None, typer.Option(help="Where the benchmark databases go (default: a temp dir).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the figures as JSON.")] = False,
) -> None:
    """Ingest episodes/s, cycle seconds and recall p50/p99 on the model-free SQLite path."""
    from reverie.bench.core import render_core, run_core

    where = workdir or Path(tempfile.mkdtemp(prefix="reverie-bench-"))
    result = run_core(sizes=_sizes(sizes), queries=queries, workdir=where, budget=budget)
    if as_json:
        typer.echo(json.dumps(json.loads(result.to_json()), indent=2))
    else:
        render_core(result, Console(highlight=False))
    if not result.passed:
        raise typer.Exit(1)


@bench_app.command("crash")
def crash(
    kills: Annotated[int, typer.Option(min=1, help="How many SIGKILLs to inject.")] = 100,
    seed: Annotated[int, typer.Option(help="Seed for the kill points and the data.")] = 0,
    workdir: Annotated[
        Path | None, typer.Option(help="Where the database goes (default: a temp dir).")
    ] = None,
) -> None:
    """Kill a dreaming process with SIGKILL at random points; check every invariant after each."""
    from reverie.bench.crash import run_crash

    where = workdir or Path(tempfile.mkdtemp(prefix="reverie-crash-"))
    result = run_crash(kills, where, seed=seed)
    console = Console(highlight=False)
    targets = ", ".join(f"{t} {n}" for t, n in sorted(result.by_target.items()))
    console.print(f"kills {result.kills} (rounds finished unkilled: {result.completed})")
    console.print(f"killed at: {targets}")
    console.print(
        f"episodes {result.episodes}, consolidated {result.consolidated}, {result.seconds} s"
    )
    for problem in result.violations:
        console.print(f"[red]violation[/red] {problem}")
    console.print("all invariants held" if result.passed else "[red]invariants violated[/red]")
    if not result.passed:
        raise typer.Exit(1)
