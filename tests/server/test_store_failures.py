"""A failing database gets a clear JSON error from the service, never a traceback or the driver's
words: a locked database is 503 with Retry-After, a read-only one 503, a damaged one 500.

Real conditions over real HTTP: another connection holding SQLite's write lock, a ``mode=ro``
connection, and a database file with zeros written into it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from reverie import Reverie
from reverie.server import create_app
from reverie.server.http_errors import RETRY_AFTER_S
from reverie.store.sqlite import SQLiteStore
from tests.server.conftest import Running, start_server, stop_server

SCOPE = "acme/coder"
DRIVER_WORDS = ("locked", "readonly", "malformed", "disk image", "sqlite3", "Traceback")


def seeded(db: Path, episodes: int = 3, size: int = 10) -> str:
    """A brain with ``episodes`` episodes of ``size`` characters, checkpointed into the file;
    a read key for it."""
    with Reverie.open(db) as rv:
        rv.ingest(
            [{"id": f"e{i}", "scope": SCOPE, "situation": "x" * size} for i in range(episodes)]
        )
        key = rv.keys.create("acme", rights="write")[1]
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return key


@pytest.fixture
def serve() -> Iterator[object]:
    running: list[tuple[Running, httpx.Client]] = []

    def start(rv: Reverie, key: str) -> httpx.Client:
        server = start_server(create_app(rv))
        headers = {"Authorization": f"Bearer {key}"}
        running.append((server, httpx.Client(base_url=server.url, headers=headers, timeout=20)))
        return running[-1][1]

    yield start
    for server, client in running:
        client.close()
        stop_server(server)


def clean_error(answer: httpx.Response, status: int, code: str, db: Path) -> str:
    """The error's message, after checking its shape and that no driver words are in it
    (the database's own path, which the message names, aside)."""
    assert answer.status_code == status, answer.text
    error = answer.json()["error"]
    assert (error["status"], error["code"]) == (status, code)
    said = answer.text.replace(str(db), "DB")
    assert not any(word in said for word in DRIVER_WORDS), answer.text
    return str(error["message"])


def test_a_locked_database_is_503_with_retry_after(tmp_path: Path, serve: object) -> None:
    db = tmp_path / "brain.db"
    key = seeded(db)
    rv = Reverie(SQLiteStore(db, busy_timeout_ms=200))
    holder = sqlite3.connect(db, isolation_level=None)
    try:
        client = serve(rv, key)  # type: ignore[operator]
        holder.execute("BEGIN IMMEDIATE")  # another process's write lock
        answer = client.post("/v1/episodes", json={"scope": SCOPE, "situation": "new"})
        message = clean_error(answer, 503, "store_busy", db)
        assert answer.headers["Retry-After"] == str(RETRY_AFTER_S)
        assert "another process holds the database" in message
        holder.execute("ROLLBACK")
        assert client.post("/v1/episodes", json={"scope": SCOPE, "situation": "new"}).is_success
    finally:
        holder.close()
        rv.close()


def test_a_read_only_database_reads_and_refuses_writes_with_503(
    tmp_path: Path, serve: object
) -> None:
    db = tmp_path / "brain.db"
    key = seeded(db)
    rv = Reverie.open(f"file:{db}?mode=ro")
    try:
        client = serve(rv, key)  # type: ignore[operator]
        assert client.get("/v1/episodes/e1").json()["id"] == "e1"
        answer = client.post("/v1/episodes", json={"scope": SCOPE, "situation": "new"})
        assert "read-only" in clean_error(answer, 503, "store_read_only", db)
    finally:
        rv.close()


def test_a_damaged_database_is_500_naming_the_damage(tmp_path: Path, serve: object) -> None:
    db = tmp_path / "brain.db"
    key = seeded(db, episodes=80, size=3000)
    rv = Reverie.open(db)
    try:
        client = serve(rv, key)  # type: ignore[operator]
        data = db.read_bytes()  # the episodes' own pages, wherever the schema put them
        middle = data.index(b"x" * 3000, len(data) // 3) // 4096 * 4096
        with db.open("r+b") as fh:  # zeros over live pages, behind the open store's back
            fh.seek(middle)
            fh.write(b"\0" * 16384)
        answers = [client.get(f"/v1/episodes/e{i}") for i in range(80)]
        damaged = [a for a in answers if a.status_code == 500]
        assert damaged, [a.status_code for a in answers]
        for answer in damaged:
            assert "damaged" in clean_error(answer, 500, "store_damaged", db)
        assert all(a.status_code in (200, 500) for a in answers)
    finally:
        rv.close()
