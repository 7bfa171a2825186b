"""Named, append-only schema migrations, shipped as ``NNNN_name.sql`` files.

A migration is never edited once released: a change is a new file. Each runs in its own
transaction and is recorded by name in ``_migrations``.
"""

from __future__ import annotations

import sqlite3
from importlib import resources

__all__ = ["load_migrations", "split_statements"]


def load_migrations(dialect: str = "sqlite") -> list[tuple[str, str]]:
    """``(name, sql)`` pairs in the order they must run."""
    folder = resources.files(__package__)
    if dialect != "sqlite":
        folder = folder / dialect
    files = sorted((f for f in folder.iterdir() if f.name.endswith(".sql")), key=lambda f: f.name)
    return [(f.name.removesuffix(".sql"), f.read_text(encoding="utf-8")) for f in files]


def split_statements(sql: str) -> list[str]:
    """Split a script into complete SQLite statements (trigger bodies stay whole)."""

    statements: list[str] = []
    buffer = ""
    for line in sql.splitlines(keepends=True):
        if not buffer and (not line.strip() or line.lstrip().startswith("--")):
            continue
        buffer += line
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        statements.append(buffer.strip())
    return statements
