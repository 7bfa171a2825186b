"""The scheduler's memory on PostgreSQL: the same rows and rules as :mod:`reverie.store.schedule`.

Every scheduler on the database — ``reverie serve``'s, ``reverie daemon``'s, an agent's
in-process one, on any number of machines — reads and writes these rows, so they agree on what is
due: a slot's start is written when a run is claimed, with a compare-and-set on ``version``,
while the claimer holds the scope's lease (:mod:`reverie.store.leases`). Two schedulers that read
the same record both try the claim; the row decides, one wins, the other is told "ran
elsewhere". A run whose owner's lease ended while the row still names it is reported
``crashed``, counted as one more failure (the backoff retries it soon).

Functions here take the cursor of a transaction the store opened (:class:`~reverie.store.
postgres.Cursor`, ``?`` placeholders) and are wired into
:class:`~reverie.store.postgres.PostgresStore` by thin methods. Times are ``timestamptz``, the
leases' too, so ``now`` is compared as a value, not as SQLite's fixed-width text.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from reverie.models import Scope
from reverie.store.records import ScheduleRecord

__all__ = ["claim", "finish", "record", "records"]

_SELECT = (
    "SELECT s.scope_key, s.first_seen, s.last_run, s.last_success, s.failures, s.running_owner,"
    " s.running_since, s.last_status, s.last_cycle_id, s.last_message, s.version,"
    " coalesce(l.owner = s.running_owner AND l.expires_at > ?, false),"
    " (SELECT count(*) FROM episodes e WHERE e.scope_key = s.scope_key AND e.seq >"
    " coalesce((SELECT seq FROM checkpoints c WHERE c.scope_key = s.scope_key), 0)"
    " AND e.consolidated_in IS NULL)"
    " FROM schedule_state s LEFT JOIN leases l ON l.scope_key = s.scope_key"
)


def _record(r: Sequence[Any], now: datetime) -> ScheduleRecord:
    owner = r[5]
    return ScheduleRecord(
        scope=Scope.parse(r[0]),
        first_seen=r[1] or now,
        last_run=r[2],
        last_success=r[3],
        failures=r[4],
        running_owner=owner,
        running_since=r[6],
        last_status=r[7],
        last_cycle_id=r[8],
        last_message=r[9],
        version=r[10],
        pending=r[12],
        crashed=owner is not None and not r[11],
    )


def record(c: Any, scope: Scope, now: datetime) -> ScheduleRecord:
    """``scope``'s record, created (first seen ``now``) when missing; the scope must be
    registered already."""
    c.execute(
        "INSERT INTO schedule_state (scope_key, first_seen) VALUES (?, ?)"
        " ON CONFLICT (scope_key) DO NOTHING",
        (scope.key, now),
    )
    row = c.execute(_SELECT + " WHERE s.scope_key = ?", (now, scope.key)).fetchone()
    return _record(row, now)


def records(c: Any, now: datetime) -> list[ScheduleRecord]:
    """Every scope's record (created when missing), by scope key."""
    c.execute(
        "INSERT INTO schedule_state (scope_key, first_seen) SELECT scope_key, ? FROM scopes"
        " ON CONFLICT (scope_key) DO NOTHING",
        (now,),
    )
    rows = c.execute(_SELECT + " ORDER BY s.scope_key", (now,)).fetchall()
    return [_record(r, now) for r in rows]


def claim(c: Any, rec: ScheduleRecord, owner: str, now: datetime, *, skip: bool) -> bool:
    """Mark ``owner``'s run starting ``now`` (or a skipped slot); False when ``rec`` moved on."""
    cur = c.execute(
        "UPDATE schedule_state SET last_run = ?, failures = ?, running_owner = ?,"
        " running_since = ?, last_status = ?, version = version + 1"
        " WHERE scope_key = ? AND version = ?",
        (
            now,
            rec.failures + rec.crashed,
            None if skip else owner,
            None if skip else now,
            "skipped" if skip else "running",
            rec.scope.key,
            rec.version,
        ),
    )
    return bool(cur.rowcount == 1)


def finish(
    c: Any, scope: Scope, owner: str, *, ok: bool, status: str, cycle_id: str | None, message: str
) -> bool:
    """End ``owner``'s run of ``scope``; False when the run is no longer ``owner``'s."""
    cur = c.execute(
        "UPDATE schedule_state SET running_owner = NULL, running_since = NULL,"
        " last_status = ?, last_cycle_id = ?, last_message = ?,"
        " last_success = CASE WHEN ? THEN last_run ELSE last_success END,"
        " failures = CASE WHEN ? THEN 0 ELSE failures + 1 END, version = version + 1"
        " WHERE scope_key = ? AND running_owner = ?",
        (status, cycle_id, message[:2000], ok, ok, scope.key, owner),
    )
    return bool(cur.rowcount == 1)
