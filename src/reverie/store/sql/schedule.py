"""The scheduler's memory in the store (migration 0007): one row per scope, on both backends.

Every scheduler on the database — ``reverie serve``'s, ``reverie daemon``'s, an agent's
in-process one, on any number of machines — reads and writes these rows, so they agree on what is
due: a slot's start is written when a run is claimed, with a compare-and-set on ``version``,
while the claimer holds the scope's lease (:mod:`reverie.store.sql.leases`). Two schedulers that
read the same record both try the claim; the row decides, one wins, the other is told "ran
elsewhere". State lives in the database, not in the process, so a restart neither loses a due
run (the slot is recomputed from ``last_run``) nor repeats one.

A run whose owner's lease ended (released, expired, or taken over) while the row still names it
crashed: the record says ``crashed`` and :meth:`ScheduleRecord.state` counts it as one more
failure, so the backoff retries it soon instead of waiting for the next regular slot.

Times go in as the dialect writes them (``ts``; ``lease_ts`` where they meet the leases'
fixed-width text on SQLite).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from reverie.models import Scope
from reverie.store.records import ScheduleRecord
from reverie.store.sql.database import Database

__all__ = ["schedule_claim", "schedule_finish", "schedule_record", "schedule_records"]


def _when(db: Database, value: Any) -> datetime | None:
    when = db.dialect.when(value)
    return when if when is None or when.tzinfo else when.replace(tzinfo=UTC)


_SELECT = (
    "SELECT s.scope_key, s.first_seen, s.last_run, s.last_success, s.failures, s.running_owner,"
    " s.running_since, s.last_status, s.last_cycle_id, s.last_message, s.version,"
    " coalesce(l.owner = s.running_owner AND l.expires_at > ?, false),"
    " (SELECT count(*) FROM episodes e WHERE e.scope_key = s.scope_key AND e.seq >"
    " coalesce((SELECT seq FROM checkpoints c WHERE c.scope_key = s.scope_key), 0)"
    " AND e.consolidated_in IS NULL)"
    " FROM schedule_state s LEFT JOIN leases l ON l.scope_key = s.scope_key"
)


def _record(db: Database, scope: Scope, r: Sequence[Any], now: datetime) -> ScheduleRecord:
    owner = r[5]
    return ScheduleRecord(
        scope=scope,
        first_seen=_when(db, r[1]) or now,
        last_run=_when(db, r[2]),
        last_success=_when(db, r[3]),
        failures=r[4],
        running_owner=owner,
        running_since=_when(db, r[6]),
        last_status=r[7],
        last_cycle_id=r[8],
        last_message=r[9],
        version=r[10],
        pending=r[12],
        crashed=owner is not None and not r[11],
    )


def schedule_record(db: Database, scope: Scope, now: datetime) -> ScheduleRecord:
    """``scope``'s record, the scope registered and the record created (first seen ``now``)
    when missing."""
    with db.write() as c:
        db.ensure_scopes(c, [scope], now)
        c.execute(
            "INSERT INTO schedule_state (scope_key, first_seen) VALUES (?, ?)"
            " ON CONFLICT (scope_key) DO NOTHING",
            (scope.key, db.dialect.ts(now)),
        )
        row = c.execute(_SELECT + " WHERE s.scope_key = ?", (db.dialect.lease_ts(now), scope.key))
        row = row.fetchone()
    return _record(db, scope, row, now)


def schedule_records(db: Database, now: datetime) -> list[ScheduleRecord]:
    """Every scope's record (created when missing), by scope key."""
    with db.write() as c:  # WHERE true: SQLite would read a bare SELECT's ON as a join's
        c.execute(
            "INSERT INTO schedule_state (scope_key, first_seen) SELECT scope_key, ? FROM scopes"
            " WHERE true ON CONFLICT (scope_key) DO NOTHING",
            (db.dialect.ts(now),),
        )
        rows = c.execute(_SELECT + " ORDER BY s.scope_key", (db.dialect.lease_ts(now),)).fetchall()
    return [_record(db, db.decode.scope(r[0]), r, now) for r in rows]


def schedule_claim(
    db: Database, record: ScheduleRecord, owner: str, now: datetime, *, skip: bool = False
) -> bool:
    """Mark ``owner``'s run starting ``now`` (or a skipped slot); False when ``record`` moved
    on."""
    at = db.dialect.ts(now)
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
    """End ``owner``'s run of ``scope``; False when the run is no longer ``owner``'s."""
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
