"""Fuzzing the files around a brain: hostile write targets, broken archive bundles, damaged
database files.

- **Targets.** Every writer (the training export, the Markdown mirror, an archive bundle, the
  atomic writer itself) given a symlink, a dangling symlink, a FIFO, a folder, a device or a
  ``/proc`` path either writes a regular file or refuses with one clear error; the file a link
  points at keeps its bytes, a FIFO stays a FIFO, no temporary file is left behind
  (reverie.files).
- **Bundles.** A bundle missing, truncated anywhere, with bytes flipped anywhere, emptied,
  swapped for another scope's, turned into a folder, or re-compressed around altered content is
  named by every read of its lineage (:class:`~reverie.errors.ArchiveUnreadable`), and every
  multi-scope operation does the healthy scope and names the broken one.
- **Database files.** A database truncated anywhere, with zeros or random bytes written
  anywhere, cut to its header, replaced by text or with garbage appended: every command either
  works or ends in one red line with exit 2 (1 for ``verify`` finding damage), never a
  traceback.

Each example copies a template built once per module, so the examples stay cheap.
"""

from __future__ import annotations

import gzip
import os
import shutil
import sqlite3
import stat
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, given, settings
from typer.testing import CliRunner, Result

from reverie import Reverie
from reverie.cli.app import app
from reverie.dream.archive import Archive
from reverie.errors import ArchiveUnreadable, InvalidInput, ReverieError, ScopesFailed
from reverie.files import write_atomically
from reverie.memory.export import write_training
from tests.conftest import failed_deploys

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
ARCHIVED = T0 + timedelta(days=90)
BROKEN, HEALTHY = "acme/a", "acme/b"
SLOW = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture]


def cli(db: Path | str, *args: str) -> Result:
    return CliRunner().invoke(app, ["--db", str(db), *args])


def no_traceback(result: Result, codes: tuple[int, ...] = (0, 2)) -> None:
    """A command that ended as the CLI means it to: a known exit code, and for exit 2 one
    red line per failure and no traceback."""
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code in codes, (result.exit_code, result.output)
    assert "Traceback" not in result.output
    if result.exit_code == 2:
        assert result.stderr.strip().splitlines()[-1].startswith("error: "), result.stderr


def copy_brain(template: Path, into: Path) -> Path:
    """The template's database (and archive folder) copied into ``into``; the new db path."""
    for item in template.iterdir():
        if item.is_dir():
            shutil.copytree(item, into / item.name)
        else:
            shutil.copy2(item, into / item.name)
    return into / "b.db"


def checkpointed(db: Path) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


@pytest.fixture(scope="module")
def dreamt(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding ``b.db`` (two scopes dreamt, nothing archived) and ``page``, the id
    of acme/a's page."""
    folder = tmp_path_factory.mktemp("dreamt")
    with Reverie.open(folder / "b.db") as rv:
        for scope in (BROKEN, HEALTHY):
            rv.ingest(failed_deploys(scope, T0, scope[-1]), now=T0 + timedelta(days=1))
        rv.dream_all(now=T0 + timedelta(days=1))
        (folder / "page").write_text(rv.pages(BROKEN)[0].id, encoding="utf-8")
    checkpointed(folder / "b.db")
    return folder


@pytest.fixture(scope="module")
def archived(dreamt: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A folder holding ``b.db`` and ``archive/``: both scopes archived; acme/a's bundle."""
    folder = tmp_path_factory.mktemp("archived")
    db = copy_brain(dreamt, folder)
    with Reverie.open(db) as rv:
        run = Archive(rv.store).run(timedelta(days=30), ARCHIVED, apply=True)
    checkpointed(db)
    return folder, next(b.hash for b in run.bundles if b.scope.key == BROKEN)


# -- hostile write targets ---------------------------------------------------------------------

TARGETS = ["symlink", "dangling", "fifo", "folder", "device", "proc", "regular", "absent"]


def plant(kind: str, target: Path, victim: Path) -> Path:
    """Put a ``kind`` of thing at ``target``; the path the writer is given."""
    if kind == "symlink":
        target.symlink_to(victim)
    elif kind == "dangling":
        target.symlink_to(victim.with_name("nowhere"))
    elif kind == "fifo":
        os.mkfifo(target)
    elif kind == "folder":
        target.mkdir()
    elif kind == "regular":
        target.write_bytes(b"old")
    elif kind == "device":
        return Path("/dev/null")
    elif kind == "proc":
        return Path("/proc/self/status")
    return target


def held(folder: Path, victim: Path, target: Path, kind: str) -> None:
    """What a refused or a successful write must leave: the victim's bytes, a FIFO still a
    FIFO, a link still a link, and no temporary file anywhere under ``folder``."""
    assert victim.read_bytes() == b"precious"
    if kind == "fifo":
        assert stat.S_ISFIFO(os.lstat(target).st_mode)
    if kind in ("symlink", "dangling"):
        assert target.is_symlink()
    assert [p for p in folder.rglob("*") if p.name.endswith(".tmp")] == []


def _atomic(_db: Path, path: Path) -> Result | None:
    write_atomically(path, b"new")
    return None


def _training(db: Path, path: Path) -> Result | None:
    return cli(db, "export", "training", "--force", str(path))


def _mirror(db: Path, path: Path) -> Result | None:
    return cli(db, "export", "markdown", "-s", HEALTHY, str(path))


WRITERS: dict[str, Callable[[Path, Path], Result | None]] = {
    "atomic": _atomic,
    "training": _training,
    "mirror": _mirror,
}


@settings(max_examples=40, deadline=None, suppress_health_check=SLOW)
@given(writer=st.sampled_from(sorted(WRITERS)), kind=st.sampled_from(TARGETS),
       name=st.text(alphabet="abcé日 -_.", min_size=1, max_size=10))  # fmt: skip
def test_a_writer_writes_a_regular_file_or_refuses_and_touches_nothing_else(
    dreamt: Path, tmp_path_factory: pytest.TempPathFactory, writer: str, kind: str, name: str
) -> None:
    folder = tmp_path_factory.mktemp("target")
    db = copy_brain(dreamt, folder)
    victim = folder / "victim.txt"
    victim.write_bytes(b"precious")
    name = name.strip(" .") or "out"
    target = plant(kind, folder / f"t-{name}", victim)
    try:
        result = WRITERS[writer](db, target)
    except InvalidInput as exc:  # the atomic writer itself: a clear refusal naming the path
        assert str(target) in exc.reason
        result = None
    if result is not None:
        no_traceback(result)
        if result.exit_code == 2:
            assert str(target) in result.stderr.replace("\n", "")
    if kind in ("regular", "absent") and (result is None or result.exit_code == 0):
        assert target.is_file() or (writer == "mirror" and target.is_dir())
    if kind in ("symlink", "dangling", "fifo", "device", "proc"):
        assert result is None or result.exit_code == 2  # never written through
    if kind not in {"device", "proc"}:
        held(folder, victim, target, kind)


def test_a_link_planted_at_a_bundle_s_name_is_refused_and_the_episodes_stay(
    dreamt: Path, tmp_path: Path
) -> None:
    db = copy_brain(dreamt, tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"precious")
    with Reverie.open(db) as rv:
        planned = Archive(rv.store).run(timedelta(days=30), ARCHIVED)  # a dry run names them
        root = tmp_path / "archive"
        root.mkdir()
        first = planned.bundles[0]
        (root / f"{first.hash.removeprefix('sha256:')}.jsonl.gz").symlink_to(victim)
        result = cli(db, "archive", "--older-than", "30", "--apply", "--now", ARCHIVED.isoformat())
        no_traceback(result)
        assert result.exit_code == 2 and "symbolic link" in result.stderr
        assert rv.episode(
            f"{first.scope.key[-1]}0", tenant="acme"
        ).situation  # still hot, nothing lost
        others = [b.scope.key for b in Archive(rv.store).bundles()]
        assert first.scope.key not in others and len(others) == len(planned.bundles) - 1
    held(tmp_path, victim, root / f"{first.hash.removeprefix('sha256:')}.jsonl.gz", "symlink")


# -- broken archive bundles --------------------------------------------------------------------


def _damage_bundle(path: Path, other: Path, how: str, where: float) -> None:
    data = path.read_bytes()
    at = int(where * (len(data) - 1))
    if how == "missing":
        path.unlink()
    elif how == "truncated":
        path.write_bytes(data[:at])
    elif how == "flipped":
        path.write_bytes(data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1 :])
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "swapped":
        path.write_bytes(other.read_bytes())
    elif how == "folder":
        path.unlink()
        path.mkdir()
    elif how == "recompressed":  # a valid gzip of altered lines: decompresses, wrong hash
        text = gzip.decompress(data).replace(b"staging", b"prod")
        path.write_bytes(gzip.compress(text))


BUNDLE_DAMAGE = ["missing", "truncated", "flipped", "empty", "swapped", "folder", "recompressed"]


@settings(max_examples=20, deadline=None, suppress_health_check=SLOW)
@given(how=st.sampled_from(BUNDLE_DAMAGE), where=st.floats(0, 1))
def test_a_broken_bundle_is_named_by_every_read_and_the_other_scope_goes_on(
    archived: tuple[Path, str], tmp_path_factory: pytest.TempPathFactory, how: str, where: float
) -> None:
    template, bundle = archived
    folder = tmp_path_factory.mktemp("bundle")
    db = copy_brain(template, folder)
    files = sorted((folder / "archive").iterdir())
    mine = folder / "archive" / f"{bundle.removeprefix('sha256:')}.jsonl.gz"
    _damage_bundle(mine, next(f for f in files if f != mine), how, where)
    later = ARCHIVED + timedelta(days=1)
    with Reverie.open(db) as rv:
        with pytest.raises(ArchiveUnreadable) as unreadable:
            rv.why(rv.pages(BROKEN)[0].id)
        assert unreadable.value.bundle == bundle and "put that file back" in str(unreadable.value)
        with pytest.raises(ArchiveUnreadable):
            rv.episode("a0", tenant="acme")
        assert rv.why(rv.pages(HEALTHY)[0].id).episodes  # the healthy lineage reads
        with pytest.raises(ScopesFailed) as exported:
            write_training(rv.store, folder / "train.jsonl")
        assert list(exported.value.failures) == [BROKEN] and exported.value.done.rows == 1
        for scope in (BROKEN, HEALTHY):
            rv.ingest(failed_deploys(scope, later, f"new-{scope[-1]}"), now=later)
        with pytest.raises(ScopesFailed) as dreamt_all:
            rv.dream_all(now=later + timedelta(hours=1))
        assert [r.scope.key for r in dreamt_all.value.done] == [HEALTHY]
        assert [s.key for s in rv.store.pending_scopes()] == [BROKEN]
    no_traceback(cli(db, "why", (template / "page").read_text()))


# -- damaged database files --------------------------------------------------------------------


def _damage_db(path: Path, how: str, where: float, size: int, seed: bytes) -> None:
    data = path.read_bytes()
    at = int(where * len(data))
    if how == "truncated":
        path.write_bytes(data[:at])
    elif how == "zeros":
        path.write_bytes(data[:at] + b"\0" * size + data[at + size :])
    elif how == "random":
        noise = (seed * (size // max(len(seed), 1) + 1))[:size] or b"\x5a"
        path.write_bytes(data[:at] + noise + data[at + len(noise) :])
    elif how == "header-only":
        path.write_bytes(data[:100])
    elif how == "text":
        path.write_text("id,situation\n1,not a database\n", encoding="utf-8")
    elif how == "appended":
        path.write_bytes(data + seed * 100)


DB_DAMAGE = ["truncated", "zeros", "random", "header-only", "text", "appended"]
COMMANDS = [
    (["status"], (0, 2)),
    (["pages", "-s", HEALTHY], (0, 2)),
    (["recall", "deploying the api to staging", "-s", HEALTHY], (0, 2)),
    (["verify"], (0, 1, 2)),
]


@settings(max_examples=25, deadline=None, suppress_health_check=SLOW)
@given(
    how=st.sampled_from(DB_DAMAGE),
    where=st.floats(0, 1),
    size=st.sampled_from([1, 512, 4096, 8192, 65536]),
    seed=st.binary(min_size=1, max_size=16),
)
def test_a_damaged_database_file_works_or_is_one_red_line(
    dreamt: Path,
    tmp_path_factory: pytest.TempPathFactory,
    how: str,
    where: float,
    size: int,
    seed: bytes,
) -> None:
    folder = tmp_path_factory.mktemp("damaged")
    db = copy_brain(dreamt, folder)
    _damage_db(db, how, where, size, seed)
    for command, codes in [*COMMANDS, (["why", (dreamt / "page").read_text()], (0, 2))]:
        no_traceback(cli(db, *command), codes)
    source = folder / "one.jsonl"
    source.write_text('{"scope": "acme/b", "situation": "after the damage"}\n', encoding="utf-8")
    no_traceback(cli(db, "ingest", str(source)), (0, 1, 2))
    try:
        with Reverie.open(db) as rv:
            rv.status()
    except (ReverieError, sqlite3.Error):
        pass  # the library raises; the edges above turned the same failure into one line
