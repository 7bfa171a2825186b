"""The cold tier on PostgreSQL: the bundle index, the hot-store stubs, and the bundles' bytes.

The rules are SQLite's (:mod:`reverie.store.sqlite.archive`): archiving never deletes an
episode row, it turns it into a *stub* (text fields emptied, vector units dropped) so citations,
idempotent appends and the checkpoint keep working; each direction is one transaction guarded by
compare-and-set on what was read (fingerprint and mark), so a concurrent change aborts the whole
batch. The generated ``tsvector`` follows the emptied text by itself, where SQLite's contentless
FTS5 table must be told.

What differs is where a bundle's bytes live. A PostgreSQL server has no folder its clients share,
so they live in ``archive_blobs`` (migration 0016), named by the sha256 of the bytes like SQLite's
files: :func:`bundle_put` stores them before the index names them, :func:`bundle_get` reads them
back for verification, and deleting an index row deletes its bytes in the same transaction (a
trigger), which is what makes an erasure's dropped bundle unreadable the moment it commits.

Functions here take the :class:`~reverie.store.sql.base.Database` (``?`` placeholders), as
SQLite's do; :class:`~reverie.store.postgres.PostgresStore` names them as its methods.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from reverie.errors import Conflict
from reverie.hashing import content_hash
from reverie.models import Episode, Scope
from reverie.store.records import BundleInfo, embedded_text
from reverie.store.sql.base import Database
from reverie.store.sql.rows import BUNDLE_COLUMNS, EPISODE_COLUMNS, bundle_row, prefixed

__all__ = [
    "archive_bundles",
    "archive_bundles_of_cycle",
    "archive_candidates",
    "archive_commit",
    "archive_locations",
    "archive_restore",
    "bundle_get",
    "bundle_put",
    "put_bundle",
]

_CANDIDATES = (
    f"SELECT {prefixed('e', EPISODE_COLUMNS)} FROM episodes e"
    " JOIN cycles c ON c.id = e.consolidated_in"
    " WHERE e.scope_key = ? AND c.undone_at IS NULL AND e.created_at < ?"
    " AND NOT (e.situation = '' AND e.action = '')"
    " AND NOT EXISTS (SELECT 1 FROM archived_episodes a"
    " WHERE a.tenant = e.tenant AND a.episode_id = e.id)"
    " ORDER BY e.seq LIMIT ?"
)
_STUB = (
    "UPDATE episodes e SET session_id = NULL, situation = '', action = '',"
    " outcome_details = NULL, error = NULL, lesson = NULL, tools = '[]', entities = '[]',"
    " metadata = '{}' FROM unnest(?::bigint[], ?::text[], ?::text[]) AS x(seq, fp, mark)"
    " WHERE e.seq = x.seq AND e.fingerprint = x.fp AND e.consolidated_in = x.mark"
)
_UNSTUB = (
    "UPDATE episodes SET session_id = ?, situation = ?, action = ?, outcome_details = ?,"
    " error = ?, lesson = ?, tools = ?, entities = ?, metadata = ?"
    " WHERE seq = ? AND fingerprint = ? AND situation = '' AND action = ''"
)
_UPSERT = (
    f"INSERT INTO archive_bundles ({BUNDLE_COLUMNS}) VALUES (?,?,?,?,?,?,?,?)"
    " ON CONFLICT (hash) DO UPDATE SET scope_key = excluded.scope_key,"
    " episodes = excluded.episodes, bytes = excluded.bytes, first_seq = excluded.first_seq,"
    " last_seq = excluded.last_seq, created_at = excluded.created_at,"
    " restored_at = excluded.restored_at"
)


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


def archive_candidates(db: Database, scope: Scope, before: datetime, limit: int) -> list[Episode]:
    rows = db.read(_CANDIDATES, (scope.key, before, limit))
    return [db.decode.episode(r) for r in rows]


def archive_commit(db: Database, bundle: BundleInfo, episodes: Sequence[Episode]) -> None:
    """Index ``bundle`` and turn ``episodes`` (the originals) into stubs, or raise
    :class:`~reverie.errors.Conflict` when any of them changed since it was read."""
    with db.write() as c:
        c.execute(_UPSERT, bundle_row(db.dialect, bundle))
        c.executemany(
            "INSERT INTO archived_episodes (tenant, episode_id, bundle, seq) VALUES (?,?,?,?)",
            [(e.scope.tenant, e.id, bundle.hash, e.seq) for e in episodes],
        )
        stubbed = c.execute(
            _STUB,
            (
                [e.seq for e in episodes],
                [e.fingerprint() for e in episodes],
                [e.consolidated_in for e in episodes],
            ),
        ).rowcount
        if stubbed != len(episodes):
            raise Conflict(
                f"{len(episodes) - stubbed} episode(s) changed while being archived;"
                " nothing was archived — run it again"
            )
        c.execute(
            "DELETE FROM vector_units WHERE kind = 'episode' AND scope_key = ? AND ref = ANY(?)",
            (bundle.scope.key, [e.id for e in episodes]),
        )


def _unstub_row(e: Episode) -> tuple[Any, ...]:
    return (
        e.session_id,
        e.situation,
        e.action,
        e.outcome_details,
        e.error,
        e.lesson,
        json.dumps(e.tools),
        json.dumps(e.entities),
        json.dumps(e.metadata, sort_keys=True) if e.metadata else "{}",
        e.seq,
        e.fingerprint(),
    )


def archive_restore(
    db: Database, bundle: BundleInfo, episodes: Sequence[Episode], now: datetime
) -> int:
    """Put the bundle's ``episodes`` back into the hot store; the number restored."""
    with db.write() as c:
        restored = [e for e in episodes if c.execute(_UNSTUB, _unstub_row(e)).rowcount == 1]
        _relink_vectors(c, bundle.scope, restored)
        c.execute("DELETE FROM archived_episodes WHERE bundle = ?", (bundle.hash,))
        c.execute("UPDATE archive_bundles SET restored_at = ? WHERE hash = ?", (now, bundle.hash))
    return len(restored)


def _relink_vectors(c: Any, scope: Scope, episodes: Sequence[Episode]) -> None:
    """Give restored episodes back their vector units from the embedding cache (keyed by model
    and content hash): vector recall finds them again with no model call."""
    if not episodes:
        return
    models = [r[0] for r in c.execute(
        "SELECT DISTINCT model FROM vector_units WHERE scope_key = ?", (scope.key,)
    ).fetchall()]  # fmt: skip
    for model in models:
        c.executemany(
            "INSERT INTO vector_units (scope_key, model, kind, ref, seq, hash)"
            " SELECT ?, model, 'episode', ?, ?, hash FROM embeddings WHERE model = ? AND hash = ?"
            " ON CONFLICT DO NOTHING",
            [(scope.key, e.id, e.seq, model, content_hash(embedded_text(e))) for e in episodes],
        )


def archive_bundles(db: Database, scope: Scope | None = None) -> list[BundleInfo]:
    """The bundles of ``scope`` or of every scope, oldest first (times read as ``datetime``)."""
    sql = f"SELECT {BUNDLE_COLUMNS} FROM archive_bundles"
    where, params = ("", ()) if scope is None else (" WHERE scope_key = ?", (scope.key,))
    rows = db.read(sql + where + " ORDER BY created_at, hash", params)
    return [BundleInfo(r[0], db.decode.scope(r[1]), *r[2:8]) for r in rows]


def archive_locations(db: Database, episode_ids: Iterable[str], *, tenant: str) -> dict[str, str]:
    """``{episode id: bundle hash}`` for those of ``tenant``'s ids that are archived."""
    rows = db.read(
        "SELECT episode_id, bundle FROM archived_episodes WHERE tenant = ? AND episode_id = ANY(?)",
        (tenant, list(dict.fromkeys(episode_ids))),
    )
    return {r[0]: r[1] for r in rows}


def archive_bundles_of_cycle(db: Database, cycle_id: str) -> list[str]:
    """The bundles holding episodes that ``cycle_id`` consolidated."""
    rows = db.read(
        "SELECT DISTINCT a.bundle FROM archived_episodes a JOIN episodes e"
        " ON e.tenant = a.tenant AND e.id = a.episode_id WHERE e.consolidated_in = ?"
        " ORDER BY a.bundle",
        (cycle_id,),
    )
    return [r[0] for r in rows]
