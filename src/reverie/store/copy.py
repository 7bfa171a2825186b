"""Move up: copy a SQLite brain into PostgreSQL, table by table, and prove the copy is whole.

The copy is driven by the schemas, not by a list of known tables: every table of the source
(except full-text shadow tables and bookkeeping) must have a PostgreSQL port with the same
columns, so a table another issue adds is copied too — or the copy refuses, naming it. Values
are converted by the target column's type (ISO text → ``timestamptz``, JSON text → ``jsonb``,
float32 blobs → pgvector). Everything lands in one transaction, in foreign-key order, by COPY.
Identity sequences then continue past the copied values and page search vectors are rebuilt.

Archive bundles travel too: SQLite keeps them as files beside the database, PostgreSQL in the
database (``archive_blobs``), so each bundle the source indexes is read from its file, checked
against its name, and stored in the same transaction; a bundle missing or altered stops the copy
(its episodes exist nowhere else).

Verification reads both sides back: per table, the row count and a ``sha256:`` digest over the
rows, each value normalised by the target column's type (instants in UTC, canonical JSON,
vectors as float32 bytes); the digest is order-independent. A mismatch raises.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reverie.errors import ArchiveUnreadable, Conflict, InvalidInput, StoreError
from reverie.hashing import canonical_json
from reverie.store import open_store
from reverie.store.records import bundle_file, bundle_name
from reverie.store.sqlite import SQLiteStore

if TYPE_CHECKING:
    from reverie.store.postgres import Cursor, PostgresStore

__all__ = ["CopyReport", "TableCopy", "copy_store"]

_SKIP = {"_migrations", "sqlite_sequence"}


@dataclass(frozen=True)
class TableCopy:
    table: str
    rows: int
    digest: str


@dataclass
class CopyReport:
    source: str
    target: str
    tables: list[TableCopy] = field(default_factory=list)
    bundles: int = 0
    seconds: float = 0.0

    @property
    def rows(self) -> int:
        return sum(t.rows for t in self.tables)


@dataclass(frozen=True)
class _Column:
    name: str
    kind: str  # the target's type: timestamptz, jsonb, vector, double, bool, bytea, plain


def copy_store(
    source: str, target: str, *, on_table: Callable[[str, int], None] | None = None
) -> CopyReport:
    """Copy the SQLite store at ``source`` into the empty PostgreSQL store at ``target``."""
    from reverie.store.postgres import PostgresStore  # noqa: PLC0415 (extra: postgres)

    src, dst = open_store(source), open_store(target)
    try:
        if not isinstance(src, SQLiteStore) or not isinstance(dst, PostgresStore):
            raise InvalidInput("--from/--to", "copy goes from a SQLite store to a PostgreSQL one")
        started = time.perf_counter()
        src.migrate()
        dst.migrate()
        report = CopyReport(source, target)
        report.tables, report.bundles = _copy(src, dst, on_table or (lambda _t, _n: None))
        report.seconds = round(time.perf_counter() - started, 3)
        return report
    finally:
        src.close()
        dst.close()


def _copy(
    src: SQLiteStore, dst: PostgresStore, on_table: Callable[[str, int], None]
) -> tuple[list[TableCopy], int]:
    tables = _source_tables(src)
    with dst.write() as c:
        info = {t: src.read(f'PRAGMA table_info("{t}")') for t in tables}
        columns = {t: _target_columns(c, t, [r[1] for r in info[t]]) for t in tables}
        order = _fk_order(c, tables)
        if c.execute("SELECT count(*) FROM episodes").fetchone()[0]:
            raise Conflict(f"{dst.url} already holds episodes; copy into an empty database")
        for table in order:
            on_table(table, _copy_table(src, c, table, columns[table]))
        _continue_identities(c, order)
        dst.rebuild_page_search(c)
        bundles = _copy_bundles(src, c)
    return [_verify(src, dst, t, columns[t]) for t in order], bundles


def _copy_bundles(src: SQLiteStore, c: Cursor) -> int:
    """Store every bundle ``src`` indexes in the target's ``archive_blobs``, each checked
    against its name; the number copied. The files are where :mod:`reverie.dream.archive`
    keeps them: ``<folder of the database>/archive/<hex>.jsonl.gz``."""
    from reverie.store.postgres.blobs import put_bundle  # noqa: PLC0415 (extra: postgres)

    root = Path(src.path).resolve().parent / "archive"
    hashes = [r[0] for r in src.rows("archive_bundles", ["hash"])]
    for bundle_hash in hashes:
        path = root / bundle_file(bundle_hash)
        try:
            data = path.read_bytes()
        except OSError:
            raise ArchiveUnreadable(bundle_hash, str(path), "is missing") from None
        if bundle_name(data) != bundle_hash:
            raise ArchiveUnreadable(bundle_hash, str(path), "was altered")
        put_bundle(c, bundle_hash, data)
    return len(hashes)


def _source_tables(src: SQLiteStore) -> list[str]:
    rows = src.read("SELECT name, sql FROM sqlite_master WHERE type = 'table'")
    virtual = [n for n, sql in rows if (sql or "").upper().startswith("CREATE VIRTUAL TABLE")]
    return sorted(
        n
        for n, _sql in rows
        if n not in _SKIP
        and n not in virtual
        and not any(n.startswith(v + "_") for v in virtual)
        and not n.startswith("sqlite_")
    )


def _kind(data_type: str, udt: str) -> str:
    kinds = {
        "timestamp with time zone": "timestamptz",
        "jsonb": "jsonb",
        "double precision": "double",
        "boolean": "bool",
        "bytea": "bytea",
    }
    return "vector" if udt == "vector" else kinds.get(data_type, "plain")


def _target_columns(c: Cursor, table: str, wanted: list[str]) -> list[_Column]:
    c.execute(
        "SELECT column_name, data_type, udt_name FROM information_schema.columns"
        " WHERE table_schema = current_schema() AND table_name = %s",
        (table,),
    )
    found = {r[0]: _kind(r[1], r[2]) for r in c.fetchall()}
    if not found:
        raise StoreError(
            f"table {table} has no PostgreSQL port; add it to reverie/store/migrations/postgres/"
        )
    missing = [col for col in wanted if col not in found]
    if missing:
        raise StoreError(f"table {table}: PostgreSQL lacks the columns {', '.join(missing)}")
    return [_Column(col, found[col]) for col in wanted]


def _fk_order(c: Cursor, tables: list[str]) -> list[str]:
    """``tables`` with every table after the tables its foreign keys point at."""
    c.execute(
        "SELECT conrelid::regclass::text, confrelid::regclass::text FROM pg_constraint"
        " WHERE contype = 'f' AND connamespace = current_schema()::regnamespace"
    )
    needs: dict[str, set[str]] = {t: set() for t in tables}
    for child, parent in c.fetchall():
        if child in needs and parent in needs and child != parent:
            needs[child].add(parent)
    order: list[str] = []
    while needs:
        ready = sorted(t for t, deps in needs.items() if deps <= set(order))
        if not ready:
            raise StoreError(f"foreign keys form a cycle among {sorted(needs)}")
        order += ready
        for t in ready:
            del needs[t]
    return order


def _to_target(kind: str, value: Any) -> Any:
    if value is None:
        return None
    if kind == "timestamptz":
        parsed = datetime.fromisoformat(str(value))
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    if kind == "vector":
        import numpy as np  # noqa: PLC0415 (numpy stays out of `import reverie`)

        return "[" + ",".join(repr(x) for x in np.frombuffer(value, "<f4").tolist()) + "]"
    if kind == "bool":
        return bool(value)
    return value


def _copy_table(src: SQLiteStore, c: Cursor, table: str, columns: list[_Column]) -> int:
    names = ", ".join(f'"{col.name}"' for col in columns)
    count = 0
    with c.copy(f'COPY "{table}" ({names}) FROM STDIN') as copy:
        for row in src.rows(table, [col.name for col in columns]):
            copy.write_row([_to_target(col.kind, v) for col, v in zip(columns, row, strict=True)])
            count += 1
    return count


def _continue_identities(c: Cursor, tables: list[str]) -> None:
    c.execute(
        "SELECT table_name, column_name FROM information_schema.columns"
        " WHERE table_schema = current_schema() AND is_identity = 'YES'"
    )
    for table, column in c.fetchall():
        if table in tables:
            c.execute(
                f"SELECT setval(pg_get_serial_sequence(%s, %s),"
                f' greatest((SELECT max("{column}") FROM "{table}"), 1))',
                (table, column),
            )


def _normal(kind: str, value: Any) -> Any:
    """One value as both sides must agree on it, whichever side it was read from."""
    if value is None:
        return None
    if kind == "timestamptz":
        when = value if isinstance(value, datetime) else _to_target(kind, value)
        return when.astimezone(UTC).isoformat()
    if kind == "jsonb":
        return canonical_json(json.loads(value) if isinstance(value, str) else value)
    if kind == "vector":
        import numpy as np  # noqa: PLC0415 (numpy stays out of `import reverie`)

        data = value if isinstance(value, bytes) else value.to_numpy().astype("<f4").tobytes()
        return np.frombuffer(data, "<f4").astype("<f4").tobytes().hex()
    if kind == "double":
        return repr(float(value))
    if kind == "bool":
        return bool(value)
    return value.hex() if isinstance(value, bytes | memoryview) else value


def _digest(rows: Iterator[Sequence[Any]], columns: Sequence[_Column]) -> tuple[int, str]:
    digests = sorted(
        hashlib.sha256(
            canonical_json(
                [_normal(col.kind, v) for col, v in zip(columns, row, strict=True)]
            ).encode()
        ).digest()
        for row in rows
    )
    return len(digests), "sha256:" + hashlib.sha256(b"".join(digests)).hexdigest()


def _verify(src: SQLiteStore, dst: PostgresStore, table: str, columns: list[_Column]) -> TableCopy:
    names = [col.name for col in columns]
    count, digest = _digest(src.rows(table, names), columns)
    quoted = ", ".join(f'"{name}"' for name in names)
    copied, copied_digest = _digest(dst.stream(f'SELECT {quoted} FROM "{table}"'), columns)
    if (copied, copied_digest) != (count, digest):
        raise StoreError(
            f"copy of {table} does not verify: {count} rows {digest} in the source,"
            f" {copied} rows {copied_digest} in PostgreSQL"
        )
    return TableCopy(table, count, digest)
