"""The Anthropic memory tool (``memory_20250818``) kept in a Reverie scope instead of files.

``ReverieMemoryTool`` implements the SDK's ``BetaAbstractMemoryTool``: hand it to
``client.beta.messages.tool_runner(tools=[...])`` (or dispatch tool calls to its ``call``) and
Claude's ``/memories`` directory lives in one scope's pages (:mod:`reverie.memory.notes`). Each
file is a note page titled with its path, one claim per non-blank line; directories are the
path prefixes of the notes. Every mutation (``create``, ``str_replace``, ``insert``,
``delete``, ``rename``) is one revision cycle authored ``agent``: ``Reverie.undo`` takes it back
and ``Reverie.why`` shows it. ``delete`` retires the page, never erases it.

Replies follow the SDK's own file-system implementation (the same messages and numbered
views), so a model sees no difference. Blank lines are not kept (a line is a claim); a line
over :data:`reverie.memory.notes.LINE_LIMIT` characters is refused with a :class:`ToolError`
that says so. Needs the ``anthropic`` extra.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from anthropic.lib.tools import BetaAbstractMemoryTool, ToolError
from anthropic.types.beta import (
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)

from reverie.engine import Reverie
from reverie.errors import InvalidInput
from reverie.memory.notes import NoteChange, commit_notes, note_text, notes, under
from reverie.models import Page, Scope, ScopeLike

__all__ = ["ROOT", "ReverieMemoryTool"]

ROOT = "/memories"
WIDTH = 6  # line numbers are right-aligned to six places, as in the SDK's own tool


def _numbered(lines: list[str], start: int) -> str:
    return "\n".join(f"{str(n).rjust(WIDTH)}\t{line}" for n, line in enumerate(lines, start))


def _size(octets: int) -> str:
    """A size as the SDK's listing writes it: ``512``, ``1.5K``, ``2.0M``."""
    size = float(octets)
    for unit in ("K", "M"):
        if size < 1024:
            return f"{size:.1f}{unit}" if unit != "K" or octets >= 1024 else str(octets)
        size /= 1024
    return f"{size:.1f}G"


def _octets(page: Page) -> int:
    return len(note_text(page).encode("utf-8"))


class ReverieMemoryTool(BetaAbstractMemoryTool):
    """Claude's memory directory over the notes of ``scope``."""

    def __init__(
        self,
        memory: Reverie,
        scope: ScopeLike,
        *,
        author: str = "agent",
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        super().__init__()
        self.memory = memory
        self.scope = Scope.parse(scope)
        self.author = author
        self.clock = clock or memory.clock
        """The time of each mutation; by default the engine's own clock."""
        self.last_cycle: str | None = None
        """The cycle of the latest mutation (``Reverie.undo`` takes it back)."""

    # -- paths ---------------------------------------------------------------------------------

    def _path(self, path: str) -> str:
        if path != ROOT and not path.startswith(ROOT + "/"):
            raise ToolError(f"Path must start with {ROOT}, got: {path}")
        clean = path.rstrip("/") or ROOT
        if any(part in ("", ".", "..") for part in clean.split("/")[1:]):
            raise ToolError(f"Path {path} would escape {ROOT} directory")
        return clean

    def _notes(self) -> dict[str, Page]:
        return notes(self.memory.store, self.scope)

    def _file(self, path: str) -> Page:
        page = self._notes().get(self._path(path))
        if page is None:
            raise ToolError(f"The path {path} does not exist. Please provide a valid path.")
        return page

    def _commit(self, changes: list[NoteChange], summary: str) -> None:
        try:
            cycle = commit_notes(
                self.memory.store,
                self.scope,
                changes,
                now=self.clock(),
                summary=summary,
                author=self.author,
            )
        except InvalidInput as exc:
            raise ToolError(f"{exc.field}: {exc.reason}") from None
        self.last_cycle = cycle or self.last_cycle

    # -- commands ------------------------------------------------------------------------------

    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        path = self._path(command.path)
        found = self._notes()
        if path in found:
            lines = note_text(found[path]).split("\n")
            start, end = 1, len(lines)
            if command.view_range and len(command.view_range) == 2:
                start = max(1, command.view_range[0])
                end = end if command.view_range[1] == -1 else command.view_range[1]
            shown = _numbered(lines[start - 1 : end], start)
            return f"Here's the content of {command.path} with line numbers:\n{shown}"
        inside = under(found, path)
        if path != ROOT and not inside:
            raise ToolError(f"The path {command.path} does not exist. Please provide a valid path.")
        return self._listing(path, inside)

    def _listing(self, folder: str, inside: dict[str, Page]) -> str:
        """Files and folders up to two levels below ``folder``, as the SDK lists them."""
        entries: dict[str, str] = {}
        for path, page in inside.items():
            parts = path[len(folder) + 1 :].split("/")
            for depth in range(1, min(len(parts), 2) + 1):
                name = "/".join(parts[:depth])
                is_file = depth == len(parts)
                entries[f"{folder}/{name}" + ("" if is_file else "/")] = (
                    _size(_octets(page)) if is_file else "-"
                )
        lines = [f"{_size(sum(_octets(p) for p in inside.values()))}\t{folder}"]
        lines += [f"{size}\t{name}" for name, size in sorted(entries.items())]
        head = f"Here're the files and directories up to 2 levels deep in {folder}"
        return f"{head}, excluding hidden items:\n" + "\n".join(lines)

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        path = self._path(command.path)
        found = self._notes()
        if path == ROOT or under(found, path):
            raise ToolError(f"{command.path} is a directory")
        if path in found:
            raise ToolError(f"File {command.path} already exists")
        if any(path.startswith(p + "/") for p in found):
            raise ToolError(f"{command.path} is inside a file, not a directory")
        self._commit([NoteChange(path, command.file_text)], f"create {path}\n{command.file_text}")
        return f"File created successfully at: {command.path}"

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        page = self._file(command.path)
        content = note_text(page)
        count = content.count(command.old_str)
        if count == 0:
            raise ToolError(
                f"No replacement was performed, old_str `{command.old_str}` did not appear"
                f" verbatim in {command.path}."
            )
        if count > 1:
            starts = [i for i in range(len(content)) if content.startswith(command.old_str, i)]
            rows = ", ".join(str(content[:i].count("\n") + 1) for i in starts)
            raise ToolError(
                f"No replacement was performed. Multiple occurrences of old_str"
                f" `{command.old_str}` in lines: {rows}. Please ensure it is unique"
            )
        changed = content[: content.find(command.old_str)].count("\n")
        new = content.replace(command.old_str, command.new_str)
        summary = f"str_replace in {page.title}\n- {command.old_str}\n+ {command.new_str}"
        self._commit([NoteChange(page.title, new, page)], summary)
        lines = note_text(self._file(command.path)).split("\n")
        first = max(0, changed - 2)
        snippet = _numbered(lines[first : changed + 3], first + 1)
        return (
            "The memory file has been edited. Here is the snippet showing the change"
            f" (with line numbers):\n{snippet}"
        )

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        page = self._file(command.path)
        lines = note_text(page).split("\n") if page.revision.claims else []
        if not 0 <= command.insert_line <= len(lines):
            raise ToolError(
                f"Invalid `insert_line` parameter: {command.insert_line}. It should be within"
                f" the range [0, {len(lines)}]."
            )
        lines.insert(command.insert_line, command.insert_text.rstrip("\n"))
        summary = f"insert at line {command.insert_line} of {page.title}\n{command.insert_text}"
        self._commit([NoteChange(page.title, "\n".join(lines), page)], summary)
        return f"The file {command.path} has been edited."

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        path = self._path(command.path)
        if path == ROOT:
            raise ToolError(f"Cannot delete the {ROOT} directory itself")
        found = self._notes()
        gone = {path: found[path]} if path in found else under(found, path)
        if not gone:
            raise ToolError(f"The path {command.path} does not exist")
        self._commit([NoteChange(p, None, page) for p, page in gone.items()], f"delete {path}")
        return f"Successfully deleted {command.path}"

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        old, new = self._path(command.old_path), self._path(command.new_path)
        if ROOT in (old, new):
            raise ToolError(f"Cannot rename the {ROOT} directory itself")
        found = self._notes()
        if new in found or under(found, new):
            raise ToolError(f"The destination {command.new_path} already exists")
        if any(new.startswith(p + "/") for p in found):
            raise ToolError(f"{command.new_path} is inside a file, not a directory")
        if new.startswith(old + "/"):
            raise ToolError(f"Cannot move {command.old_path} inside itself")
        moving = {old: found[old]} if old in found else under(found, old)
        if not moving:
            raise ToolError(f"The path {command.old_path} does not exist")
        changes = [
            NoteChange(new + path[len(old) :], note_text(page), page)
            for path, page in moving.items()
        ]
        self._commit(changes, f"rename {old} to {new}")
        return f"Successfully renamed {command.old_path} to {command.new_path}"
