"""A read-only database reads: every read command works and changes no byte; a write, or a
schema that needs migrating, is one red line and exit 2.

Root writes files whatever their mode, so the variants that run everywhere (CI runs as root)
open the database through a SQLite ``file:…?mode=ro`` URI; the chmod variants run only for a
user that chmod can stop.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from reverie import Reverie
from reverie.errors import StoreReadOnly
from tests.security.test_no_tracebacks import one_red_line, run

SCOPE = "acme/coder"
LESSON = {"scope": SCOPE, "situation": "kubectl deploy timed out", "action": "kubectl apply",
          "outcome": "failure", "error": "timeout", "lesson": "pass --timeout 10m"}  # fmt: skip
not_as_root = pytest.mark.skipif(os.geteuid() == 0, reason="root writes read-only files anyway")


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def brain(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A dreamt brain, checkpointed into its one file, and its page id."""
    db = tmp_path / "brain.db"
    with Reverie.open(db) as rv:
        rv.ingest([{**LESSON, "id": f"e{i}"} for i in range(3)])
        rv.dream(SCOPE)
        page = rv.pages(SCOPE)[0].id
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    yield db, page
    db.chmod(0o644)
    db.parent.chmod(0o755)


def ingest(db: str, folder: Path) -> str:
    """The one red line of ingesting one episode into ``db``."""
    source = folder / "one.jsonl"
    source.write_text('{"scope": "acme/coder", "situation": "new"}\n', encoding="utf-8")
    return one_red_line(run("--db", db, "ingest", str(source)))


def read_commands(page: str, out: Path) -> list[list[str]]:
    return [
        ["status"],
        ["pages", "-s", SCOPE],
        ["recall", "kubectl deploy timeout", "-s", SCOPE],
        ["why", page],
        ["verify"],
        ["export", "markdown", "-s", SCOPE, str(out / "md")],
        ["export", "training", "-s", SCOPE, str(out / "train.jsonl")],
    ]


def test_read_commands_work_on_a_read_only_uri_and_change_nothing(
    brain: tuple[Path, str], tmp_path: Path
) -> None:
    db, page = brain
    before = digest(db)
    for command in read_commands(page, tmp_path):
        result = run("--db", f"file:{db}?mode=ro", *command)
        assert result.returncode == 0, (command, result.stderr)
        assert "Traceback" not in result.stderr
    assert (
        "pass --timeout 10m"
        in run("--db", f"file:{db}?mode=ro", "recall", "kubectl", "-s", SCOPE).stdout
    )
    assert digest(db) == before


def test_a_write_to_a_read_only_uri_is_one_red_line(
    brain: tuple[Path, str], tmp_path: Path
) -> None:
    db, _ = brain
    before = digest(db)
    line = ingest(f"file:{db}?mode=ro", tmp_path)
    assert "read-only" in line and str(db) in line
    assert digest(db) == before


def test_a_read_only_database_that_needs_migrating_is_one_red_line(
    brain: tuple[Path, str],
) -> None:
    db, _ = brain
    with sqlite3.connect(db) as conn:  # as a database from before the newest migration
        newest = conn.execute("SELECT max(name) FROM _migrations").fetchone()[0]
        conn.execute("DELETE FROM _migrations WHERE name = ?", (newest,))
    conn.close()
    before = digest(db)
    line = one_red_line(run("--db", f"file:{db}?mode=ro", "status"))
    assert "read-only" in line and newest in line and "reverie init" in line
    assert digest(db) == before
    empty = db.parent / "empty.db"
    empty.touch()
    assert "no Reverie schema" in one_red_line(run("--db", f"file:{empty}?mode=ro", "status"))


def test_the_library_reads_a_read_only_uri_and_refuses_writes(brain: tuple[Path, str]) -> None:
    db, _ = brain
    with Reverie.open(f"file:{db}?mode=ro") as rv:
        assert rv.store.read_only  # type: ignore[attr-defined]
        assert rv.recall("kubectl deploy timeout", SCOPE).items
        with pytest.raises(StoreReadOnly, match="read-only"):
            rv.remember({"scope": SCOPE, "situation": "new", "action": "x"})


@not_as_root
def test_a_read_only_file_reads(brain: tuple[Path, str], tmp_path: Path) -> None:
    db, page = brain
    db.chmod(0o444)
    for command in read_commands(page, tmp_path):
        result = run("--db", str(db), *command)
        assert result.returncode == 0, (command, result.stderr)
    assert "read-only" in ingest(str(db), tmp_path)


@not_as_root
def test_a_database_in_a_read_only_folder_reads(
    brain: tuple[Path, str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    db, _ = brain
    folder = tmp_path_factory.mktemp("source")
    db.chmod(0o444)
    db.parent.chmod(0o555)  # no -shm can be made beside it: opened immutable
    assert run("--db", str(db), "status").returncode == 0
    assert "pass --timeout 10m" in run("--db", str(db), "recall", "kubectl", "-s", SCOPE).stdout
    assert "read-only" in ingest(str(db), folder)
