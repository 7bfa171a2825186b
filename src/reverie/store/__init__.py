"""The store: episodes, pages and their history, in SQLite or PostgreSQL (docs/store.md).

:func:`open_store` is the one place a target names its backend; everything else holds a
:class:`~reverie.store.base.BrainStore` and never asks which one it is.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from reverie.errors import InvalidInput

if TYPE_CHECKING:
    from reverie.store.base import BrainStore

__all__ = ["open_store"]


def open_store(target: str | Path) -> BrainStore:
    """A store for a file path, ``sqlite:///path``, a SQLite ``file:`` URI, ``:memory:`` or
    ``postgresql://…``."""
    from reverie.store.sqlite import SQLiteStore  # noqa: PLC0415 (backends load when opened)

    text = str(target)
    if text.startswith(("postgres://", "postgresql://")):
        from reverie.store.postgres import PostgresStore  # noqa: PLC0415 (extra: postgres)

        return PostgresStore(text)
    if text.startswith("file:"):  # a SQLite URI: file:/path?mode=ro opens it read-only
        return SQLiteStore(text)
    if text.startswith("sqlite://"):
        text = text.removeprefix("sqlite://") or ":memory:"
        text = ":memory:" if text in ("/:memory:", ":memory:") else text
    if "://" in text:
        raise InvalidInput(
            "db", f"unsupported database URL {text!r}; give a file path or sqlite:///path"
        )
    return SQLiteStore(text)
