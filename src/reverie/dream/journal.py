"""The dream journal: a short, human-readable entry per cycle, undo, restore and import.

Entries are plain text written in the same transaction as the change they describe, so the
journal never tells of something that did not happen. Each line names the page, what happened to
it and why (the revision's ``reason`` when it has one, else the evidence count). Pure functions:
they render, the store keeps.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from reverie.models import CycleReport
from reverie.store.base import JournalEntry, PageWrite

__all__ = ["cycle_entry", "entry", "render_journal"]

_VERBS = {
    "created": "created",
    "revised": "revised",
    "merged": "merged into",
    "superseded": "superseded",
    "retired": "retired",
    "restored": "restored",
}


def _stamp(when: datetime) -> str:
    return when.strftime("%Y-%m-%d %H:%M UTC")


def _line(action: str, write: PageWrite, episodes: int) -> str:
    rev = write.revision
    why = rev.reason
    if why is None and episodes:
        why = f"{episodes} episode{'s' if episodes != 1 else ''}"
    if why is None and rev.author != "cycle":
        why = f"by {rev.author}"
    verb = _VERBS.get(action, action)
    if action == "created" and str(rev.status) != "active":
        verb = f"created as {rev.status}"
    head = f'- {verb} "{rev.title}" ({rev.page_id}, rev {rev.number})'
    return f"{head}: {why}" if why else head


def entry(
    headline: str, when: datetime, changes: Sequence[tuple[str, PageWrite, int]], note: str = ""
) -> str:
    """``<time> · <headline>``, an optional note line, then one line per page change."""
    lines = [f"{_stamp(when)} · {headline}"]
    if note:
        lines.append(note)
    lines += [_line(action, write, n) for action, write, n in changes]
    if not changes:
        lines.append("- no page changed")
    return "\n".join(lines)


def cycle_entry(report: CycleReport, changes: Sequence[tuple[str, PageWrite, int]]) -> str:
    """The journal entry of one committed cycle."""
    note = (
        f"{report.episodes_marked} episodes consolidated, {report.deferred} deferred,"
        f" {len(report.rejected)} groups rejected"
    )
    return entry(f"cycle {report.cycle_id} · {report.scope}", report.started_at, changes, note)


def render_journal(entries: Sequence[JournalEntry], title: str) -> str:
    """The journal as Markdown (``journal.md`` of the mirror): oldest entry first."""
    parts = [f"# {title}", ""]
    for e in entries:
        head, _, rest = e.text.partition("\n")
        parts += [f"## {head}", "", rest, ""] if rest else [f"## {head}", ""]
    return "\n".join(parts).rstrip("\n") + "\n"
