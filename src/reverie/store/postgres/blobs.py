"""The cold tier's bytes on PostgreSQL: a server has no folder its clients share, so a bundle's
bytes live in ``archive_blobs`` (migration 0016), named by the sha256 of the bytes like SQLite's
files. The index and the stubs are the shared SQL's (:mod:`reverie.store.sql.archive`).

:func:`bundle_put` stores the bytes before the index names them, :func:`bundle_get` reads them
back for verification, and deleting an index row deletes its bytes in the same transaction (a
trigger), which is what makes an erasure's dropped bundle unreadable the moment it commits.
"""

from __future__ import annotations

from typing import Any

from reverie.store.sql.database import Database

__all__ = ["bundle_get", "bundle_put", "put_bundle"]


def put_bundle(c: Any, bundle_hash: str, data: bytes) -> None:
    """Store a bundle's bytes under their hash inside the caller's transaction ``c`` (the same
    hash always holds the same bytes)."""
    c.execute(
        "INSERT INTO archive_blobs (hash, data) VALUES (?, ?) ON CONFLICT (hash) DO NOTHING",
        (bundle_hash, data),
    )


def bundle_put(db: Database, bundle_hash: str, data: bytes) -> None:
    """Store a bundle's bytes under their hash, in a transaction of its own."""
    with db.write() as c:
        put_bundle(c, bundle_hash, data)


def bundle_get(db: Database, bundle_hash: str) -> bytes | None:
    """A bundle's bytes as stored, or None when none are stored under ``bundle_hash``."""
    rows = db.read("SELECT data FROM archive_blobs WHERE hash = ?", (bundle_hash,))
    return bytes(rows[0][0]) if rows else None
