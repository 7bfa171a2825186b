"""The cold tier's side of the store (migration 0007): the bundle index and the stubs.

Archiving never deletes an episode row. The row stays as a *stub* — id, seq, scope, timestamps,
outcome, importance, category, fingerprint and consolidation mark — with its text fields emptied,
its full-text entry deleted and its vector units dropped. That keeps every citation's foreign key,
the idempotence of ``append`` (re-sending an archived episode is still a duplicate, never a new
episode to consolidate twice) and the checkpoint arithmetic intact. A stub is recognisable: no
stored episode otherwise has both an empty situation and an empty action.

Both directions are one transaction each, guarded by compare-and-set on what was read (fingerprint
and mark), so a concurrent change aborts the whole batch. The contentless FTS5 table forgets a row
only through its ``'delete'`` command with the exact values indexed (``scope_token`` and
``episode_search_text``), which is why the episodes handed in must be the originals.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from reverie.errors import Conflict
from reverie.hashing import content_hash
from reverie.models import Episode, Scope
from reverie.store.records import BundleInfo, embedded_text
from reverie.store.sql.base import Database
from reverie.store.sql.rows import (
    BUNDLE_COLUMNS,
    EPISODE_COLUMNS,
    bundle_row,
    episode_search_text,
    prefixed,
    scope_token,
)

__all__ = [
    "archive_bundles",
    "archive_bundles_of_cycle",
    "archive_candidates",
    "archive_commit",
    "archive_locations",
    "archive_restore",
]

_CHUNK = 500


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


def _bundle(scope: Scope, r: Sequence[Any]) -> BundleInfo:
    return BundleInfo(
        hash=r[0],
        scope=scope,
        episodes=r[2],
        bytes=r[3],
        first_seq=r[4],
        last_seq=r[5],
        created_at=datetime.fromisoformat(r[6]),
        restored_at=datetime.fromisoformat(r[7]) if r[7] else None,
    )


def _fts(c: sqlite3.Connection, episodes: Sequence[Episode], *, delete: bool) -> None:
    rows = [(e.seq, scope_token(e.scope.key), episode_search_text(e)) for e in episodes]
    if delete:
        c.executemany(
            "INSERT INTO episodes_fts(episodes_fts, rowid, scope, body) VALUES ('delete',?,?,?)",
            rows,
        )
    else:
        c.executemany("INSERT INTO episodes_fts(rowid, scope, body) VALUES (?,?,?)", rows)


def archive_candidates(db: Database, scope: Scope, before: datetime, limit: int) -> list[Episode]:
    cols = prefixed("e", EPISODE_COLUMNS)
    rows = db.read(
        f"SELECT {cols} FROM episodes e JOIN cycles c ON c.id = e.consolidated_in"
        " WHERE e.scope_key = ? AND c.undone_at IS NULL AND e.created_at < ?"
        " AND NOT (e.situation = '' AND e.action = '')"
        " AND NOT EXISTS (SELECT 1 FROM archived_episodes a"
        " WHERE a.tenant = e.tenant AND a.episode_id = e.id)"
        " ORDER BY e.seq LIMIT ?",
        (scope.key, before.isoformat(), limit),
    )
    return [db.decode.episode(r) for r in rows]


def archive_commit(db: Database, bundle: BundleInfo, episodes: Sequence[Episode]) -> None:
    with db.write() as c:
        c.execute(
            f"INSERT OR REPLACE INTO archive_bundles ({BUNDLE_COLUMNS}) VALUES (?,?,?,?,?,?,?,?)",
            bundle_row(db.dialect, bundle),
        )
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
        _fts(c, episodes, delete=True)
        for start in range(0, len(episodes), _CHUNK):
            chunk = episodes[start : start + _CHUNK]
            c.executemany(
                "DELETE FROM vector_units WHERE kind = 'episode' AND scope_key = ? AND ref = ?",
                [(e.scope.key, e.id) for e in chunk],
            )


def archive_restore(
    db: Database, bundle: BundleInfo, episodes: Sequence[Episode], now: datetime
) -> int:
    rows = [
        (
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
        for e in episodes
    ]
    with db.write() as c:
        restored = [e for e, row in zip(episodes, rows, strict=True) if _unstub(c, row)]
        _fts(c, restored, delete=False)
        _relink_vectors(c, bundle.scope, restored)
        c.execute("DELETE FROM archived_episodes WHERE bundle = ?", (bundle.hash,))
        c.execute(
            "UPDATE archive_bundles SET restored_at = ? WHERE hash = ?",
            (now.isoformat(), bundle.hash),
        )
    return len(restored)


def archive_bundles(db: Database, scope: Scope | None = None) -> list[BundleInfo]:
    sql = f"SELECT {BUNDLE_COLUMNS} FROM archive_bundles"
    rows = (
        db.read(sql + " WHERE scope_key = ? ORDER BY created_at, hash", (scope.key,))
        if scope
        else db.read(sql + " ORDER BY created_at, hash")
    )
    return [_bundle(db.decode.scope(r[1]), r) for r in rows]


def archive_locations(db: Database, episode_ids: Iterable[str], *, tenant: str) -> dict[str, str]:
    ids = list(dict.fromkeys(episode_ids))
    found: dict[str, str] = {}
    for start in range(0, len(ids), _CHUNK):
        chunk = ids[start : start + _CHUNK]
        rows = db.read(
            "SELECT episode_id, bundle FROM archived_episodes"
            f" WHERE tenant = ? AND episode_id IN ({','.join('?' * len(chunk))})",
            [tenant, *chunk],
        )
        found.update((r[0], r[1]) for r in rows)
    return found


def archive_bundles_of_cycle(db: Database, cycle_id: str) -> list[str]:
    rows = db.read(
        "SELECT DISTINCT a.bundle FROM archived_episodes a JOIN episodes e"
        " ON e.tenant = a.tenant AND e.id = a.episode_id WHERE e.consolidated_in = ?"
        " ORDER BY a.bundle",
        (cycle_id,),
    )
    return [r[0] for r in rows]


def _relink_vectors(c: sqlite3.Connection, scope: Scope, episodes: Sequence[Episode]) -> None:
    """Give restored episodes back their vector units: their vectors stayed in the embedding
    cache (keyed by model and content hash), so vector recall finds them again with no model
    call. Units get new ``n``: an in-memory index picks them up on its next refresh."""
    models = [r[0] for r in c.execute(
        "SELECT DISTINCT model FROM vector_units WHERE scope_key = ?", (scope.key,)
    )]  # fmt: skip
    for model in models:
        c.executemany(
            "INSERT OR IGNORE INTO vector_units (scope_key, model, kind, ref, seq, hash)"
            " SELECT ?, model, 'episode', ?, ?, hash FROM embeddings WHERE model = ? AND hash = ?",
            [(scope.key, e.id, e.seq, model, content_hash(embedded_text(e))) for e in episodes],
        )


def _unstub(c: sqlite3.Connection, row: tuple[Any, ...]) -> bool:
    return c.execute(_UNSTUB, row).rowcount == 1
