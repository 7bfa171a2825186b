"""The guided tour behind ``reverie demo``.

It replays a bundled week of agent logs (``reverie/data/sample_episodes.jsonl``) day by day,
runs a dream cycle for every scope at the end of each day, then shows what one brain learned,
why it believes it (the lineage down to raw episodes), and what recall hands the agent. Everything
goes through the public :class:`reverie.Reverie` facade, exactly as an integration would.
"""

from __future__ import annotations

import json
import shlex
from collections import Counter
from datetime import UTC, date, datetime, time
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from reverie.cli.tables import (
    citations_text,
    episodes_table,
    page_view,
    report_line,
    revisions_table,
)
from reverie.engine import Reverie

if TYPE_CHECKING:
    from reverie.models import Page, PageChange

__all__ = ["DEMO_BUDGET", "DEMO_QUERY", "DEMO_SCOPE", "load_sample", "run_demo"]

SAMPLE = "data/sample_episodes.jsonl"
DEMO_SCOPE = "acme/coder"
DEMO_QUERY = "deploying the api to kubernetes keeps timing out"
DEMO_BUDGET = 250
PARAPHRASE = "how do I ship the service to the cluster"
"""The deploy knowledge asked with none of its words: found only by meaning."""

_INTRO = (
    "Reverie gives an AI agent a sleep cycle. During the day the agent appends [bold]episodes[/]: "
    "what the situation was, what it did, what happened. At night a [bold]dream cycle[/] "
    "distills the experience that recurs or matters into [bold]pages[/] of knowledge, each claim "
    "citing the episodes it came from. Before the next task, [bold]recall[/] packs the relevant "
    "pages into the agent's prompt under a token budget.\n\n"
    "This demo replays a week of logs from two agents (acme/coder and acme/researcher)."
)


def load_sample() -> list[dict[str, Any]]:
    """The bundled sample episodes, as the JSON objects an agent would send."""
    text = resources.files("reverie").joinpath(SAMPLE).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _by_day(items: list[dict[str, Any]]) -> dict[date, list[dict[str, Any]]]:
    days: dict[date, list[dict[str, Any]]] = {}
    for item in items:
        days.setdefault(datetime.fromisoformat(item["created_at"]).date(), []).append(item)
    return dict(sorted(days.items()))


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _change_line(change: PageChange) -> Text:
    episodes = _plural(change.episodes, "episode")
    return Text(f"{'':10}{change.action:<10} “{change.title}” ({episodes})", style="dim")


def _end_of(day: date) -> datetime:
    return datetime.combine(day, time(23, 59, 59), tzinfo=UTC)


def _replay_week(rv: Reverie, console: Console) -> datetime:
    """Ingest each day's episodes, then dream; return the end of the last day."""
    last = datetime.now(UTC)
    for day, items in _by_day(load_sample()).items():
        result = rv.ingest(items)
        per_agent = Counter(str(item["scope"]) for item in items)
        agents = ", ".join(f"{n} episodes in {s}" for s, n in sorted(per_agent.items()))
        known = f"; {result.duplicates} were already stored" if result.duplicates else ""
        console.print(Text(f"{day:%a %d %b}  agents logged {agents}{known}", style="bold"))
        last = _end_of(day)
        reports = rv.dream_all(now=last)
        if not reports:
            console.print("   night: nothing pending")
        for report in reports:
            console.print(Text(f"   night: {report_line(report)}"))
            for change in report.changes:
                console.print(_change_line(change))
    return last


def _pages_table(pages: list[Page]) -> Table:
    table = Table(title=f"pages in the {DEMO_SCOPE} brain")
    for col in ("kind", "title", "confidence", "cites"):
        table.add_column(col, overflow="fold")
    for p in pages:
        table.add_row(
            str(p.kind), Text(p.title), f"{p.confidence:.2f}", citations_text(p.citations, 3)
        )
    return table


def _show_lineage(rv: Reverie, console: Console, page: Page) -> None:
    lineage = rv.why(page.id)
    console.print(page_view(lineage.page))
    console.print(revisions_table(lineage.revisions))
    console.print(episodes_table(lineage.episodes))


def _show_recall(rv: Reverie, console: Console, now: datetime, query: str = DEMO_QUERY) -> None:
    result = rv.recall(query, DEMO_SCOPE, DEMO_BUDGET, now=now)
    body = Text(result.text) if result.text else Text("(empty: nothing relevant)", style="dim")
    console.print(
        Panel(
            body,
            title=f"recall({query!r}, budget={DEMO_BUDGET})",
            subtitle=f"{result.used_tokens} of {DEMO_BUDGET} tokens · what the agent's prompt gets",
        )
    )


def _show_paraphrase(rv: Reverie, console: Console, now: datetime) -> None:
    """The same knowledge asked in other words: found by meaning, or why not."""
    if rv.embedder is None or rv.embedder.model_id.startswith("hashing"):
        console.print(
            Text(
                "recall matches words only here; install the embed extra"
                " (pip install 'reverie[embed]') to recall by meaning",
                style="yellow",
            )
        )
        return
    console.print(Text(f"in other words, by meaning (embedder {rv.embedder_name}):"))
    _show_recall(rv, console, now, PARAPHRASE)


def run_demo(db_path: Path, console: Console) -> None:
    """Replay the sample week into ``db_path`` and narrate what Reverie does with it."""
    console.print(Panel(_INTRO, title="Reverie demo"))
    console.print(Text(f"database: {db_path}"))
    with Reverie.open(db_path) as rv:
        console.rule("1 · a week of agent work, one dream cycle each night")
        last = _replay_week(rv, console)
        console.rule(f"2 · what {DEMO_SCOPE} knows now")
        pages = rv.pages(DEMO_SCOPE)
        console.print(_pages_table(pages))
        if pages:
            top = max(pages, key=lambda p: (len(p.citations), p.confidence))
            console.rule("3 · why: the most-cited page, down to its raw episodes")
            _show_lineage(rv, console, top)
        console.rule("4 · recall: the prompt section the agent receives before its next deploy")
        _show_recall(rv, console, last)
        _show_paraphrase(rv, console, last)
    db = shlex.quote(str(db_path))
    console.print(
        Text(
            f"Explore it yourself:\n  reverie --db {db} pages --scope {DEMO_SCOPE}\n"
            f"  reverie --db {db} cycles\n"
            f'  reverie --db {db} recall "pip install fails offline" --scope {DEMO_SCOPE}'
        )
    )
