"""Opening one SQLite file from many connections at once, as a worker pool or a fleet does.

The first opener switches a rollback-mode file to WAL. When several race to do it, SQLite
refuses all but one with ``database is locked`` without calling the busy handler, so a store
that did not wait it out failed to open in a few rounds out of a hundred.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from reverie.store.sqlite import SQLiteStore

ROUNDS = 60
OPENERS = 6


def _open_at_once(path: Path) -> list[BaseException]:
    start = threading.Barrier(OPENERS)
    errors: list[BaseException] = []

    def open_one() -> None:
        start.wait()
        try:
            store = SQLiteStore(str(path))
            store.migrate()
            store.close()
        except BaseException as exc:  # collected: the test reports every opener that failed
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(OPENERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


def test_connections_racing_to_switch_a_file_to_wal_all_open(tmp_path: Path) -> None:
    for n in range(ROUNDS):
        path = tmp_path / f"brain-{n}.db"
        with sqlite3.connect(path) as conn:  # a file in rollback mode, as an older tool left it
            conn.execute("CREATE TABLE earlier (x)")
        assert _open_at_once(path) == [], f"round {n}"
        with sqlite3.connect(path) as conn:
            assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
