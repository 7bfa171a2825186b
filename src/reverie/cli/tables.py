"""Rich renderings of Reverie's records, shared by the CLI and the demo.

Pure functions from models to renderables: no I/O, no engine calls. Episode and page text is
untrusted, so every string from the store goes into a :class:`rich.text.Text` or is escaped;
nothing stored is ever interpreted as rich markup.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict
from datetime import datetime
from typing import TYPE_CHECKING, Any

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from reverie.models import Cycle, CycleReport, Episode, Lineage, Page, Revision
    from reverie.store.base import StoreStats

__all__ = [
    "citations_text",
    "cycles_table",
    "episodes_table",
    "lineage_view",
    "page_view",
    "pages_table",
    "report_line",
    "report_table",
    "revisions_table",
    "shorten",
    "stats_table",
    "trace_table",
    "when",
]

_COUNTS = ("created", "revised", "merged", "superseded", "retired", "unchanged")


def when(value: datetime | None) -> str:
    """A compact UTC timestamp, or an em dash for none."""
    return value.strftime("%Y-%m-%d %H:%M") if value else "—"


def shorten(text: str | None, width: int = 60) -> str:
    """One line of at most ``width`` characters."""
    flat = " ".join((text or "").split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def citations_text(ids: Sequence[str], limit: int = 4) -> str:
    """``a, b, c, d +3`` — the first few cited ids and how many more."""
    shown = ", ".join(ids[:limit])
    return f"{shown} +{len(ids) - limit}" if len(ids) > limit else shown


def report_line(report: CycleReport) -> str:
    """One plain line summarising a cycle report."""
    counts = ", ".join(f"{getattr(report, k)} {k}" for k in _COUNTS[:5] if getattr(report, k))
    return (
        f"{report.scope}: {report.status} · scanned {report.scanned}, consolidated "
        f"{report.episodes_marked}, deferred {report.deferred} · pages: {counts or 'no change'}"
    )


def report_table(report: CycleReport) -> Table:
    """The numbers of one cycle, then one row per page it touched."""
    table = _table(f"cycle {report.cycle_id} · {report.scope} · {report.status}", "what", "value")
    rows = [
        ("checkpoint", f"{report.checkpoint_before} → {report.checkpoint_after}"),
        ("scanned / collected", f"{report.scanned} / {report.collected}"),
        ("deferred", str(report.deferred)),
        ("groups", str(report.groups)),
        ("episodes consolidated", str(report.episodes_marked)),
        *((k, str(getattr(report, k))) for k in _COUNTS),
    ]
    rows += [
        (f"{c.action}", f"{c.title} ({c.page_id}, rev {c.revision_after})") for c in report.changes
    ]
    rows += [("rejected", r) for r in report.rejected]
    rows += [("fallback", r) for r in report.fallbacks]
    rows += [("deferred group", r) for r in report.deferred_groups]
    if report.model_calls or report.cache_hits:  # model cost
        rows.append(
            (
                "model",
                f"{report.model_calls} calls, {report.cache_hits} cached, {report.input_tokens}"
                f" tokens in, {report.output_tokens} out, {report.model_latency_s:.2f}s",
            )
        )
    if report.message:
        rows.append(("message", report.message))
    for key, value in rows:
        table.add_row(key, Text(value))
    return table


def _table(title: str, *columns: str, no_wrap: tuple[str, ...] = ()) -> Table:
    """A borderless table; ``no_wrap`` columns (ids, numbers) are never folded."""
    table = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left")
    for col in columns:
        table.add_column(col, no_wrap=col in no_wrap, overflow="fold")
    return table


def pages_table(pages: Iterable[Page], title: str = "pages") -> Table:
    """Kind, title with the id under it, confidence, revision, citations, status."""
    table = _table(title, "kind", "title / id", "conf", "rev", "cites", "status", no_wrap=("kind",))
    for p in pages:
        name = Text(p.title)
        name.append(f"\n{p.id}", style="dim")
        table.add_row(
            str(p.kind),
            name,
            f"{p.confidence:.2f}",
            str(p.revision.number),
            str(len(p.citations)),
            str(p.status),
        )
    return table


def page_view(page: Page, revision: Revision | None = None) -> RenderableType:
    """A page (or one of its older revisions) as markdown, with its bookkeeping below."""
    from rich.markdown import Markdown  # its parser loads for a page shown, not for --help

    shown = page if revision is None else page.model_copy(update={"revision": revision})
    rev = shown.revision
    valid = f"valid {when(rev.valid_from)} → {when(rev.valid_until)}"
    footer = Text(
        f"{page.id} · scope {page.scope} · rev {rev.number} · {valid} · {rev.hash[:19]}",
        style="dim",
    )
    if rev.superseded_by:
        footer.append(f" · superseded by {rev.superseded_by}")
    return Group(Markdown(shown.to_markdown()), footer)


def revisions_table(revisions: Iterable[Revision]) -> Table:
    table = _table("revisions", "rev", "status", "conf", "claims", "cycle", "by", "reason")
    table.columns[4].no_wrap = True
    for r in revisions:
        table.add_row(
            str(r.number),
            str(r.status),
            f"{r.confidence:.2f}",
            str(len(r.claims)),
            r.cycle_id or "—",
            r.author,
            Text(r.reason or ""),
        )
    return table


def episodes_table(episodes: Iterable[Episode], title: str = "cited episodes") -> Table:
    table = _table(title, "id", "date", "outcome", "situation", "lesson", no_wrap=("id", "date"))
    for e in episodes:
        table.add_row(
            e.id,
            f"{e.created_at:%Y-%m-%d}",
            str(e.outcome),
            Text(shorten(e.situation, 60)),
            Text(shorten(e.lesson, 60)),
        )
    return table


def lineage_view(lineage: Lineage) -> RenderableType:
    """``why PAGE``: the page, its revisions, and the raw episodes (and pages) its claims cite."""
    parts: list[RenderableType] = [
        page_view(lineage.page),
        revisions_table(lineage.revisions),
        episodes_table(lineage.episodes),
    ]
    if lineage.cited_pages:
        parts.append(Text(f"cites pages: {', '.join(lineage.cited_pages)}"))
    return Group(*parts)


def cycles_table(cycles: Iterable[Cycle]) -> Table:
    """Newest first; ``pages`` is ``+created ~changed`` (revised, merged, superseded, retired)."""
    table = _table(
        "cycles", "id", "scope", "status", "episodes", "pages", "ratio", no_wrap=("id", "status")
    )
    for c in cycles:
        r = c.report
        changed = r.revised + r.merged + r.superseded + r.retired
        table.add_row(
            c.id,
            str(c.scope),
            str(c.status),
            str(r.episodes_marked),
            f"+{r.created} ~{changed}",
            f"{r.compression_ratio:g}×" if r.compression_ratio else "—",
        )
    return table


def stats_table(stats: StoreStats, title: str) -> Table:
    table = _table(title, "what", "count")
    table.columns[1].justify = "right"
    for key, value in asdict(stats).items():
        table.add_row(key.replace("_", " "), str(value))
    return table


def trace_table(trace: dict[str, Any]) -> Table:
    """``recall --explain``: every unit recall considered, packed ones first in section order,
    with its score, price, the signals it was scored on, and why it was packed or cut."""
    terms = ", ".join(f"{t} {w:.2f}" for t, w in trace["weights"].items())
    title = (
        f"why: terms (weight) {terms or '—'} · floor {trace['floor']} · "
        f"{trace['used_tokens']} of {trace['budget_tokens']} tokens used"
    )
    table = _table(title, "", "score", "tokens", "unit", "signals", "why", no_wrap=("",))
    for unit in trace["units"]:
        mark = "+" if unit["decision"] == "packed" else "-"
        signals = ", ".join(f"{k} {v:.3g}" for k, v in unit["signals"].items())
        table.add_row(
            mark,
            f"{unit['score']:.3f}",
            str(unit["tokens"] if unit["tokens"] is not None else "—"),
            Text(f"{unit['kind']} {unit['id']} ({unit['path']}): {shorten(unit['text'], 50)}"),
            Text(signals),
            Text(unit["reason"]),
        )
    return table
