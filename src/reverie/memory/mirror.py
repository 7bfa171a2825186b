"""The Markdown mirror: a brain as files a person (or a coding agent) can read and edit.

Layout, compatible with the ``MEMORY.md`` convention of coding agents::

    DIR/MEMORY.md            compact index: one line per active page, at most ``line_limit``
                             lines, the last one counting what did not fit
    DIR/memories/<slug>.md   one file per page (every status): front matter + ``# title`` + claims
    DIR/journal.md           the dream journal (optional)

Rules:

* Writes are atomic (temp file in the same folder, fsync, rename, fsync of the folder); a file
  whose bytes would not change is not rewritten, so export → import → export is byte-identical.
* Slugs are ``[a-z0-9-]`` only — derived from the page's stable topic key plus part of its id —
  so no path escapes ``memories/`` and two pages never share a file.
* A person's edit is detected by hash: a file whose bytes differ from the rendering of the
  revision named in its front matter was edited. ``import`` turns it into a new revision authored
  ``human``, unless the page also changed since that export (a conflict: reported, nothing
  overwritten). ``export`` never overwrites an edit that was not imported yet.
* Claims keep their citations: a line ending in ``[ep-1, ep-2]`` cites those episodes (they must
  exist in the scope); a line without brackets cites an episode that records the person's edit,
  stored in the import's transaction, so ``why`` still leads every claim to raw evidence.
* A person's corrections stick (:mod:`reverie.dream.pins`): a claim line the
  person added or changed is pinned, a line left as it was keeps its claim as it stood, and the
  revision's ``pins`` name ``title`` / ``kind`` when the ``# `` line / the front matter kind
  changed. Later cycles revise around them and never drop or rewrite them.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from reverie.dream.apply import WriteContext
from reverie.dream.cycle import new_cycle_id
from reverie.dream.journal import render_journal
from reverie.errors import InvalidInput, NotFound
from reverie.files import write_atomically
from reverie.memory.edits import Accepted, HumanEdit, accept_edit, commit_edits
from reverie.memory.export_records import record_export
from reverie.memory.frontmatter import FrontMatterError, dump, split
from reverie.models import (
    Page,
    PageStatus,
    Revision,
    Scope,
)
from reverie.redaction import MARK, redact
from reverie.store.base import BrainStore

__all__ = [
    "ExportReport",
    "ImportReport",
    "export_markdown",
    "import_markdown",
    "mirror_path",
    "slugs",
]

INDEX = "MEMORY.md"
FOLDER = "memories"
JOURNAL = "journal.md"
STALE_TEMPORARY_S = 3600
"""A temporary file of :func:`atomic_write` older than this was left by a killed writer."""
_TEMPORARY = re.compile(r"^\..+\.md\..+\.tmp$")
KEYS = (
    "id",
    "kind",
    "status",
    "confidence",
    "valid_from",
    "valid_until",
    "superseded_by",
    "sources",
    "revision",
    "hash",
)
_CITED = re.compile(r"^(?P<text>.*\S)\s+\[(?P<ids>[A-Za-z0-9_.:@, -]+)\]$")
_SLUG = re.compile(r"[^a-z0-9]+")


@dataclass
class ExportReport:
    directory: str
    written: list[str] = field(default_factory=list)
    unchanged: int = 0
    skipped: list[str] = field(default_factory=list)
    index_lines: int = 0
    overflow: int = 0
    removed_temporaries: list[str] = field(default_factory=list)
    removed_erased: list[str] = field(default_factory=list)


@dataclass
class ImportReport:
    directory: str
    revised: list[str] = field(default_factory=list)
    unchanged: int = 0
    conflicts: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    cycle_id: str | None = None


# -- files ---------------------------------------------------------------------------------------


def atomic_write(
    path: Path, data: bytes, *, before_replace: Callable[[Path], None] | None = None
) -> None:
    """Replace ``path`` with ``data`` so a reader sees the old bytes or the new, never a mix
    (:func:`reverie.files.write_atomically`: a fresh temporary name, no links followed, only
    regular files replaced).

    ``before_replace`` (the crash harness kills there) is called with the temporary
    file once it holds every byte, before the rename."""
    write_atomically(path, data, field="directory", before_replace=before_replace)


def _real_folder(directory: Path) -> Path:
    """``directory/memories``, refused when it is a symbolic link: the mirror is written (and
    imported files are rewritten) only inside the folder the caller named."""
    folder = directory / FOLDER
    if folder.is_symlink():
        raise InvalidInput(
            "directory",
            f"{folder} is a symbolic link; Reverie writes the mirror only into a real folder"
            " (replace the link with a folder, or export somewhere else)",
        )
    return folder


def _remove_stale_temporaries(folders: Sequence[Path]) -> list[str]:
    """Delete the temporary files of :func:`atomic_write` that a killed writer left behind
    (named ``.<name>.md.<random>.tmp``, regular files, untouched for an hour: a writer still at
    work is never disturbed). Links and anything else are left alone. Returns what went."""
    cutoff = time.time() - STALE_TEMPORARY_S
    removed: list[str] = []
    for folder in folders:
        for path in sorted(folder.iterdir()):
            if not _TEMPORARY.match(path.name) or path.is_symlink() or not path.is_file():
                continue
            if path.stat().st_mtime < cutoff:
                path.unlink(missing_ok=True)
                removed.append(str(path))
    return removed


def _write_if_changed(
    path: Path, data: bytes, report: ExportReport, hook: Callable[[Path], None] | None = None
) -> None:
    if path.is_file() and not path.is_symlink() and path.read_bytes() == data:
        report.unchanged += 1
        return
    atomic_write(path, data, before_replace=hook)
    report.written.append(str(path))


def slugs(pages: Sequence[Page]) -> dict[str, str]:
    """``page id -> slug``: ``[a-z0-9-]`` from the topic key plus id digits, never shared."""
    out: dict[str, str] = {}
    for page in sorted(pages, key=lambda p: p.id):
        base = _SLUG.sub("-", page.topic_key.lower()).strip("-")[:60].strip("-") or "page"
        digits = _SLUG.sub("", page.id.lower())
        slug = f"{base}-{digits[-8:]}"
        if slug in out.values():
            slug = f"{base}-{digits}"
        out[page.id] = slug
    return out


def mirror_path(store: BrainStore, page: Page) -> str:
    """Where the mirror of ``page``'s scope keeps it, relative to the mirror's directory
    (``memories/<slug>.md``): the file ``export markdown DIR`` writes and ``import`` reads."""
    return f"{FOLDER}/{slugs(store.pages(page.scope, None))[page.id]}.md"


# -- rendering -----------------------------------------------------------------------------------


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def render_page(page: Page, rev: Revision) -> str:
    """The mirror file of ``page`` at revision ``rev``."""
    meta = {
        "id": page.id,
        "kind": str(rev.kind),
        "status": str(rev.status),
        "confidence": round(rev.confidence, 4),
        "valid_from": _iso(rev.valid_from),
        "valid_until": _iso(rev.valid_until),
        "superseded_by": rev.superseded_by,
        "sources": rev.citations,
        "revision": rev.number,
        "hash": rev.hash,
    }
    title = " ".join(rev.title.split())
    return f"{dump(meta)}# {title}\n\n{rev.body}\n"


def render_index(scope: Scope, pages: Sequence[Page], names: dict[str, str], limit: int) -> str:
    active = [p for p in pages if p.status is PageStatus.ACTIVE]
    active.sort(key=lambda p: (-round(p.confidence, 4), p.title, p.id))
    head = [f"# Memory of {scope}", ""]
    lines = [
        f"- [{' '.join(p.title.split())}]({FOLDER}/{names[p.id]}.md)"
        f" — {p.kind}, confidence {p.confidence:.2f}"
        for p in active
    ]
    room = limit - len(head)
    if len(lines) > room:
        shown = room - 1
        lines = [*lines[:shown], f"- … and {len(active) - shown} more active pages in {FOLDER}/"]
    return "\n".join(head + lines) + "\n"


# -- export --------------------------------------------------------------------------------------


def _pending_edit(path: Path, store: BrainStore) -> bool:
    """True when ``path`` holds a person's edit that was not imported yet."""
    if not path.is_file():
        return False
    try:
        page, exported = _exported(store, path.read_text(encoding="utf-8"))
    except (FrontMatterError, InvalidInput, NotFound, UnicodeDecodeError):
        return True  # not ours to overwrite
    return path.read_text(encoding="utf-8") != render_page(page, exported)


def export_markdown(
    store: BrainStore,
    scope: Scope,
    directory: Path,
    *,
    line_limit: int = 200,
    journal: bool = False,
    before_replace: Callable[[Path], None] | None = None,
    recorded_at: datetime | None = None,
) -> ExportReport:
    """Write the mirror of ``scope`` to ``directory`` (see the module docstring);
    ``before_replace`` is handed to :func:`atomic_write` for every file written. With
    ``recorded_at`` (and a store that keeps them) the folder is remembered as the scope's
    mirror as of then, so that an erasure rewrites it at once (docs/privacy.md)."""
    if line_limit < 4:
        raise InvalidInput("line_limit", "must be at least 4")
    folder = _real_folder(directory)
    folder.mkdir(parents=True, exist_ok=True)
    pages = store.pages(scope, None)
    names = slugs(pages)
    report = ExportReport(directory=str(directory))
    report.removed_temporaries = _remove_stale_temporaries([directory, folder])
    erased = _erased_files(store, folder)
    for path in erased - {folder / f"{names[p.id]}.md" for p in pages}:
        path.unlink(missing_ok=True)
        report.removed_erased.append(str(path))
    for page in pages:
        path = folder / f"{names[page.id]}.md"
        if path.is_symlink() or (path not in erased and _pending_edit(path, store)):
            report.skipped.append(f"{path}: edited by a person and not imported yet")
            continue
        data = render_page(page, page.revision).encode("utf-8")
        _write_if_changed(path, data, report, before_replace)
    index = render_index(scope, pages, names, line_limit)
    _write_if_changed(directory / INDEX, index.encode("utf-8"), report, before_replace)
    report.index_lines = index.count("\n")
    active = sum(p.status is PageStatus.ACTIVE for p in pages)
    report.overflow = active - (line_limit - 3) if active > line_limit - 2 else 0
    if journal:
        text = render_journal(store.journal(scope, 1_000_000), f"Dream journal of {scope}")
        _write_if_changed(directory / JOURNAL, text.encode("utf-8"), report)
    record_export(store, directory, "markdown", [scope], recorded_at)
    return report


def _erased_files(store: BrainStore, folder: Path) -> set[Path]:
    """The files of ``folder`` that render a revision an erasure rewrote or deleted (named by
    its old hash): rewritten or removed by the export, a person's edit of one included, since
    erased text must not survive in the mirror either."""
    named: dict[tuple[str, int, str], Path] = {}
    for path in sorted(folder.glob("*.md")):
        if path.is_symlink() or not path.is_file():
            continue
        try:
            meta, _body = split(path.read_text(encoding="utf-8"), KEYS)
        except (FrontMatterError, UnicodeDecodeError, OSError):
            continue
        if isinstance(meta.get("id"), str) and isinstance(meta.get("revision"), int):
            named[(str(meta["id"]), int(meta["revision"]), str(meta.get("hash")))] = path
    if not named:
        return set()
    stones = store.tombstones({page_id for page_id, _n, _h in named})
    return {named[key] for t in stones if (key := (t.page_id, t.revision, t.hash_before)) in named}


# -- import --------------------------------------------------------------------------------------


def _exported(store: BrainStore, text: str) -> tuple[Page, Revision]:
    """The page a mirror file names and the revision it was exported at."""
    meta, _body = split(text, KEYS)
    page_id = meta.get("id")
    if not isinstance(page_id, str):
        raise InvalidInput("id", "the front matter names no page id")
    page = store.page(page_id)
    for rev in store.revisions(page_id):
        if rev.hash == meta.get("hash") and rev.number == meta.get("revision"):
            return page, rev
    raise InvalidInput(
        "hash", f"page {page_id} has no revision {meta.get('revision')} with that hash"
    )


def _parse_body(body: str) -> tuple[str, list[tuple[str, tuple[str, ...]]]]:
    lines = [line.strip() for line in body.split("\n") if line.strip()]
    if not lines or not lines[0].startswith("# "):
        raise InvalidInput("body", "the first line after the front matter must be '# <title>'")
    claims = []
    for line in lines[1:]:
        text = line[2:].strip() if line.startswith(("- ", "* ")) else line
        match = _CITED.match(text)
        if match and f"[{match['ids']}]" != MARK:  # a redacted secret is not a citation list
            ids = tuple(i.strip() for i in match["ids"].split(",") if i.strip())
            claims.append((match["text"], ids))
        elif text:
            claims.append((text, ()))
    if not claims:
        raise InvalidInput("body", "a page needs at least one claim line")
    return lines[0][2:].strip(), claims


@dataclass(frozen=True)
class _FileEdit:
    edit: HumanEdit
    path: Path  # named in the report when the edit is refused


def _read_edit(
    store: BrainStore, scope: Scope, path: Path, report: ImportReport
) -> _FileEdit | None:
    raw = path.read_bytes()
    text = raw.decode("utf-8")
    page, exported = _exported(store, text)
    if page.scope != scope:
        raise InvalidInput("id", f"page {page.id} belongs to {page.scope}, not {scope}")
    if text == render_page(page, exported):
        report.unchanged += 1
        return None
    if page.revision.hash != exported.hash:
        report.conflicts.append(
            f"{path}: edited by a person, and page {page.id} changed since the export"
            f" (revision {exported.number} -> {page.revision.number}); nothing was overwritten"
        )
        return None
    meta, body = split(text, KEYS)
    title, claims = _parse_body(redact(body))  # whole, so a pasted PEM block goes too
    return _FileEdit(HumanEdit(page, title, claims, meta, hashlib.sha256(raw).hexdigest()), path)


def _collect_edits(
    store: BrainStore, scope: Scope, directory: Path, report: ImportReport
) -> list[_FileEdit]:
    edits = []
    for path in sorted(_real_folder(directory).glob("*.md")):
        if path.is_symlink() or not path.is_file():
            report.problems.append(f"{path}: not a regular file; skipped")
            continue
        try:
            edit = _read_edit(store, scope, path, report)
        except (FrontMatterError, InvalidInput, NotFound, UnicodeDecodeError) as exc:
            report.problems.append(f"{path}: {exc}")
            continue
        if edit is not None:
            edits.append(edit)
    return edits


def _one_file_per_page(
    accepted: list[tuple[Path, Accepted]], report: ImportReport
) -> list[Accepted]:
    """Two files that would each revise one page cannot both be its next revision: neither is
    imported, and the problem names them both."""
    by_page: dict[str, list[Path]] = {}
    for path, item in accepted:
        by_page.setdefault(item.edit.page.id, []).append(path)
    for page_id, paths in by_page.items():
        if len(paths) > 1:
            files = ", ".join(str(p) for p in paths)
            report.problems.append(
                f"{files}: all edit page {page_id}; none of them was imported (keep one file"
                " per page: merge the edits into one and import again)"
            )
    return [item for _p, item in accepted if len(by_page[item.edit.page.id]) == 1]


def _accept(
    found: _FileEdit, ctx: WriteContext, store: BrainStore, report: ImportReport
) -> tuple[Path, Accepted] | None:
    """The revision one edited file makes, or None (reported, or a change of layout only)."""
    try:
        accepted = accept_edit(found.edit, ctx, store)
    except InvalidInput as exc:
        report.problems.append(f"{found.path}: page {found.edit.page.id}: {exc}")
        return None
    if accepted is None:
        report.unchanged += 1  # a change of layout only
        return None
    return found.path, accepted


def import_markdown(
    store: BrainStore, scope: Scope, directory: Path, *, now: datetime
) -> ImportReport:
    """New ``human`` revisions for the files a person edited since the export (one transaction;
    the edit itself is :mod:`reverie.memory.edits`, shared with the console)."""
    if not (directory / FOLDER).is_dir():
        raise InvalidInput(
            "directory",
            f"{directory} holds no {FOLDER}/ folder (or does not exist); give the folder"
            " `reverie export markdown` wrote",
        )
    report = ImportReport(directory=str(directory))
    ctx = WriteContext(scope, new_cycle_id(now), now, {}, author="human")
    edits = _collect_edits(store, scope, directory, report)
    accepted = _one_file_per_page(
        [a for e in edits if (a := _accept(e, ctx, store, report)) is not None], report
    )
    if not accepted:
        return report
    commit_edits(store, ctx, accepted, "import of a person's edits from the Markdown mirror")
    report.cycle_id = ctx.cycle_id
    report.revised = [a.write.revision.page_id for a in accepted]
    _refresh(store, directory, report.revised)
    return report


def _refresh(store: BrainStore, directory: Path, page_ids: Sequence[str]) -> None:
    """Rewrite the imported files in canonical form, naming their new revision."""
    for path in sorted((directory / FOLDER).glob("*.md")):
        if path.is_symlink() or not path.is_file():  # never read a link, pipe, folder
            continue
        try:
            meta, _body = split(path.read_text(encoding="utf-8"), KEYS)
        except (FrontMatterError, UnicodeDecodeError, OSError):
            continue
        if meta.get("id") in page_ids:
            page = store.page(str(meta["id"]))
            atomic_write(path, render_page(page, page.revision).encode("utf-8"))
