"""Where a SQLite store connects, and whether it may write there.

A target is a file path, ``:memory:`` or a SQLite ``file:`` URI (``file:/srv/brain.db?mode=ro``,
``immutable=1`` too). A store is **read-only** when the URI says so, or when the file exists and
this process may not write it or its folder. Left to itself SQLite opens such a file and fails
late: at the first write, or, for a WAL database in a folder it cannot write, at the first read
(a reader needs the ``-shm`` index beside the file and cannot create it). So a read-only target
connects with ``mode=ro``, and where no ``-shm`` exists and none can be made, with
``immutable=1`` as well: in a folder nobody here can write, no writer can change the file
either (a writer needs its journal or ``-wal`` there). A ``-wal`` holding commits that only such
a ``-shm`` could index cannot be read that way, and is refused with what to do.

Root may write anything, so as root only a ``mode=ro`` URI (or a read-only file system) makes a
store read-only.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, quote, unquote, urlsplit

from reverie.errors import StoreReadOnly

__all__ = ["MEMORY", "SQLiteTarget", "database_file", "sqlite_target"]

MEMORY = ":memory:"


@dataclass(frozen=True)
class SQLiteTarget:
    """What ``sqlite3.connect`` is given for one store, and what the store may do there."""

    file: str
    """The database file (``:memory:`` for none)."""
    connect: str
    uri: bool
    read_only: bool


def database_file(text: str) -> str:
    """The file a target names (``:memory:`` for an in-memory database), read from its text
    alone: a path as given, or the path of a ``file:`` URI."""
    if not text.startswith("file:"):
        return text
    parts = urlsplit(text)
    if parse_qs(parts.query).get("mode") == ["memory"]:
        return MEMORY
    return unquote(parts.path) or MEMORY


def sqlite_target(text: str) -> SQLiteTarget:
    """How to connect to ``text`` (a path, ``:memory:`` or a ``file:`` URI); module docstring."""
    file = database_file(text)
    if file == MEMORY:
        return SQLiteTarget(MEMORY, text, text.startswith("file:"), False)
    if text.startswith("file:"):
        query = parse_qs(urlsplit(text).query)
        asked = query.get("mode") == ["ro"] or query.get("immutable") == ["1"]
        return _read_only(Path(file), text) if asked else SQLiteTarget(file, text, True, False)
    path = Path(file)
    if path.exists() and not _writable(path):
        return _read_only(path, f"file:{quote(str(path.resolve()))}?mode=ro")
    return SQLiteTarget(file, file, False, False)


def _writable(path: Path) -> bool:
    return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)


def _read_only(path: Path, uri: str) -> SQLiteTarget:
    """A read-only connection to ``path``; ``immutable`` where a reader cannot make the
    ``-shm`` index a WAL database needs."""
    shm, wal = Path(f"{path}-shm"), Path(f"{path}-wal")
    if "immutable=1" in uri or shm.exists() or os.access(path.parent, os.W_OK):
        return SQLiteTarget(str(path), uri, True, True)
    if wal.exists() and wal.stat().st_size > 0:
        raise StoreReadOnly(
            f"database {path}: its write-ahead log ({wal.name}) holds commits that cannot be read"
            " from a folder reverie may not write; open it once with write access (any command,"
            " `reverie status` too) so the log is folded into the file, then read it read-only"
        )
    return SQLiteTarget(str(path), f"{uri}&immutable=1", True, True)
