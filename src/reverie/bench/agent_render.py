"""The tables ``reverie bench agent`` prints: headline figures against BM25, counts, and the
per-lesson and per-fact hits a person reads to see *which* knowledge each system misses; and,
for ``--worlds``, the one family table with the targets checked on the held-out worlds."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table

from reverie.bench.agent import AgentResult, SystemResult
from reverie.bench.agent_family import BASELINE, MARGIN, TARGETS, FamilyResult

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["render_agent", "render_family"]

_COUNTS = (
    ("pages", "active pages"), ("claims_per_page", "claims per page"),
    ("fact_pages", "  of them fact pages"), ("cited", "episodes cited by pages"),
    ("scanned", "episodes scanned by cycles"), ("collected", "  of them collected"),
    ("episodes", "episodes ingested"), ("cycles", "cycles"), ("build_s", "build seconds"),
    ("recall_s", "recall seconds (all probes)"),
)  # fmt: skip


def _rows(result: AgentResult) -> list[tuple[str, str]]:
    """(metric key, label) in display order."""
    rows = [(f"lesson_recall@{b}", f"lesson recall @{b} words") for b in result.budgets]
    top = max(result.budgets)
    if any(", stated," in note or ", unstated," in note for note in result.lesson_notes.values()):
        rows += [(f"stated@{top}", f"  stated lessons @{top}"),
                 (f"unstated@{top}", f"  unstated lessons @{top}")]  # fmt: skip
    rows += [(f"fact_current@{b}", f"current fact @{b}") for b in result.budgets]
    rows += [(f"fact_stale@{b}", f"stale fact @{b} (lower is better)") for b in result.budgets]
    rows += [(f"framing@{b}", f"framing words @{b} (lower is better)") for b in result.budgets]
    return [*rows, ("never_empty", "never-stored → empty"), ("leaks", "leaks (count)")]


def figures(result: AgentResult, system: SystemResult) -> dict[str, float]:
    """The headline metrics plus lesson recall split into stated and unstated lessons."""
    out = system.metrics()
    top = max(result.budgets)
    hits = system.lessons.get(top, {})
    for label in ("stated", "unstated"):
        keys = [k for k, note in result.lesson_notes.items() if f", {label}," in note]
        flags = [hits[k] for k in keys if k in hits]
        out[f"{label}@{top}"] = round(sum(flags) / len(flags), 4) if flags else 0.0
    return out


def _cell(key: str, value: float, base: float | None) -> str:
    if key == "leaks":
        return f"{value:.0f}"
    if base is None:
        return f"{value:.3f}"
    return f"{value:.3f} ({value - base:+.3f})"


def _headline(result: AgentResult, live: list[SystemResult], console: Console) -> None:
    config = result.config
    title = (
        f"reverie bench agent · {config.world} · seed {config.seed} · scale {config.scale:g}"
        f" · {config.days} days"
        f" · {result.episodes} episodes · differences against {BASELINE} in brackets"
    )
    table = Table(title=title, title_justify="left")
    table.add_column("metric")
    for system in live:
        table.add_column(system.name, justify="right")
    values = {s.name: figures(result, s) for s in live}
    base = values.get(BASELINE)
    for key, label in _rows(result):
        cells = [
            _cell(key, values[s.name][key], None if s.name == BASELINE or base is None
                  else base[key])
            for s in live
        ]  # fmt: skip
        table.add_row(label, *cells)
    console.print(table)


def _counts(live: list[SystemResult], console: Console) -> None:
    dreamers = [s for s in live if s.counts]
    if not dreamers:
        return
    table = Table(title="model-free counts", title_justify="left")
    table.add_column("count")
    for system in dreamers:
        table.add_column(system.name, justify="right")
    for key, label in _COUNTS:
        table.add_row(label, *(f"{s.counts.get(key, 0):g}" for s in dreamers))
    console.print(table)


def _mark(flag: bool) -> str:
    return "✓" if flag else "·"


def _lessons(result: AgentResult, live: list[SystemResult], console: Console) -> None:
    budgets = " / ".join(str(b) for b in result.budgets)
    table = Table(title=f"lessons found ({budgets} words)", title_justify="left")
    table.add_column("lesson")
    table.add_column("scope, kind")
    for system in live:
        table.add_column(system.name, justify="center")
    for key, note in result.lesson_notes.items():
        cells = [
            " ".join(_mark(s.lessons[b].get(key, False)) for b in result.budgets) for s in live
        ]
        table.add_row(key, note, *cells)
    console.print(table)


def _facts(result: AgentResult, live: list[SystemResult], console: Console) -> None:
    top = max(result.budgets)
    table = Table(title=f"facts @{top} words (current / stale)", title_justify="left")
    table.add_column("fact")
    for system in live:
        table.add_column(system.name, justify="center")
    for key in live[0].facts[top]:
        cells = []
        for s in live:
            current, stale = s.facts[top][key]
            cells.append(f"{'current' if current else '·'} / {'STALE' if stale else '·'}")
        table.add_row(key, *cells)
    console.print(table)


def render_agent(result: AgentResult, console: Console) -> None:
    """Every table, then a line per skipped system and per leak."""
    live = [s for s in result.systems if s.skipped is None]
    if live:
        _headline(result, live, console)
        _counts(live, console)
        _lessons(result, live, console)
        _facts(result, live, console)
    if (calls := result.model_calls) is not None:
        console.print(
            f"model path: {calls.calls} model calls for {calls.episodes} episodes"
            f" ({calls.per_episode} per episode; {calls.cache_hits} cache hits, {calls.cycles}"
            " cycles) with the LLM distiller against the local model server"
        )
    for system in result.systems:
        if system.skipped is not None:
            console.print(f"[yellow]skipped {system.name}[/yellow]: {system.skipped}")
        for probe, reasons in system.leaks.items():
            if reasons:
                console.print(f"[red]leak[/red] {system.name} {probe}: {', '.join(reasons[:5])}")


_FAMILY_COLUMNS = (
    ("lesson_recall@100", "lesson @100"), ("lesson_recall@250", "lesson @250"),
    ("fact_current@100", "current @100"), ("fact_stale@250", "stale @250"),
    ("never_empty", "never → empty"), ("leaks", "leaks"), ("words_used@100", "words @100"),
)  # fmt: skip
_TARGET_OF = {t.metric: t for t in TARGETS}


def _family_cell(key: str, value: float, marked: bool) -> str:
    text = f"{value:.0f}" if key == "leaks" else f"{value:.3f}"
    if key == "words_used@100":
        text = f"{value * 100:.0f}/100"
    target = _TARGET_OF.get(key)
    if marked and target is not None:
        text += " ✓" if target.holds({key: value}) else " ✗"
    return text


def _family_rows(family: FamilyResult, world: str, table: Table) -> None:
    figures, checks = family.figures(world), family.checks(world)
    held_out = world in family.report
    label = f"{world} ({'held-out' if held_out else 'tune'})"
    for name, values in figures.items():
        mark = name != BASELINE
        cells = [_family_cell(key, values[key], mark) for key, _ in _FAMILY_COLUMNS]
        gap = checks.get(name, {}).get(f"≥ BM25+{MARGIN:g}")
        cells.append("" if gap is None else ("✓" if gap else "✗"))
        met = checks.get(name)
        cells.append("" if met is None else f"{sum(met.values())}/{len(met)}")
        table.add_row(label, name, *cells)
        label = ""


def render_family(family: FamilyResult, console: Console) -> None:
    """One row per world and system; ✓/✗ against the targets on Reverie's rows; a verdict per
    system over the held-out worlds."""
    config = family.config
    title = (
        f"reverie bench agent · worlds · seed {config.seed} · scale {config.scale:g} ·"
        f" {config.days} days · tuned on {', '.join(family.tune) or 'none'} · held out"
        f" {', '.join(family.report) or 'none'}"
    )
    table = Table(title=title, title_justify="left")
    for heading in ("world", "system", *(label for _, label in _FAMILY_COLUMNS),
                    f"≥ BM25+{MARGIN:g}", "targets"):  # fmt: skip
        table.add_column(heading, justify="left" if heading in ("world", "system") else "right")
    for world in family.worlds:
        _family_rows(family, world, table)
    console.print(table)
    systems = {n for w in family.worlds for n in family.checks(w)}
    for name in sorted(systems):
        verdict = "every target held" if family.held(name) else "targets not held"
        console.print(f"{name} on the held-out worlds: {verdict}")
    for world, result in family.worlds.items():
        for system in result.systems:
            if system.skipped is not None:
                console.print(
                    f"[yellow]skipped {system.name} on {world}[/yellow]: {system.skipped}"
                )
