"""A scope's active pages in Claude Code's own memory layout (``export markdown --layout
claude-code``).

Claude Code keeps a project's memory as a folder (``~/.claude/projects/<project>/memory/``)
holding ``MEMORY.md``, an index it loads at every session start (the first 200 lines), and one
Markdown file per memory, which it reads when the index line makes it relevant. Each file opens
with front matter naming the memory, describing it in one line, and typing it (``user``,
``feedback``, ``project`` or ``reference``); each index line links a file with its one-line
description. Sources are in docs/integrations.md.

What is written here::

    DIR/MEMORY.md        ``- [Title](<slug>.md) — <description>``, one line per active page,
                         the most confident first, at most ``line_limit`` lines
    DIR/<slug>.md        front matter (name, description, type), then the page's claims

A page's kind gives its type: a preference is about the ``user``; a lesson, warning or
procedure is ``feedback`` (how to do the work); a fact or a note is about the ``project``. The
description is the page's first claim, cut at 140 characters. Each file ends by naming its page
and revision, so ``reverie why`` finds the evidence. Writes are atomic and a file whose bytes
would not change is left alone; the export is one-way (edit the brain, or the Reverie mirror,
not these files). A file an earlier export wrote (it carries that closing line) for a page that
is no longer active is removed, so a retired or erased page leaves nothing behind; files
Reverie did not write are never touched. With ``recorded_at`` the folder is remembered, so an
erasure rewrites it at once (docs/privacy.md).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from reverie.errors import InvalidInput
from reverie.files import write_atomically
from reverie.memory.export_records import record_export
from reverie.memory.frontmatter import dump
from reverie.memory.mirror import INDEX, ExportReport, slugs
from reverie.models import Page, PageKind, PageStatus, Scope
from reverie.store.base import BrainStore

__all__ = ["DESCRIPTION_LIMIT", "KIND", "TYPES", "export_claude_code", "render_memory"]

DESCRIPTION_LIMIT = 140
TYPES = {
    PageKind.PREFERENCE: "user",
    PageKind.LESSON: "feedback",
    PageKind.WARNING: "feedback",
    PageKind.PROCEDURE: "feedback",
    PageKind.FACT: "project",
    PageKind.NOTE: "project",
}
"""Claude Code's memory type for each page kind."""
KIND = "claude-code"
"""How the store's record of exports names a folder written here."""
_WRITTEN_BY_US = re.compile(r"^_Reverie page \S+, revision \d+, confidence", re.MULTILINE)


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def description(page: Page) -> str:
    claims = page.revision.claims
    return _one_line(claims[0].text if claims else page.title, DESCRIPTION_LIMIT)


def render_memory(page: Page) -> str:
    """One memory file: front matter, the title, the claims, and where they came from."""
    meta = {
        "name": _one_line(page.title, 200),
        "description": description(page),
        "type": TYPES[page.kind],
    }
    body = "\n".join(f"- {' '.join(c.text.split())}" for c in page.revision.claims)
    source = (  # the closing line also marks the file as this export's (_prune)
        f"_Reverie page {page.id}, revision {page.revision.number}, confidence"
        f" {page.confidence:.2f}: `reverie why {page.id}` shows its evidence._"
    )
    return f"{dump(meta)}# {meta['name']}\n\n{body}\n\n{source}\n"


def render_index(pages: Sequence[Page], names: dict[str, str], limit: int) -> tuple[str, int]:
    """MEMORY.md and how many pages did not fit in it."""
    lines = [f"- [{_one_line(p.title, 80)}]({names[p.id]}.md) — {description(p)}" for p in pages]
    room = limit - 2  # the heading and the blank line under it
    overflow = max(0, len(lines) - room)
    if overflow:
        lines = [*lines[: room - 1], f"- … and {overflow + 1} more memories in this folder"]
    return "\n".join(["# Memory", "", *lines]) + "\n", overflow


def _write(path: Path, text: str, report: ExportReport) -> None:
    data = text.encode("utf-8")
    if path.is_file() and not path.is_symlink() and path.read_bytes() == data:
        report.unchanged += 1
        return
    write_atomically(path, data, field="directory")
    report.written.append(str(path))


def export_claude_code(
    store: BrainStore,
    scope: Scope,
    directory: Path,
    *,
    line_limit: int = 200,
    recorded_at: datetime | None = None,
) -> ExportReport:
    """Write ``scope``'s active pages to ``directory`` in Claude Code's memory layout."""
    if line_limit < 4:
        raise InvalidInput("line_limit", "must be at least 4")
    directory.mkdir(parents=True, exist_ok=True)
    pages = [p for p in store.pages(scope, [PageStatus.ACTIVE]) if p.kind in TYPES]
    pages.sort(key=lambda p: (-round(p.confidence, 4), p.title, p.id))
    names = slugs(pages)
    report = ExportReport(directory=str(directory))
    for page in pages:
        _write(directory / f"{names[page.id]}.md", render_memory(page), report)
    index, report.overflow = render_index(pages, names, line_limit)
    _write(directory / INDEX, index, report)
    report.index_lines = index.count("\n")
    _prune(directory, {f"{name}.md" for name in names.values()} | {INDEX})
    record_export(store, directory, KIND, [scope], recorded_at)
    return report


def _prune(directory: Path, kept: set[str]) -> None:
    """Remove the memory files an earlier export wrote for pages no longer exported."""
    for path in directory.glob("*.md"):
        if path.name in kept or path.is_symlink() or not path.is_file():
            continue
        if _WRITTEN_BY_US.search(path.read_text(encoding="utf-8", errors="replace")):
            path.unlink(missing_ok=True)
