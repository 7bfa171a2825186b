"""What a database driver's failure means, said once for every edge.

SQLite and PostgreSQL fail in their own words ("database is locked", "file is not a database",
SQLSTATE ``55P03``). :func:`store_failure` turns such an exception into the
:class:`~reverie.errors.StoreError` subclass that says what happened and what to do:

=================  =========================================  ================================
class              when                                       what the edges do
=================  =========================================  ================================
``StoreBusy``      locked, busy, a lock or serialization      CLI exit 2; HTTP 503 with
                   timeout, the server unreachable            ``Retry-After``
``StoreReadOnly``  a read-only file, folder, connection or    CLI exit 2; HTTP 503
                   transaction
``StoreFull``      a full disk or a file size limit           CLI exit 2; HTTP 507
``StoreDamaged``   not a database, malformed, corrupt         CLI exit 2; HTTP 500
``StoreError``     anything else the driver raised            CLI exit 2; HTTP 503
=================  =========================================  ================================

The message is the remedy, in Reverie's words; the driver's own text is kept apart on
``detail``: the command line shows it in brackets (the operator is there), the service logs it
and never puts it in an answer.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from reverie.errors import StoreBusy, StoreDamaged, StoreError, StoreFull, StoreReadOnly
from reverie.store.sql.database import Database

__all__ = ["DriverFailure", "driver_errors", "store_failure"]

_READ_ONLY = "the database is read-only; give reverie write access to it and its folder"
_FULL = "the disk is full (or a file size limit was hit); free space and retry"
_IO = (
    "the database could not be written (disk full, a file size limit, or a failing disk);"
    " free space and retry"
)
_NOT_A_DATABASE = "this is not a Reverie database (not SQLite, or damaged); check --db"
_DAMAGED = "the database file is damaged; restore it from a backup"
_BUSY = "another process holds the database; retry when it is done"

_SQLITE_WORDS: list[tuple[str, type[StoreError], str]] = [
    ("readonly", StoreReadOnly, _READ_ONLY),
    ("read-only", StoreReadOnly, _READ_ONLY),
    ("disk is full", StoreFull, _FULL),
    ("disk i/o error", StoreFull, _IO),
    ("not a database", StoreDamaged, _NOT_A_DATABASE),
    ("malformed", StoreDamaged, _DAMAGED),
    ("corrupt", StoreDamaged, _DAMAGED),
    ("unable to open", StoreError, "the database cannot be opened; check the path and its rights"),
    ("locked", StoreBusy, _BUSY),
    ("busy", StoreBusy, _BUSY),
]
"""SQLite's words (``str(sqlite3.Error)``), first match wins."""

_SQLSTATES: list[tuple[str, type[StoreError], str]] = [
    ("55P03", StoreBusy, "a row or table lock was not granted in time; retry"),
    ("40001", StoreBusy, "the transaction lost a race with another writer; retry"),
    ("40P01", StoreBusy, "the transaction was chosen as a deadlock victim; retry"),
    ("57014", StoreBusy, "the statement timed out; retry when the database is less busy"),
    ("08", StoreBusy, "the database server cannot be reached; retry when it is back"),
    ("25006", StoreReadOnly, "the database is read-only (a standby, or a read-only user)"),
    ("53100", StoreFull, "the database server's disk is full; free space and retry"),
    ("XX001", StoreDamaged, "the database reports damaged data; restore from a backup"),
    ("XX002", StoreDamaged, "the database reports a damaged index; REINDEX it"),
]
"""PostgreSQL's SQLSTATE codes (``exc.sqlstate``), by prefix, first match wins."""


@dataclass(frozen=True)
class DriverFailure:
    """One driver exception, classified: the error class, the remedy, the driver's words."""

    kind: type[StoreError]
    remedy: str
    detail: str

    def error(self, where: str | None = None) -> StoreError:
        """The error to raise, naming ``where`` (the database) when given; the driver's
        words on ``detail``."""
        prefix = f"database {where}: " if where else ""
        return self.kind(prefix + self.remedy, detail=self.detail)


def store_failure(exc: BaseException) -> DriverFailure:
    """What ``exc``, raised by a database driver, means (module docstring)."""
    detail = str(exc) or type(exc).__name__
    code = getattr(exc, "sqlstate", None)
    if isinstance(code, str):
        for prefix, kind, remedy in _SQLSTATES:
            if code.startswith(prefix):
                return DriverFailure(kind, remedy, detail)
    text = str(exc).lower()
    for needle, kind, remedy in _SQLITE_WORDS:
        if needle in text:
            return DriverFailure(kind, remedy, detail)
    return DriverFailure(StoreError, "the database failed", detail)


def driver_errors(store: object) -> tuple[type[Exception], ...]:
    """What ``store``'s database driver raises: its SQL dialect's errors (SQLite's for a
    store that has none)."""
    if isinstance(store, Database):
        return store.dialect.errors
    return (sqlite3.Error,)
