"""Leases: at most one worker dreams a scope at a time, and a crashed worker's scopes come back.

A lease is one row per scope: its owner, a fencing ``token``, and ``expires_at``. Taking one is a
compare-and-set that succeeds when the row is absent, expired, or already the caller's; every new
holder gets ``token + 1``. A holder extends its lease with heartbeats well inside the TTL; a
worker killed with SIGKILL simply stops heartbeating, and after ``expires_at`` any other worker
takes the scope over. Releasing sets ``expires_at`` to :data:`RELEASED` (the row stays, so tokens
keep growing).

Leases order work; they are not what makes a cycle exactly-once — the commit's compare-and-set
on the checkpoint and the episode marks is. They also fence: a store opened with
``lease_owner`` (a worker's) refuses to commit to a scope whose live lease another owner holds,
so a worker that stalled past its lease cannot land a cycle over its successor's.

Time is the caller's ``now`` (worker machines should keep their clocks in sync, e.g. NTP; make
the TTL much longer than any clock skew). SQLite takes the write lock up front (``BEGIN
IMMEDIATE``) and takes a lease by read-then-write; PostgreSQL claims with ``FOR NO KEY UPDATE SKIP
LOCKED`` and takes a lease in one upsert (:mod:`reverie.store.postgres`). Heartbeats, releases,
the listing and the commit fence are the same SQL on both (:mod:`reverie.store.sql.leases`).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from reverie.errors import Conflict, LeaseLost
from reverie.store.base import Changeset, Lease
from reverie.store.sql.database import Database
from reverie.store.sql.dialect import Dialect, lease_time

__all__ = [
    "LEASE_COLUMNS",
    "RELEASED",
    "check_lease",
    "heartbeat_lease",
    "lease_time",
    "release_lease",
]

RELEASED = datetime(1, 1, 1, tzinfo=UTC)
"""``expires_at`` of a released lease: before any ``now``."""

LEASE_COLUMNS = "scope_key, owner, token, acquired_at, expires_at"


def check_lease(c: Any, d: Dialect, changes: Changeset, lease_owner: str | None) -> None:
    """Refuse a commit to a scope whose live lease another owner holds (a fence: a worker
    that stalled past its lease cannot land a cycle over its successor's)."""
    row = c.execute(
        "SELECT owner, expires_at FROM leases WHERE scope_key = ?" + d.for_share,
        (changes.scope.key,),
    ).fetchone()
    if row is None or row[0] == lease_owner:
        return
    until = d.lease_at(row[1])
    if until > changes.landed_at:
        raise Conflict(
            f"scope {changes.scope.key} is leased by {row[0]} until {_shown(d, row[1])};"
            " a worker is dreaming it — try again after the lease ends"
        )


def _shown(d: Dialect, stored: Any) -> str:
    return stored if isinstance(stored, str) else d.lease_at(stored).isoformat()


def heartbeat_lease(db: Database, lease: Lease, ttl: float, now: datetime) -> Lease:
    d = db.dialect
    with db.write() as c:
        rows = c.execute(
            "UPDATE leases SET heartbeat_at = ?, expires_at = ?"
            f" WHERE scope_key = ? AND owner = ? AND token = ? RETURNING {LEASE_COLUMNS}",
            (
                d.lease_ts(now),
                d.lease_ts(now + timedelta(seconds=ttl)),
                lease.scope.key,
                lease.owner,
                lease.token,
            ),
        ).fetchall()  # RETURNING: read to the end, so the statement is done before COMMIT
    if not rows:
        raise LeaseLost(f"the lease on {lease.scope.key} was taken over; stop working on it")
    return db.decode.lease(rows[0])


def release_lease(db: Database, lease: Lease) -> bool:
    with db.write() as c:
        cur = c.execute(
            "UPDATE leases SET expires_at = ? WHERE scope_key = ? AND owner = ? AND token = ?",
            (db.dialect.lease_ts(RELEASED), lease.scope.key, lease.owner, lease.token),
        )
        return bool(cur.rowcount == 1)
