"""What the store counts besides the brain: cumulative dream stats, recall use, promotions.

*Stats* (migration 0009): one ``dream_stats`` row per scope, apart from the checkpoint —
cycles completed and failed, model calls, cache hits, tokens, seconds, episodes consolidated.
A committed cycle's :class:`~reverie.store.base.CycleTally` is added inside the cycle's
transaction (``Changeset.tally``); a failed cycle has no transaction to join, so its tally is
added by :meth:`record_tally`, a small write of its own made after the failure. Undo subtracts
nothing: the stats count work done, not what the brain holds.

*Recall use* (migration 0017): one ``recall_stats`` row per scope and hour, to which batches
of :class:`~reverie.store.base.RecallTally` are added (``ON CONFLICT`` adds, so two processes
counting the same hour both count). A tally of a scope that has no row in ``scopes`` (a
recall of a brain that does not exist) is dropped, never registering the scope.

*Promotions* (migration 0010): the org copies in ``Changeset.promotions`` are the only
page writes a changeset may make outside its scope, and only into that scope's org brain
(``tenant/_org``); the commit (:mod:`reverie.store.sql.commit`) refuses anything else, so the
commit that would carry a stray cross-scope write rolls back whole (DESIGN invariant 7).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from reverie.models import Scope
from reverie.store.base import CycleTally, DreamStats, PromotionRecord, RecallTally
from reverie.store.sql.database import Database
from reverie.store.sql.dialect import Dialect
from reverie.store.sql.rows import PROMOTION_COLUMNS

__all__ = [
    "dream_stats",
    "insert_tally",
    "promotions",
    "recall_stats",
    "record_recalls",
    "record_tally",
]

_STATS_COLUMNS = (
    "scope_key, cycles_completed, cycles_failed, model_calls, cache_hits, input_tokens,"
    " output_tokens, duration_s, episodes, last_completed_at, last_failed_at, last_error"
)
_ADDED = (
    "cycles_completed",
    "cycles_failed",
    "model_calls",
    "cache_hits",
    "input_tokens",
    "output_tokens",
    "duration_s",
    "episodes",
)
_STATS_UPSERT = (
    " ON CONFLICT (scope_key) DO UPDATE SET "
    + ", ".join(f"{c} = dream_stats.{c} + excluded.{c}" for c in _ADDED)
    + ", last_completed_at = coalesce(excluded.last_completed_at, dream_stats.last_completed_at)"
    ", last_failed_at = coalesce(excluded.last_failed_at, dream_stats.last_failed_at)"
    ", last_error = CASE WHEN excluded.last_failed_at IS NULL THEN dream_stats.last_error"
    " ELSE excluded.last_error END"
)


def _tally_row(d: Dialect, t: CycleTally) -> tuple[Any, ...]:
    return (
        t.scope.key,
        0 if t.failed else 1,
        1 if t.failed else 0,
        t.model_calls,
        t.cache_hits,
        t.input_tokens,
        t.output_tokens,
        round(t.duration_s, 6),
        t.episodes,
        None if t.failed else d.ts(t.at),
        d.ts(t.at) if t.failed else None,
        (t.error or "unknown error")[:500] if t.failed else None,
    )


def insert_tally(c: Any, d: Dialect, tally: CycleTally) -> None:
    """Add ``tally`` to its scope's row, inside the caller's transaction."""
    c.execute(
        f"INSERT INTO dream_stats ({_STATS_COLUMNS}) VALUES ({','.join('?' * 12)})" + _STATS_UPSERT,
        _tally_row(d, tally),
    )


def record_tally(db: Database, tally: CycleTally) -> None:
    with db.write() as c:
        db.ensure_scopes(c, [tally.scope], tally.at)
        insert_tally(c, db.dialect, tally)


def dream_stats(db: Database, scope: Scope | None = None) -> list[DreamStats]:
    where, params = (" WHERE scope_key = ?", [scope.key]) if scope else ("", [])
    rows = db.read(f"SELECT {_STATS_COLUMNS} FROM dream_stats{where} ORDER BY scope_key", params)
    when = db.dialect.when
    return [
        DreamStats(
            scope=db.decode.scope(r[0]),
            **{name: int(v) for name, v in zip(_ADDED[:6], r[1:7], strict=True)},
            duration_s=round(float(r[7]), 6),
            episodes=int(r[8]),
            last_completed_at=when(r[9]),
            last_failed_at=when(r[10]),
            last_error=r[11],
        )
        for r in rows
    ]


_RECALL_ADDED = ("recalls", "hits", "units", "tokens")
_RECALL_UPSERT = (
    "INSERT INTO recall_stats (scope_key, hour, recalls, hits, units, tokens)"
    " SELECT ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM scopes WHERE scope_key = ?)"
    " ON CONFLICT (scope_key, hour) DO UPDATE SET "
    + ", ".join(f"{c} = recall_stats.{c} + excluded.{c}" for c in _RECALL_ADDED)
)


def record_recalls(db: Database, tallies: Sequence[RecallTally]) -> None:
    """Add ``tallies`` to their scopes' hours, in one small transaction."""
    if not tallies:
        return
    ts = db.dialect.ts
    with db.write() as c:
        c.executemany(
            _RECALL_UPSERT,
            [
                (t.scope.key, ts(t.hour), t.recalls, t.hits, t.units, t.tokens, t.scope.key)
                for t in sorted(tallies, key=lambda t: (t.scope.key, t.hour))
            ],
        )


def recall_stats(db: Database, scope: Scope, since: datetime | None = None) -> list[RecallTally]:
    """The recall use of ``scope`` per hour (from ``since``), oldest first."""
    where, params = "scope_key = ?", [scope.key]
    if since is not None:
        where, params = where + " AND hour >= ?", [*params, db.dialect.ts(since)]
    rows = db.read(
        f"SELECT hour, recalls, hits, units, tokens FROM recall_stats WHERE {where} ORDER BY hour",
        params,
    )
    at = db.dialect.at
    return [RecallTally(scope, at(r[0]), *(int(v) for v in r[1:])) for r in rows]


def promotions(db: Database, scope: Scope) -> list[PromotionRecord]:
    if scope.is_org:  # every scope of the tenant: "tenant/…"
        prefix = scope.tenant + "/"
        where, param = f"substr(source_scope, 1, {len(prefix)}) = ?", prefix
    else:
        where, param = "source_scope = ?", scope.key
    rows = db.read(
        f"SELECT {PROMOTION_COLUMNS} FROM promotions WHERE {where} ORDER BY org_page_id",
        [param],
    )
    at = db.dialect.at
    return [
        PromotionRecord(r[0], r[1], db.decode.scope(r[2]), int(r[3]), at(r[4]), at(r[5]), r[6])
        for r in rows
    ]
