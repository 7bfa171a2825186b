"""The cold tier's side of the store (migration 0007): the bundle index and the stubs, on both
backends. Where a bundle's bytes live is the backend's (:mod:`reverie.dream.archive`).

Archiving never deletes an episode row. The row stays as a *stub* — id, seq, scope, timestamps,
outcome, importance, category, fingerprint and consolidation mark — with its text fields emptied,
its text-index entry gone and its vector units dropped. That keeps every citation's foreign key,
the idempotence of ``append`` (re-sending an archived episode is still a duplicate, never a new
episode to consolidate twice) and the checkpoint arithmetic intact. A stub is recognisable: no
stored episode otherwise has both an empty situation and an empty action.

Both directions are one transaction each, guarded by compare-and-set on what was read (fingerprint
and mark), so a concurrent change aborts the whole batch. The text index is the backend's
(:meth:`~reverie.store.sql.database.Backend.unindex_episodes`,
:meth:`~reverie.store.sql.database.Backend.index_episodes`): SQLite's contentless FTS5 table must be
told, PostgreSQL's generated ``tsvector`` follows the row by itself.
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
from reverie.store.sql.database import Database
from reverie.store.sql.rows import BUNDLE_COLUMNS, EPISODE_COLUMNS, bundle_row, prefixed

__all__ = [
    "archive_bundles",
    "archive_bundles_of_cycle",
    "archive_candidates",
    "archive_commit",
    "archive_locations",
    "archive_restore",
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
    "UPDATE episodes SET session_id = NULL, situation = '', action = '', outcome_details = NULL,"
    " error = NULL, lesson = NULL, tools = '[]', entities = '[]', metadata = '{}'"
    " WHERE seq = ? AND fingerprint = ? AND consolidated_in = ?"
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


def archive_candidates(db: Database, scope: Scope, before: datetime, limit: int) -> list[Episode]:
    rows = db.read(_CANDIDATES, (scope.key, db.dialect.ts(before), limit))
    return [db.decode.episode(r) for r in rows]


def archive_commit(db: Database, bundle: BundleInfo, episodes: Sequence[Episode]) -> None:
    """Index ``bundle`` and turn ``episodes`` (the originals) into stubs, or raise
    :class:`~reverie.errors.Conflict` when any of them changed since it was read."""
    with db.write() as c:
        db.backend.unindex_episodes(c, [e.seq or 0 for e in episodes])
        c.execute(_UPSERT, bundle_row(db.dialect, bundle))
        c.executemany(
            "INSERT INTO archived_episodes (tenant, episode_id, bundle, seq) VALUES (?,?,?,?)",
            [(e.scope.tenant, e.id, bundle.hash, e.seq) for e in episodes],
        )
        cur = c.executemany(_STUB, [(e.seq, e.fingerprint(), e.consolidated_in) for e in episodes])
        if cur.rowcount != len(episodes):
            raise Conflict(
                f"{len(episodes) - cur.rowcount} episode(s) changed while being archived;"
                " nothing was archived — run it again"
            )
        for where, params in db.dialect.members("ref", [e.id for e in episodes]):
            c.execute(
                f"DELETE FROM vector_units WHERE kind = 'episode' AND scope_key = ? AND {where}",
                [bundle.scope.key, *params],
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
        db.backend.index_episodes(c, restored)
        _relink_vectors(c, bundle.scope, restored)
        c.execute("DELETE FROM archived_episodes WHERE bundle = ?", (bundle.hash,))
        c.execute(
            "UPDATE archive_bundles SET restored_at = ? WHERE hash = ?",
            (db.dialect.ts(now), bundle.hash),
        )
    return len(restored)


def _relink_vectors(c: Any, scope: Scope, episodes: Sequence[Episode]) -> None:
    """Give restored episodes back their vector units: their vectors stayed in the embedding
    cache (keyed by model and content hash), so vector recall finds them again with no model
    call. Units get new ``n``: an in-memory index picks them up on its next refresh."""
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
    """The bundles of ``scope`` or of every scope, oldest first."""
    sql = f"SELECT {BUNDLE_COLUMNS} FROM archive_bundles"
    where, params = ("", ()) if scope is None else (" WHERE scope_key = ?", (scope.key,))
    d = db.dialect
    return [
        BundleInfo(r[0], db.decode.scope(r[1]), r[2], r[3], r[4], r[5], d.at(r[6]), d.when(r[7]))
        for r in db.read(sql + where + " ORDER BY created_at, hash", params)
    ]


def archive_locations(db: Database, episode_ids: Iterable[str], *, tenant: str) -> dict[str, str]:
    """``{episode id: bundle hash}`` for those of ``tenant``'s ids that are archived."""
    found: dict[str, str] = {}
    for where, params in db.dialect.members("episode_id", list(dict.fromkeys(episode_ids))):
        rows = db.read(
            f"SELECT episode_id, bundle FROM archived_episodes WHERE tenant = ? AND {where}",
            [tenant, *params],
        )
        found.update((r[0], r[1]) for r in rows)
    return found


def archive_bundles_of_cycle(db: Database, cycle_id: str) -> list[str]:
    """The bundles holding episodes that ``cycle_id`` consolidated."""
    rows = db.read(
        "SELECT DISTINCT a.bundle FROM archived_episodes a JOIN episodes e"
        " ON e.tenant = a.tenant AND e.id = a.episode_id WHERE e.consolidated_in = ?"
        " ORDER BY a.bundle",
        (cycle_id,),
    )
    return [r[0] for r in rows]
