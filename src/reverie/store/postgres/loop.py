"""The PostgreSQL store on psycopg's async connection, for :class:`reverie.AsyncReverie`.

The store's SQL is written once (:mod:`reverie.store.sql`, over :mod:`reverie.store.sql.dialect`)
and its code is synchronous: a cycle, a recall or an append is a sequence of statements with
Python between them. :class:`LoopPostgresStore` keeps that code and changes only where a
statement runs: each ``_read`` and each statement of a ``_write`` transaction is handed to a
``psycopg.AsyncConnection`` that lives on the application's event loop, and the calling thread
(one of ``AsyncReverie``'s workers) waits for it. The loop only ever awaits the database; the
Python between statements — decoding rows, scoring, packing — runs on the worker. Each worker
has a store, so each has its own async connection: no two transactions share one.

Called from the loop's own thread it would wait on itself; it refuses instead
(:class:`~reverie.errors.StoreError`). Streaming a table (``reverie copy``) stays on the
synchronous :class:`~reverie.store.postgres.PostgresStore`.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import AsyncExitStack, contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from reverie.errors import MissingExtra, StoreError
from reverie.store.postgres import (
    Cursor,
    PostgresBackend,
    PostgresStore,
    pg_placeholders,
    safe_url,
)
from reverie.store.sql.database import Rows
from reverie.store.sql.dialect import PostgresDialect

if TYPE_CHECKING:
    import psycopg

__all__ = ["Bridge", "LoopBackend", "LoopCursor", "LoopPostgresStore"]

T = TypeVar("T")


async def _awaited(awaitable: Awaitable[T]) -> T:
    return await awaitable


class Bridge:
    """Runs an awaitable on ``loop`` from another thread and waits for its result."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop

    def __call__(self, awaitable: Awaitable[T]) -> T:
        try:
            running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self.loop:
            if inspect.iscoroutine(awaitable):
                awaitable.close()  # never started: nothing ran, nothing to await
            raise StoreError(
                "this PostgreSQL store runs its statements on the event loop; call it from a"
                " worker thread (AsyncReverie does), never from the loop itself"
            )
        return asyncio.run_coroutine_threadsafe(_awaited(awaitable), self.loop).result()


class _Copy:
    """``COPY … FROM STDIN`` as the shared code writes it: rows collected, sent at the end in
    one trip to the loop."""

    def __init__(self, cur: psycopg.AsyncCursor[Any], statement: str, run: Bridge) -> None:
        self.cur, self.statement, self.run = cur, statement, run
        self.rows: list[Sequence[Any]] = []

    def __enter__(self) -> _Copy:
        return self

    def write_row(self, row: Sequence[Any]) -> None:
        self.rows.append(row)

    def __exit__(self, exc_type: type[BaseException] | None, *_: object) -> None:
        if exc_type is None:
            self.run(self._send())

    async def _send(self) -> None:
        async with self.cur.copy(self.statement) as copy:
            for row in self.rows:
                await copy.write_row(row)


class LoopCursor(Cursor):
    """:class:`~reverie.store.postgres.Cursor`'s interface over an async cursor on the loop."""

    def __init__(self, acur: psycopg.AsyncCursor[Any], run: Bridge) -> None:
        # Cursor.__init__ takes a synchronous cursor; this one has none.
        self.acur = acur
        self.run = run

    def execute(self, sql: str, params: Any = ()) -> LoopCursor:
        self.run(self.acur.execute(pg_placeholders(sql), params))
        return self

    def executemany(self, sql: str, rows: Sequence[Any]) -> LoopCursor:
        self.run(self.acur.executemany(pg_placeholders(sql), rows))
        return self

    def fetchone(self) -> Any:
        return self.run(self.acur.fetchone())

    def fetchall(self) -> list[Any]:
        return self.run(self.acur.fetchall())

    @property
    def rowcount(self) -> int:
        return self.acur.rowcount

    def copy(self, statement: str) -> _Copy:
        return _Copy(self.acur, statement, self.run)

    def script(self, sql: str) -> None:
        self.run(self.acur.execute(sql.encode()))


async def _open(url: str) -> psycopg.AsyncConnection[Any]:
    try:
        import psycopg  # noqa: PLC0415 (extra: postgres)
    except ImportError:  # pragma: no cover - depends on the environment
        raise MissingExtra("psycopg", "postgres") from None
    try:
        conn = await psycopg.AsyncConnection.connect(url, autocommit=True)
    except psycopg.Error as exc:
        raise StoreError(f"cannot connect to PostgreSQL at {safe_url(url)}: {exc}") from exc
    await conn.execute("SET TIME ZONE 'UTC'")
    return conn


class LoopPostgresStore(PostgresStore):
    """:class:`~reverie.store.postgres.PostgresStore` whose statements run on ``loop``."""

    def __init__(
        self, url: str, loop: asyncio.AbstractEventLoop, *, lease_owner: str | None = None
    ) -> None:
        super().__init__(url, lease_owner=lease_owner, backend=LoopBackend(url, loop))


class LoopBackend(PostgresBackend):
    """:class:`~reverie.store.postgres.PostgresBackend` with its connection on ``loop``: the
    same statements, sent through :class:`Bridge` (its own connection; no thread of its)."""

    def __init__(self, url: str, loop: asyncio.AbstractEventLoop) -> None:
        self.dialect = PostgresDialect()
        self.decode = Rows(self.dialect)
        self.url = self.name = url
        self._lock = threading.RLock()
        self._run = Bridge(loop)
        self._aconn = self._run(_open(url))

    @contextmanager
    def write(self) -> Iterator[LoopCursor]:
        with self._lock:
            stack = AsyncExitStack()
            cursor = LoopCursor(self._run(self._begin(stack)), self._run)
            try:
                yield cursor
            except BaseException as exc:
                self._run(stack.__aexit__(type(exc), exc, exc.__traceback__))
                raise
            self._run(stack.__aexit__(None, None, None))

    async def _begin(self, stack: AsyncExitStack) -> psycopg.AsyncCursor[Any]:
        await stack.enter_async_context(self._aconn.transaction())
        return await stack.enter_async_context(self._aconn.cursor())

    def read(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Any]:
        with self._lock:
            return self._run(self._fetch(pg_placeholders(sql), params))

    def read_as(
        self, sql: str, params: Sequence[Any], decode: Callable[[Sequence[Any]], T]
    ) -> list[T]:
        return [decode(r) for r in self.read(sql, params)]

    async def _fetch(self, sql: str, params: Sequence[Any] | dict[str, Any]) -> list[Any]:
        async with self._aconn.cursor() as cur:
            await cur.execute(sql, params)
            return await cur.fetchall()

    def run_alone(self, sql: str) -> None:
        with self._lock:
            self._run(self._aconn.execute(sql.encode()))

    def stream(self, sql: str) -> Iterator[Any]:
        raise StoreError("streaming a table (reverie copy) needs the synchronous PostgresStore")

    def after_migrate(self) -> None:
        from pgvector.psycopg import register_vector_async  # noqa: PLC0415 (extra: postgres)

        self._run(register_vector_async(self._aconn))

    def close(self) -> None:
        with self._lock:
            self._run(self._aconn.close())
