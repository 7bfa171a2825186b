"""The scheduler's memory in the store (migration 0007): one row per scope.

A separate protocol from :class:`reverie.store.base.Store` because scheduling is optional: a store
without it still dreams on demand. State lives in the database, not in the process, so a restart
neither loses a due run (the slot is recomputed from ``last_run``) nor repeats one (``last_run``
is written when a run is claimed, under the scope's lease).

A run in progress is marked with its owner. When the owner's lease on the scope is no longer live
(released, expired, or taken over) while the mark is still there, the run crashed: the record says
``crashed`` and :meth:`ScheduleRecord.state` counts it as one more failure, so the schedule's
backoff retries it soon instead of waiting for the next regular slot.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from reverie.models import Scope
from reverie.store.records import ScheduleRecord
from reverie.store.sql.base import Database
from reverie.store.sql.dialect import lease_time

__all__ = ["schedule_claim", "schedule_finish", "schedule_record", "schedule_records"]


def _dt(text: str | None) -> datetime | None:
    if not text:
        return None
    value = datetime.fromisoformat(text)
    return value if value.tzinfo else value.replace(tzinfo=UTC)


_SELECT = (
    "SELECT s.scope_key, s.first_seen, s.last_run, s.last_success, s.failures, s.running_owner,"
    " s.running_since, s.last_status, s.last_cycle_id, s.last_message, s.version,"
    " coalesce(l.owner = s.running_owner AND l.expires_at > ?, 0),"
    " (SELECT count(*) FROM episodes e WHERE e.scope_key = s.scope_key AND e.seq >"
    " coalesce((SELECT seq FROM checkpoints c WHERE c.scope_key = s.scope_key), 0)"
    " AND e.consolidated_in IS NULL)"
    " FROM schedule_state s LEFT JOIN leases l ON l.scope_key = s.scope_key"
)


def _record(scope: Scope, r: Sequence[Any], now: datetime) -> ScheduleRecord:
    owner = r[5]
    return ScheduleRecord(
        scope=scope,
        first_seen=_dt(r[1]) or now,
        last_run=_dt(r[2]),
        last_success=_dt(r[3]),
        failures=r[4],
        running_owner=owner,
        running_since=_dt(r[6]),
        last_status=r[7],
        last_cycle_id=r[8],
        last_message=r[9],
        version=r[10],
        pending=r[12],
        crashed=owner is not None and not r[11],
    )


def schedule_record(db: Database, scope: Scope, now: datetime) -> ScheduleRecord:
    with db.write() as c:
        db.ensure_scopes(c, [scope], now)
        c.execute(
            "INSERT OR IGNORE INTO schedule_state (scope_key, first_seen) VALUES (?, ?)",
            (scope.key, now.isoformat()),
        )
    rows = db.read(_SELECT + " WHERE s.scope_key = ?", (lease_time(now), scope.key))
    return _record(scope, rows[0], now)


def schedule_records(db: Database, now: datetime) -> list[ScheduleRecord]:
    with db.write() as c:
        c.execute(
            "INSERT OR IGNORE INTO schedule_state (scope_key, first_seen)"
            " SELECT scope_key, ? FROM scopes",
            (now.isoformat(),),
        )
    rows = db.read(_SELECT + " ORDER BY s.scope_key", (lease_time(now),))
    return [_record(db.decode.scope(r[0]), r, now) for r in rows]


def schedule_claim(
    db: Database, record: ScheduleRecord, owner: str, now: datetime, *, skip: bool = False
) -> bool:
    at = now.isoformat()
    with db.write() as c:
        cur = c.execute(
            "UPDATE schedule_state SET last_run = ?, failures = ?, running_owner = ?,"
            " running_since = ?, last_status = ?, version = version + 1"
            " WHERE scope_key = ? AND version = ?",
            (
                at,
                record.failures + record.crashed,
                None if skip else owner,
                None if skip else at,
                "skipped" if skip else "running",
                record.scope.key,
                record.version,
            ),
        )
        return bool(cur.rowcount == 1)


def schedule_finish(
    db: Database,
    scope: Scope,
    owner: str,
    *,
    ok: bool,
    status: str,
    cycle_id: str | None,
    message: str,
) -> bool:
    with db.write() as c:
        cur = c.execute(
            "UPDATE schedule_state SET running_owner = NULL, running_since = NULL,"
            " last_status = ?, last_cycle_id = ?, last_message = ?,"
            " last_success = CASE WHEN ? THEN last_run ELSE last_success END,"
            " failures = CASE WHEN ? THEN 0 ELSE failures + 1 END, version = version + 1"
            " WHERE scope_key = ? AND running_owner = ?",
            (status, cycle_id, message[:2000], ok, ok, scope.key, owner),
        )
        return bool(cur.rowcount == 1)
