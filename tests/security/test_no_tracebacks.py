"""A hostile environment gets one red line and exit 2, never a traceback.

The real console script runs in a subprocess (``main()``, as a user would run it) against real
files: corrupt databases, a file size limit hit midway through an ingest, a target that
cannot be written, and a row nested past the interpreter's recursion limit.
"""

from __future__ import annotations

import json
import os
import resource
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from reverie import Reverie
from reverie.cli.common import edge_error
from reverie.models import Episode

CODE = "from reverie.cli.app import main; main()"


def run(*args: str, limit_bytes: int | None = None) -> subprocess.CompletedProcess[str]:
    def limit() -> None:  # in the child: a full disk, as far as SQLite can tell
        if limit_bytes is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))

    return subprocess.run(
        [sys.executable, "-c", CODE, *args],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=limit,
        check=False,
    )


def one_red_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


@pytest.fixture
def good_db(tmp_path: Path) -> Path:
    db = tmp_path / "good.db"
    with Reverie.open(db) as rv:
        rv.ingest([{"id": f"e{i}", "scope": "acme/coder", "situation": f"s{i}"} for i in range(3)])
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return db


def _truncated(good: Path, bad: Path) -> None:
    bad.write_bytes(good.read_bytes()[:5000])


def _text(_good: Path, bad: Path) -> None:
    bad.write_text("this is a text file, not a database\n", encoding="utf-8")


def _random(_good: Path, bad: Path) -> None:
    bad.write_bytes(os.urandom(20_000))


def _header_only(good: Path, bad: Path) -> None:
    bad.write_bytes(good.read_bytes()[:100])


@pytest.mark.parametrize("damage", [_truncated, _text, _random, _header_only])
@pytest.mark.parametrize("command", [["status"], ["pages", "-s", "acme/coder"], ["verify"]])
def test_a_damaged_database_file_is_one_red_line(
    good_db: Path, tmp_path: Path, damage: object, command: list[str]
) -> None:
    bad = tmp_path / "bad.db"
    damage(good_db, bad)  # type: ignore[operator]
    line = one_red_line(run("--db", str(bad), *command))
    assert str(bad) in line


def test_a_full_disk_midway_keeps_and_reports_what_was_stored(
    good_db: Path, tmp_path: Path
) -> None:
    source = tmp_path / "big.jsonl"
    record = {"scope": "acme/coder", "situation": "deploy " * 60, "action": "kubectl apply"}
    source.write_text(
        "".join(json.dumps({**record, "id": f"b{i}"}) + "\n" for i in range(3000)),
        encoding="utf-8",
    )
    result = run("--db", str(good_db), "ingest", str(source), limit_bytes=good_db.stat().st_size)
    line = one_red_line(result)
    assert "disk" in line
    assert "before the failure" in result.stdout
    stored = int(result.stdout.split("stored ")[1].split()[0])
    with Reverie.open(good_db) as rv:
        assert rv.status().episodes == 3 + stored


def test_exporting_into_proc_is_one_red_line(good_db: Path) -> None:
    one_red_line(run("--db", str(good_db), "export", "markdown", "-s", "acme/coder", "/proc/self"))


def test_a_row_nested_past_the_recursion_limit_is_one_red_line(tmp_path: Path) -> None:
    db = tmp_path / "deep.db"
    lesson = {"scope": "acme/coder", "situation": "deploy", "error": "TimeoutError: timed out",
              "outcome": "failure", "lesson": "wait for the rollout"}  # fmt: skip
    with Reverie.open(db) as rv:
        rv.ingest([{**lesson, "id": f"d{i}"} for i in range(3)])
        rv.dream("acme/coder")
        page = rv.pages("acme/coder")[0].id
    deep = '{"a": ' * 100_000 + "{}" + "}" * 100_000
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE episodes SET metadata = ? WHERE id = 'd1'", (deep,))
    conn.close()
    assert "nested too deeply" in one_red_line(run("--db", str(db), "why", page))


def test_verify_runs_the_database_integrity_check(tmp_path: Path) -> None:
    db = tmp_path / "z.db"
    with Reverie.open(db) as rv:
        rv.ingest(
            [{"scope": "acme/coder", "situation": "x" * 3000, "id": f"z{i}"} for i in range(80)]
        )
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    size = db.stat().st_size
    with db.open("r+b") as fh:
        fh.seek(size // 2 // 4096 * 4096)
        fh.write(b"\0" * 8192)
    result = run("--db", str(db), "verify")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "database integrity check failed" in result.stderr


def test_ingest_reports_an_item_the_store_cannot_take_and_stores_the_rest(
    tmp_path: Path,
) -> None:
    broken = Episode.parse({"id": "odd", "scope": "acme/coder", "situation": "s"})
    broken.tools = [object()]  # type: ignore[list-item]  # mutated after validation
    good = [Episode.parse({"id": f"g{i}", "scope": "acme/coder", "situation": "s"}) for i in (1, 2)]
    with Reverie.open(tmp_path / "b.db") as rv:
        result = rv.ingest([good[0], broken, good[1]])
        assert result.stored == 2
        assert [(e.index, e.field) for e in result.errors] == [(1, "item")]
        assert "cannot be stored" in result.errors[0].reason
        assert {e.id for e in rv.store.recent_episodes(rv.scopes()[0], 10)} == {"g1", "g2"}


def test_a_mutated_episode_is_still_held_to_the_metadata_limits(tmp_path: Path) -> None:
    episode = Episode.parse({"id": "m", "scope": "acme/coder", "situation": "s"})
    value: dict[str, object] = {}
    for _ in range(2000):
        value = {"a": value}
    episode.metadata = value
    with Reverie.open(tmp_path / "b.db") as rv:
        result = rv.ingest([episode])
    assert result.stored == 0 and result.errors[0].field == "metadata"


def test_sqlite_s_read_only_refusal_reads_as_what_to_do(good_db: Path) -> None:
    """The words SQLite uses for a read-only file (as root, chmod cannot make one, so the
    refusal is produced by a read-only connection) become the read-only hint."""
    conn = sqlite3.connect(f"file:{good_db}?mode=ro", uri=True)
    try:
        with pytest.raises(sqlite3.OperationalError) as refused:
            conn.execute("CREATE TABLE t (x)")
    finally:
        conn.close()
    message = str(edge_error(refused.value, str(good_db)))
    assert message.startswith(f"database {good_db}: the database is read-only")
