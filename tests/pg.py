"""A fresh PostgreSQL schema per test, on the server ``scripts/postgres`` starts.

``REVERIE_TEST_POSTGRES_URL`` names the server (``scripts/test`` exports it). Without it the
PostgreSQL tests skip with a reason, so a developer without a server still runs everything else.
Each test gets its own schema (``search_path`` in the URL), dropped afterwards: tests never see
each other's rows, and the URL can be handed to worker subprocesses as it is.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import quote

import pytest

from reverie.store.postgres import PostgresStore

ENV = "REVERIE_TEST_POSTGRES_URL"
SKIP_REASON = f"PostgreSQL tests need {ENV} (scripts/test starts a server and sets it)"


def server_url() -> str:
    url = os.environ.get(ENV)
    if not url:
        pytest.skip(SKIP_REASON)
    return url


@contextmanager
def schema_url() -> Iterator[str]:
    """A URL whose connections live in a new, empty schema (dropped on exit)."""
    import psycopg  # noqa: PLC0415 (extra: postgres)

    base = server_url()
    schema = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(base, autocommit=True) as admin:
        admin.execute("CREATE EXTENSION IF NOT EXISTS vector")
        admin.execute(f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in base else "?"
    try:
        yield f"{base}{sep}options={quote(f'-csearch_path={schema},public')}"
    finally:
        with psycopg.connect(base, autocommit=True) as admin:
            admin.execute(f"DROP SCHEMA {schema} CASCADE")


@contextmanager
def postgres_store(**kwargs: object) -> Iterator[PostgresStore]:
    with schema_url() as url:
        store = PostgresStore(url, **kwargs)  # type: ignore[arg-type]
        store.migrate()
        try:
            yield store
        finally:
            store.close()


@contextmanager
def loop_postgres_store() -> Iterator[PostgresStore]:
    """:class:`~reverie.store.postgres.loop.LoopPostgresStore` in a fresh schema, its async
    connection on an event loop that runs in a thread of its own (as an application's would),
    called from the test's thread (as AsyncReverie's workers call it)."""
    import asyncio  # noqa: PLC0415
    import threading  # noqa: PLC0415

    from reverie.store.postgres.loop import LoopPostgresStore  # noqa: PLC0415 (extra: postgres)

    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="test-event-loop", daemon=True)
    thread.start()
    try:
        with schema_url() as url:
            store = LoopPostgresStore(url, loop)
            store.migrate()
            try:
                yield store
            finally:
                store.close()
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()
