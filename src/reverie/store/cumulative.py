"""What a dream cycle records besides its pages: cumulative stats and org promotions.

*Stats* (issue 5, migration 0009): one ``dream_stats`` row per scope, apart from the checkpoint —
cycles completed and failed, model calls, cache hits, tokens, seconds, episodes consolidated.
A committed cycle's :class:`~reverie.store.base.CycleTally` is added inside the cycle's
transaction (``Changeset.tally``); a failed cycle has no transaction to join, so its tally is
added by :meth:`record_tally`, a small write of its own made after the failure. Undo subtracts
nothing: the stats count work done, not what the brain holds.

*Promotions* (issue 6, migration 0010): the org copies in ``Changeset.promotions`` are the only
page writes a changeset may make outside its scope, and only into that scope's org brain
(``tenant/_org``); :meth:`_record_dream` refuses anything else, so the commit that would carry a
stray cross-scope write rolls back whole (DESIGN invariant 7).

One implementation serves both backends: SQLite's write handle is a connection, PostgreSQL's a
cursor, and both ``execute``; only the placeholder and the time type differ
(:mod:`reverie.store.dialect`).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, ClassVar, Protocol

from reverie.errors import StoreError
from reverie.models import Scope
from reverie.store.base import (
    Changeset,
    CycleTally,
    DreamStats,
    PageWrite,
    Promotion,
    PromotionRecord,
)
from reverie.store.dialect import PostgresDialect, SQLiteDialect

__all__ = ["PostgresCumulativeMixin", "SQLiteCumulativeMixin"]

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
_PROMOTION_COLUMNS = (
    "org_page_id, source_page_id, source_scope, source_revision, promoted_at, updated_at, cycle_id"
)
_PROMOTION_UPSERT = (
    " ON CONFLICT (org_page_id) DO UPDATE SET source_revision = excluded.source_revision,"
    " updated_at = excluded.updated_at, cycle_id = excluded.cycle_id"
)


class _Host(Protocol):
    _P: ClassVar[str]

    def _write(self) -> AbstractContextManager[Any]: ...

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[Any]: ...

    def _scope(self, key: str) -> Scope: ...

    def _ensure_scopes(self, c: Any, scopes: Any) -> None: ...

    def _write_page(self, c: Any, w: PageWrite) -> None: ...

    def _ts(self, value: datetime | None) -> Any: ...

    def _when(self, value: Any) -> datetime | None: ...


def _tally_row(host: _Host, t: CycleTally) -> tuple[Any, ...]:
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
        None if t.failed else host._ts(t.at),
        host._ts(t.at) if t.failed else None,
        (t.error or "unknown error")[:500] if t.failed else None,
    )


def _check_promotion(changes: Changeset, p: Promotion) -> None:
    org = changes.scope.org
    if p.write.scope != org or p.source_scope != changes.scope or changes.cycle is None:
        raise StoreError(
            f"refused: a changeset of {changes.scope} may write only into {org} by promotion"
            f" (got a write into {p.write.scope} from {p.source_scope})"
        )


class _CumulativeMixin:
    def _insert_tally(self: _Host, c: Any, tally: CycleTally) -> None:
        marks = ", ".join([self._P] * 12)
        c.execute(
            f"INSERT INTO dream_stats ({_STATS_COLUMNS}) VALUES ({marks})" + _STATS_UPSERT,
            _tally_row(self, tally),
        )

    def _record_dream(self: Any, c: Any, changes: Changeset) -> None:
        """Issue 5/6: the cycle's tally and its org promotions, in the commit's transaction."""
        strays = [w.revision.page_id for w in changes.page_writes if w.scope != changes.scope]
        if strays:
            raise StoreError(
                f"refused: page writes outside {changes.scope}: {strays[:3]}; only an org"
                " promotion may leave a scope"
            )
        if changes.tally is not None:
            self._insert_tally(c, changes.tally)
        if not changes.promotions:
            return
        self._ensure_scopes(c, [changes.scope.org])
        marks = ", ".join([self._P] * 7)
        for p in changes.promotions:
            _check_promotion(changes, p)
            self._write_page(c, p.write)
            when = self._ts(p.write.revision.created_at)
            c.execute(
                f"INSERT INTO promotions ({_PROMOTION_COLUMNS}) VALUES ({marks})"
                + _PROMOTION_UPSERT,
                (
                    p.write.revision.page_id,
                    p.source_page_id,
                    p.source_scope.key,
                    p.source_revision,
                    when,
                    when,
                    changes.cycle.id if changes.cycle else "",
                ),
            )

    def record_tally(self: Any, tally: CycleTally) -> None:
        with self._write() as c:
            self._ensure_scopes(c, [tally.scope])
            self._insert_tally(c, tally)

    def dream_stats(self: Any, scope: Scope | None = None) -> list[DreamStats]:
        where, params = (f" WHERE scope_key = {self._P}", [scope.key]) if scope else ("", [])
        rows = self._read(
            f"SELECT {_STATS_COLUMNS} FROM dream_stats{where} ORDER BY scope_key", params
        )
        return [
            DreamStats(
                scope=self._scope(r[0]),
                **{name: int(v) for name, v in zip(_ADDED[:6], r[1:7], strict=True)},
                duration_s=round(float(r[7]), 6),
                episodes=int(r[8]),
                last_completed_at=self._when(r[9]),
                last_failed_at=self._when(r[10]),
                last_error=r[11],
            )
            for r in rows
        ]

    def promotions(self: Any, scope: Scope) -> list[PromotionRecord]:
        if scope.is_org:  # every scope of the tenant: "tenant/…"
            prefix = scope.tenant + "/"
            where, param = f"substr(source_scope, 1, {len(prefix)}) = {self._P}", prefix
        else:
            where, param = f"source_scope = {self._P}", scope.key
        rows = self._read(
            f"SELECT {_PROMOTION_COLUMNS} FROM promotions WHERE {where} ORDER BY org_page_id",
            [param],
        )
        return [
            PromotionRecord(
                r[0], r[1], self._scope(r[2]), int(r[3]), self._when(r[4]), self._when(r[5]), r[6]
            )
            for r in rows
        ]


class SQLiteCumulativeMixin(SQLiteDialect, _CumulativeMixin):
    """:class:`reverie.store.sqlite.SQLiteStore`'s stats and promotions."""


class PostgresCumulativeMixin(PostgresDialect, _CumulativeMixin):
    """:class:`reverie.store.postgres.PostgresStore`'s stats and promotions."""
