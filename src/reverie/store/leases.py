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
IMMEDIATE``); PostgreSQL claims with ``FOR NO KEY UPDATE SKIP LOCKED``
(:mod:`reverie.store.postgres_more`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from reverie.errors import Conflict, LeaseLost
from reverie.models import Scope
from reverie.store.base import Changeset, Lease

__all__ = ["RELEASED", "SQLiteLeasesMixin", "lease_time"]

RELEASED = datetime(1, 1, 1, tzinfo=UTC)
"""``expires_at`` of a released lease: before any ``now``."""


def lease_time(value: datetime) -> str:
    """A fixed-width UTC text form that sorts as the instants compare (SQLite stores text)."""
    utc_value = value.astimezone(UTC)  # %Y is not zero-padded for years < 1000 on every libc
    return f"{utc_value.year:04d}-" + utc_value.strftime("%m-%dT%H:%M:%S.%fZ")


def _parse(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


class _Host(Protocol):
    lease_owner: str | None

    def _write(self) -> AbstractContextManager[sqlite3.Connection]: ...

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[Any]: ...

    def _scope(self, key: str) -> Scope: ...

    def _ensure_scopes(self, c: sqlite3.Connection, scopes: Any) -> None: ...


_COLUMNS = "scope_key, owner, token, acquired_at, expires_at"
_DUE = (
    "SELECT s.scope_key FROM scopes s LEFT JOIN checkpoints c ON c.scope_key = s.scope_key"
    " LEFT JOIN leases l ON l.scope_key = s.scope_key"
    " WHERE (l.scope_key IS NULL OR l.expires_at <= ?)"
    " AND EXISTS (SELECT 1 FROM episodes e WHERE e.scope_key = s.scope_key"
    " AND e.seq > coalesce(c.seq, 0) AND e.consolidated_in IS NULL)"
    " AND NOT EXISTS (SELECT 1 FROM pending_plans p"  # a plan awaiting review blocks its scope
    " WHERE p.scope_key = s.scope_key AND p.status = 'pending')"
    " ORDER BY l.expires_at NULLS FIRST, s.scope_key LIMIT ?"
)


def _lease(host: _Host, row: Sequence[Any]) -> Lease:
    return Lease(host._scope(row[0]), row[1], int(row[2]), _parse(row[3]), _parse(row[4]))


def _take(
    c: sqlite3.Connection, key: str, owner: str, ttl: float, now: datetime
) -> Sequence[Any] | None:
    """The compare-and-set, inside the caller's write transaction."""
    at, until = lease_time(now), lease_time(now + timedelta(seconds=ttl))
    row = c.execute(
        "SELECT owner, token, acquired_at, expires_at FROM leases WHERE scope_key = ?", (key,)
    ).fetchone()
    if row is None:
        c.execute("INSERT INTO leases VALUES (?, ?, 1, ?, ?, ?)", (key, owner, at, at, until))
        return (key, owner, 1, at, until)
    held_by, token, acquired, expires = row
    if held_by == owner and expires > at:  # renewal by the live holder
        c.execute(
            "UPDATE leases SET heartbeat_at = ?, expires_at = ? WHERE scope_key = ?",
            (at, until, key),
        )
        return (key, owner, token, acquired, until)
    if expires > at:
        return None
    c.execute(
        "UPDATE leases SET owner = ?, token = ?, acquired_at = ?, heartbeat_at = ?,"
        " expires_at = ? WHERE scope_key = ?",
        (owner, token + 1, at, at, until, key),
    )
    return (key, owner, token + 1, at, until)


class SQLiteLeasesMixin:
    """Leases for :class:`reverie.store.sqlite.SQLiteStore` (migration 0005_leases)."""

    lease_owner: str | None = None

    def acquire_lease(
        self: _Host, scope: Scope, owner: str, ttl: float, now: datetime
    ) -> Lease | None:
        with self._write() as c:
            self._ensure_scopes(c, [scope])
            row = _take(c, scope.key, owner, ttl, now)
        return _lease(self, row) if row else None

    def claim_due(
        self: _Host, owner: str, ttl: float, now: datetime, limit: int = 1
    ) -> list[Lease]:
        with self._write() as c:
            due = [r[0] for r in c.execute(_DUE, (lease_time(now), limit)).fetchall()]
            rows = [_take(c, key, owner, ttl, now) for key in due]
        return [_lease(self, r) for r in rows if r is not None]

    def heartbeat_lease(self: _Host, lease: Lease, ttl: float, now: datetime) -> Lease:
        with self._write() as c:
            cur = c.execute(
                "UPDATE leases SET heartbeat_at = ?, expires_at = ?"
                " WHERE scope_key = ? AND owner = ? AND token = ?",
                (
                    lease_time(now),
                    lease_time(now + timedelta(seconds=ttl)),
                    lease.scope.key,
                    lease.owner,
                    lease.token,
                ),
            )
            if cur.rowcount != 1:
                raise LeaseLost(
                    f"the lease on {lease.scope.key} was taken over; stop working on it"
                )
        return Lease(
            lease.scope, lease.owner, lease.token, lease.acquired_at, now + timedelta(seconds=ttl)
        )

    def release_lease(self: _Host, lease: Lease) -> bool:
        with self._write() as c:
            cur = c.execute(
                "UPDATE leases SET expires_at = ? WHERE scope_key = ? AND owner = ? AND token = ?",
                (lease_time(RELEASED), lease.scope.key, lease.owner, lease.token),
            )
            return cur.rowcount == 1

    def leases(self: _Host) -> list[Lease]:
        rows = self._read(f"SELECT {_COLUMNS} FROM leases ORDER BY scope_key")
        return [_lease(self, r) for r in rows]

    def _check_lease(self: _Host, c: sqlite3.Connection, changes: Changeset) -> None:
        """Refuse a commit to a scope whose live lease another owner holds (see module doc)."""
        row = c.execute(
            "SELECT owner, expires_at FROM leases WHERE scope_key = ?", (changes.scope.key,)
        ).fetchone()
        if row is None or row[0] == self.lease_owner:
            return
        at = changes.cycle.finished_at if changes.cycle and changes.cycle.finished_at else None
        if row[1] > lease_time(at or datetime.now(UTC)):
            raise Conflict(
                f"scope {changes.scope.key} is leased by {row[0]} until {row[1]};"
                " a worker is dreaming it — try again after the lease ends"
            )
