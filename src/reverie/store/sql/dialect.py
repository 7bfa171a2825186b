"""What differs between SQLite and PostgreSQL in the SQL the two stores share.

The SQL of :mod:`reverie.store.sql` is written once, with ``?`` as the placeholder; a dialect
holds the values that make it run on one backend:

- ``ts`` / ``at`` / ``when``: a time as the database takes it (SQLite ISO-8601 UTC text,
  PostgreSQL ``timestamptz``), and as it hands it back from a column that is never / may be NULL;
- ``lease_ts`` / ``lease_at``: the same for lease times, which SQLite keeps in a fixed-width
  form so that text comparison in SQL orders them as instants;
- ``json``: a JSON column's value, decoded (SQLite text; PostgreSQL ``jsonb``, which psycopg
  decodes). JSON goes in as text on both;
- ``vector_in`` / ``vector_out``: a packed little-endian float32 blob as the database keeps it
  (SQLite a BLOB, PostgreSQL a pgvector value) and back;
- ``members``: ``column IN (?, …)`` on SQLite, whose statements take a bounded number of
  parameters (so lists go in chunks), ``column = ANY(?)`` with one array parameter on PostgreSQL;
- ``contains``: a case-insensitive substring test of a column, where the database can make
  one that is exact for the text asked (else None: the caller scans and tests in Python);
- ``json_number``, ``for_update``, ``for_share``: a number inside a JSON column and row locks
  (PostgreSQL only: SQLite's write transaction holds the whole database);
- ``time_type``: the column type of a time; ``errors``: what the driver raises;
- ``duplicate``, ``races``: what the driver raises on a unique violation, and what a commit
  raises when a concurrent transaction got there first (nothing on SQLite, whose write lock is
  taken up front: an integrity error there is a bug, not a race).

What needs a connection rather than a value is the backend's (:mod:`reverie.store.sql.database`).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from reverie.text.fold import fold

__all__ = ["Dialect", "PostgresDialect", "SQLiteDialect", "lease_time"]

CHUNK = 500
"""Values per ``IN`` list on SQLite (its statements take at most 32,766 parameters)."""


def _as_is(value: Any) -> Any:
    return value


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _json_text(text: str) -> Any:
    """A JSON column's value from its text. The empty object, and lists of strings (an
    episode's tools and entities, which repeat from episode to episode), skip the parser: a
    cycle reads every new episode, and a fresh copy of a remembered list shares its strings
    with every other episode that names them."""
    if text == "{}":
        return {}
    if text.startswith("["):
        strings = _strings(text)
        if strings is not None:
            return list(strings)
    return json.loads(text)


@lru_cache(maxsize=4096)
def _strings(text: str) -> tuple[str, ...] | None:
    """The JSON list ``text`` as a tuple, when every item is a string; else None."""
    value = json.loads(text)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    return None


def _parse(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def lease_time(value: datetime) -> str:
    """A fixed-width UTC text form that sorts as the instants compare (SQLite stores text)."""
    utc_value = value.astimezone(UTC)  # %Y is not zero-padded for years < 1000 on every libc
    return f"{utc_value.year:04d}-" + utc_value.strftime("%m-%dT%H:%M:%S.%fZ")


def _lease_parse(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


class Dialect:
    """The values one backend plugs into the shared SQL (see the module docstring)."""

    name: str
    for_update: str
    for_share: str
    time_type: str
    errors: tuple[type[Exception], ...]
    duplicate: tuple[type[Exception], ...]
    races: tuple[type[Exception], ...]
    ts: Callable[[datetime | None], Any]
    at: Callable[[Any], datetime]
    when: Callable[[Any], datetime | None]
    lease_ts: Callable[[datetime], Any]
    lease_at: Callable[[Any], datetime]
    json: Callable[[Any], Any]
    vector_in: Callable[[bytes], Any]
    vector_out: Callable[[Any], bytes]

    def members(self, column: str, values: Sequence[Any]) -> Iterator[tuple[str, list[Any]]]:
        """``(condition, params)`` that together select ``column`` in ``values``."""
        raise NotImplementedError

    def json_number(self, column: str, key: str) -> str:
        """SQL for the number under ``key`` of the JSON object in ``column``."""
        raise NotImplementedError

    def contains(self, text: str) -> tuple[str, str] | None:
        """``(condition, parameter)``: the condition (``{}`` standing for a column) holds for
        every value that may read as containing ``text`` (:func:`reverie.text.fold.fold`: any
        letter case, encoding or compatibility form), and for others too: the caller checks
        each row. None when this database cannot narrow the search for ``text``.

        Databases fold letter case by their locale (PostgreSQL's ``C`` folds ASCII only), so
        only the ASCII part is left to them: a value of printable ASCII alone folds to its
        lower case, which ``LIKE``/``ILIKE`` matches exactly; any other value is kept."""
        raise NotImplementedError


def _like_pattern(text: str) -> str | None:
    """A LIKE pattern for ``text`` anywhere, or None for text a JSON column would hold escaped
    (quotes, backslashes, control characters), which no LIKE over the stored form matches."""
    if any(ch in text for ch in '"\\') or not text.isprintable():
        return None
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _folded_pattern(text: str) -> str | None:
    """The LIKE pattern of ``text`` folded, when that is printable ASCII (see
    :meth:`Dialect.contains`); None otherwise."""
    folded = fold(text)
    return _like_pattern(folded) if folded.isascii() else None


class SQLiteDialect(Dialect):
    """Times are ISO-8601 UTC text, JSON is text, vectors are BLOBs."""

    name = "sqlite"
    for_update = for_share = ""
    time_type = "TEXT"
    errors = (sqlite3.Error,)
    duplicate = (sqlite3.IntegrityError,)
    races = ()
    ts = staticmethod(_iso)
    at = staticmethod(datetime.fromisoformat)
    when = staticmethod(_parse)
    lease_ts = staticmethod(lease_time)
    lease_at = staticmethod(_lease_parse)
    json = staticmethod(_json_text)
    vector_in = vector_out = staticmethod(_as_is)

    def members(self, column: str, values: Sequence[Any]) -> Iterator[tuple[str, list[Any]]]:
        for start in range(0, len(values), CHUNK):
            chunk = list(values[start : start + CHUNK])
            yield f"{column} IN ({','.join('?' * len(chunk))})", chunk

    def json_number(self, column: str, key: str) -> str:
        return f"json_extract({column}, '$.{key}')"

    def contains(self, text: str) -> tuple[str, str] | None:
        # JSON text is stored with non-ASCII escaped: a backslash keeps the row too
        pattern = _folded_pattern(text)
        keep = "{0} GLOB '*[^ -~]*' OR instr({0}, char(92)) > 0"
        return (f"({{0}} LIKE ? ESCAPE '\\' OR {keep})", pattern) if pattern else None


def _pg_vector(blob: bytes) -> Any:
    import numpy as np  # noqa: PLC0415 (numpy stays out of `import reverie`)

    return np.frombuffer(blob, dtype="<f4")


def _pg_blob(value: Any) -> bytes:
    """A pgvector value as SQLite's packed little-endian float32 blob."""
    blob: bytes = value.to_numpy().astype("<f4").tobytes()
    return blob


def _pg_when(value: Any) -> datetime | None:
    return value if isinstance(value, datetime) else None


class PostgresDialect(Dialect):
    """Times are ``timestamptz``, JSON is ``jsonb``, vectors are pgvector values; psycopg
    converts them."""

    name = "postgres"
    time_type = "TIMESTAMPTZ"
    for_update = " FOR UPDATE"
    for_share = " FOR SHARE"
    ts = at = lease_ts = lease_at = json = staticmethod(_as_is)
    when = staticmethod(_pg_when)
    vector_in = staticmethod(_pg_vector)
    vector_out = staticmethod(_pg_blob)

    @property
    def errors(self) -> tuple[type[Exception], ...]:  # type: ignore[override]
        """The driver's errors; psycopg loads on first use, never when Reverie is imported."""
        psycopg = _psycopg()
        return (psycopg.Error,) if psycopg else ()

    @property
    def duplicate(self) -> tuple[type[Exception], ...]:  # type: ignore[override]
        psycopg = _psycopg()
        return (psycopg.errors.UniqueViolation,) if psycopg else ()

    races = duplicate

    def members(self, column: str, values: Sequence[Any]) -> Iterator[tuple[str, list[Any]]]:
        if values:
            yield f"{column} = ANY(?)", [list(values)]

    def json_number(self, column: str, key: str) -> str:
        return f"({column} ->> '{key}')::double precision"

    def contains(self, text: str) -> tuple[str, str] | None:
        pattern = _folded_pattern(text)
        return (
            ("({0}::text ILIKE ? ESCAPE '\\' OR {0}::text ~ '[^ -~]')", pattern)
            if pattern
            else None
        )


def _psycopg() -> Any:
    """The driver, or None without the ``postgres`` extra (no error of it to catch then;
    connecting names the extra)."""
    try:
        import psycopg  # noqa: PLC0415 (extra: postgres)
    except ImportError:
        return None
    return psycopg
