"""The cold tier on PostgreSQL: the bundle index, the hot-store stubs, and the bundles' bytes.

The rules are SQLite's (:mod:`reverie.store.archive`): archiving never deletes an episode row, it
turns it into a *stub* (text fields emptied, vector units dropped) so citations, idempotent
appends and the checkpoint keep working; each direction is one transaction guarded by
compare-and-set on what was read (fingerprint and mark), so a concurrent change aborts the whole
batch. The generated ``tsvector`` follows the emptied text by itself, where SQLite's contentless
FTS5 table must be told.

What differs is where a bundle's bytes live. A PostgreSQL server has no folder its clients share,
so they live in ``archive_blobs`` (migration 0016), named by the sha256 of the bytes like SQLite's
files: :func:`put_bundle` stores them before the index names them, :func:`bundle` reads them back
for verification, and deleting an index row deletes its bytes in the same transaction (a
trigger), which is what makes an erasure's dropped bundle unreadable the moment it commits.

Functions here take the cursor of a transaction the store opened (``?`` placeholders) and return
rows or plain values; :class:`~reverie.store.postgres.PostgresStore` wires them in with thin
methods and decodes the rows.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from reverie.errors import Conflict
from reverie.hashing import content_hash
from reverie.models import Episode, Scope
from reverie.store.archive import BUNDLE_COLUMNS
from reverie.store.records import BundleInfo
from reverie.store.sql.rows import EPISODE_COLUMNS, prefixed
from reverie.store.vectors import embedded_text

__all__ = [
    "bundle",
    "bundle_info",
    "bundle_rows",
    "candidate_rows",
    "commit",
    "cycle_bundles",
    "locations",
    "put_bundle",
    "restore",
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
    """Store a bundle's bytes under their hash (the same hash always holds the same bytes)."""
    c.execute(
        "INSERT INTO archive_blobs (hash, data) VALUES (?, ?) ON CONFLICT (hash) DO NOTHING",
        (bundle_hash, data),
    )


def bundle(c: Any, bundle_hash: str) -> bytes | None:
    """A bundle's bytes as stored, or None when none are stored under ``bundle_hash``."""
    row = c.execute("SELECT data FROM archive_blobs WHERE hash = ?", (bundle_hash,)).fetchone()
    return bytes(row[0]) if row else None


def candidate_rows(c: Any, scope: Scope, before: datetime, limit: int) -> list[Any]:
    """Rows of :data:`EPISODE_COLUMNS`: what :meth:`ArchiveStore.archive_candidates` returns."""
    rows: list[Any] = c.execute(_CANDIDATES, (scope.key, before, limit)).fetchall()
    return rows


def _bundle_values(b: BundleInfo) -> tuple[Any, ...]:
    """``b`` as a row of :data:`BUNDLE_COLUMNS` (psycopg takes the times as they are)."""
    return (b.hash, b.scope.key, b.episodes, b.bytes, b.first_seq, b.last_seq, b.created_at,
            b.restored_at)  # fmt: skip


def commit(c: Any, info: BundleInfo, episodes: Sequence[Episode]) -> None:
    """Index ``info`` and turn ``episodes`` (the originals) into stubs, or raise
    :class:`~reverie.errors.Conflict` when any of them changed since it was read."""
    c.execute(_UPSERT, _bundle_values(info))
    c.executemany(
        "INSERT INTO archived_episodes (tenant, episode_id, bundle, seq) VALUES (?,?,?,?)",
        [(e.scope.tenant, e.id, info.hash, e.seq) for e in episodes],
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
        (info.scope.key, [e.id for e in episodes]),
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


def restore(c: Any, info: BundleInfo, episodes: Sequence[Episode], now: datetime) -> int:
    """Put the bundle's ``episodes`` back into the hot store; the number restored."""
    restored = [e for e in episodes if c.execute(_UNSTUB, _unstub_row(e)).rowcount == 1]
    _relink_vectors(c, info.scope, restored)
    c.execute("DELETE FROM archived_episodes WHERE bundle = ?", (info.hash,))
    c.execute("UPDATE archive_bundles SET restored_at = ? WHERE hash = ?", (now, info.hash))
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


def bundle_rows(c: Any, scope: Scope | None) -> list[Any]:
    """Rows of :data:`BUNDLE_COLUMNS`, of ``scope`` or of every scope, oldest first."""
    sql = f"SELECT {BUNDLE_COLUMNS} FROM archive_bundles"
    where, params = ("", ()) if scope is None else (" WHERE scope_key = ?", (scope.key,))
    rows: list[Any] = c.execute(sql + where + " ORDER BY created_at, hash", params).fetchall()
    return rows


def bundle_info(scope: Scope, r: Sequence[Any]) -> BundleInfo:
    """A row of :data:`BUNDLE_COLUMNS` (times already ``datetime``) as a :class:`BundleInfo`."""
    return BundleInfo(r[0], scope, r[2], r[3], r[4], r[5], r[6], r[7])


def locations(c: Any, episode_ids: Sequence[str], tenant: str) -> dict[str, str]:
    """``{episode id: bundle hash}`` for those of ``tenant``'s ids that are archived."""
    rows = c.execute(
        "SELECT episode_id, bundle FROM archived_episodes WHERE tenant = ? AND episode_id = ANY(?)",
        (tenant, list(episode_ids)),
    ).fetchall()
    return {r[0]: r[1] for r in rows}


def cycle_bundles(c: Any, cycle_id: str) -> list[str]:
    """The bundles holding episodes that ``cycle_id`` consolidated."""
    rows = c.execute(
        "SELECT DISTINCT a.bundle FROM archived_episodes a JOIN episodes e"
        " ON e.tenant = a.tenant AND e.id = a.episode_id WHERE e.consolidated_in = ?"
        " ORDER BY a.bundle",
        (cycle_id,),
    ).fetchall()
    return [r[0] for r in rows]
