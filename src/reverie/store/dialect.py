"""What differs between the two backends for the SQL the stores share.

A mixin that serves both stores with one implementation (:mod:`reverie.store.cumulative`,
:mod:`reverie.store.keys_cache`) writes its SQL once, with ``self._P`` as the placeholder, and
passes values through these converters; each store's mixins take them from the one dialect class
of their backend, so two mixins of a store can never disagree on them.

- ``_ts``: a time as the database takes it (SQLite ISO-8601 UTC text, PostgreSQL ``timestamptz``);
- ``_at`` / ``_when``: a time as the database hands it back, from a column that is never / may be
  NULL;
- ``_json``: a JSON column's value, decoded (SQLite text; PostgreSQL ``jsonb``, which psycopg
  decodes). JSON goes in as text on both.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, ClassVar

from reverie.store.sqlite_rows import iso, parse_dt

__all__ = ["PostgresDialect", "SQLiteDialect"]


def _as_is(value: Any) -> Any:
    return value


class SQLiteDialect:
    """Times are ISO-8601 UTC text and JSON is text, as everywhere in the SQLite store."""

    _P: ClassVar[str] = "?"
    _ts = staticmethod(iso)
    _at = staticmethod(datetime.fromisoformat)
    _when = staticmethod(parse_dt)
    _json = staticmethod(json.loads)


class PostgresDialect:
    """Times are ``timestamptz`` and JSON is ``jsonb``; psycopg converts them."""

    _P: ClassVar[str] = "%s"
    _ts = _at = _json = staticmethod(_as_is)

    @staticmethod
    def _when(value: Any) -> datetime | None:
        return value if isinstance(value, datetime) else None
