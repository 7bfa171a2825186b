"""The tables ``reverie bench chat`` prints: the figures of every system and phase, the targets
beside them (met or not), answers per slot, and Reverie's page counts."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.table import Table

from reverie.bench.chat import ChatResult, Run

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["TARGETS", "render_chat", "targets"]

_ROWS = (
    ("answered", "answered"),
    ("answered_shared", "  question shares a word with the statement"),
    ("answered_unshared", "  question shares no content word"),
    ("current", "current after a change"),
    ("stale", "stale after a change (lower is better)"),
    ("never_empty", "never-said → empty"),
    ("unstated_empty", "  a slot this person never stated"),
    ("offtopic_empty", "  what no one says"),
    ("quickstart", "mem0 quickstart answered"),
)
_COUNTS = (
    ("pages", "active pages"), ("fact_pages", "  fact pages"),
    ("preference_pages", "  preference pages"), ("cycles", "cycles"),
    ("collected", "episodes collected by cycles"), ("created", "pages created by cycles"),
    ("build_s", "add + dream seconds"), ("ask_s", "ask seconds (all questions)"),
)  # fmt: skip

_Check = Callable[[float, float | None], bool | None]
TARGETS: tuple[tuple[str, str, str, _Check], ...] = (
    ("reverie-minilm", "answered ≥ 0.9", "answered", lambda v, _d: v >= 0.9),
    ("reverie-minilm", "answered ≥ dense − 0.05", "answered",
     lambda v, d: None if d is None else v >= d - 0.05 - 1e-9),
    ("reverie-minilm", "current after a change = 1.0", "current", lambda v, _d: v == 1.0),
    ("reverie-minilm", "stale = 0", "stale", lambda v, _d: v == 0.0),
    ("reverie-minilm", "never-said → empty ≥ 0.9", "never_empty", lambda v, _d: v >= 0.9),
    ("reverie-lexical", "lexical only: answered ≥ 0.6", "answered", lambda v, _d: v >= 0.6),
)  # fmt: skip
"""(system, target, metric, check of the metric against dense's answered): the targets, judged
on each phase of the system they name."""


def targets(result: ChatResult) -> list[tuple[str, str, float, bool | None]]:
    """(run, target, figure, met) for every target and phase that ran; ``met`` is None where
    the target compares with a baseline that did not run."""
    dense = result.run("dense")
    base = dense.metrics(result.questions)["answered"] if dense else None
    out = []
    for system, label, key, check in TARGETS:
        for phase in ("before dream", "after dream"):
            run = result.run(f"{system} {phase}")
            if run is not None:
                figure = run.metrics(result.questions)[key]
                out.append((run.name, label, figure, check(figure, base)))
    return out


def _headline(result: ChatResult, live: list[Run], console: Console) -> None:
    config, kinds = result.config, result.to_dict()["questions"]
    title = (
        f"reverie bench chat · seed {config.seed} · {config.people} people · {result.chats}"
        f" chats · {result.messages} user messages · @{result.budget} words · questions: "
        + ", ".join(f"{n} {k}" for k, n in kinds.items())
    )
    table = Table(title=title, title_justify="left")
    table.add_column("metric")
    for run in live:
        table.add_column(run.name, justify="right")
    figures = [run.metrics(result.questions) for run in live]
    for key, label in _ROWS:
        table.add_row(label, *(f"{f[key]:.3f}" for f in figures))
    console.print(table)


def _targets(result: ChatResult, console: Console) -> None:
    table = Table(title="targets", title_justify="left")
    for column in ("run", "target", "figure", "met"):
        table.add_column(column)
    for name, label, figure, met in targets(result):
        mark = "n/a" if met is None else ("yes" if met else "[red]no[/red]")
        table.add_row(name, label, f"{figure:.3f}", mark)
    console.print(table)


def _slots(result: ChatResult, live: list[Run], console: Console) -> None:
    table = Table(title="answered per slot", title_justify="left")
    table.add_column("slot")
    for run in live:
        table.add_column(run.name, justify="right")
    slots = sorted({q.slot for q in result.questions if q.kind in ("said", "changed")})
    for slot in slots:
        cells = []
        for run in live:
            flags = [h.answered for q, h in zip(result.questions, run.hits, strict=True)
                     if q.slot == slot and q.kind in ("said", "changed")]  # fmt: skip
            cells.append(f"{sum(flags)}/{len(flags)}")
        table.add_row(slot, *cells)
    console.print(table)


def _counts(live: list[Run], console: Console) -> None:
    dreamers = [r for r in live if r.phase != "raw"]
    if not dreamers:
        return
    table = Table(title="counts", title_justify="left")
    table.add_column("count")
    for run in dreamers:
        table.add_column(run.name, justify="right")
    for key, label in _COUNTS:
        table.add_row(label, *(f"{r.counts[key]:g}" if key in r.counts else "" for r in dreamers))
    console.print(table)


def render_chat(result: ChatResult, console: Console) -> None:
    """Every table, then a line per skipped system."""
    live = [r for r in result.runs if r.skipped is None]
    if live:
        _headline(result, live, console)
        _targets(result, console)
        _slots(result, live, console)
        _counts(live, console)
    for name in dict.fromkeys(r.system for r in result.runs if r.skipped is not None):
        reason = next(r.skipped for r in result.runs if r.system == name)
        console.print(f"[yellow]skipped {name}[/yellow]: {reason}")
