"""Files are written safely: a fresh temporary name, no link followed, only regular files
replaced, nothing left behind on a refusal (:func:`reverie.files.write_atomically`, used
by the training export, archive bundles and the Markdown mirror)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reverie.cli.app import app
from reverie.errors import InvalidInput
from reverie.files import write_atomically


def test_a_planted_link_at_the_old_temporary_name_is_left_alone(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious", encoding="utf-8")
    out = tmp_path / "train.jsonl"
    (tmp_path / "train.jsonl.tmp").symlink_to(victim)
    write_atomically(out, b"rows\n")
    assert out.read_bytes() == b"rows\n" and victim.read_text(encoding="utf-8") == "precious"
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "train.jsonl",
        "train.jsonl.tmp",
        "victim.txt",
    ]


def _link(path: Path, tmp_path: Path) -> None:
    (tmp_path / "elsewhere").write_text("keep", encoding="utf-8")
    path.symlink_to(tmp_path / "elsewhere")


def _fifo(path: Path, _tmp: Path) -> None:
    os.mkfifo(path)


def _folder(path: Path, _tmp: Path) -> None:
    path.mkdir()


@pytest.mark.parametrize(
    ("plant", "kind"),
    [(_link, "a symbolic link"), (_fifo, "a FIFO"), (_folder, "a folder")],
)
def test_a_target_that_is_not_a_regular_file_is_refused(
    tmp_path: Path, plant: Callable[[Path, Path], None], kind: str
) -> None:
    target = tmp_path / "out.jsonl"
    plant(target, tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(InvalidInput, match=kind):
        write_atomically(target, b"x")
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no temporary left behind
    if kind == "a symbolic link":
        assert (tmp_path / "elsewhere").read_text(encoding="utf-8") == "keep"


def test_a_device_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="a device"):
        write_atomically(Path("/dev/null"), b"x")


def test_export_training_into_a_folder_is_a_clear_error(tmp_path: Path) -> None:
    db = tmp_path / "b.db"
    assert CliRunner().invoke(app, ["--db", str(db), "init"]).exit_code == 0
    target = tmp_path / "out"
    target.mkdir()
    result = CliRunner().invoke(app, ["--db", str(db), "export", "training", str(target)])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: invalid path: ") and "is a folder" in result.stderr
    assert (
        list(target.iterdir()) == []
        and [p.name for p in tmp_path.iterdir() if ".tmp" in p.name] == []
    )


def test_a_failed_write_leaves_no_temporary(tmp_path: Path) -> None:
    def crash(_tmp: Path) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_atomically(tmp_path / "out", b"x", before_replace=crash)
    assert list(tmp_path.iterdir()) == []


def test_export_training_refuses_to_replace_a_file_unless_forced(tmp_path: Path) -> None:
    db = tmp_path / "b.db"
    assert CliRunner().invoke(app, ["--db", str(db), "init"]).exit_code == 0
    target = tmp_path / "train.jsonl"
    target.write_text("kept\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["--db", str(db), "export", "training", str(target)])
    assert result.exit_code == 2 and "pass --force to replace it" in result.stderr
    assert target.read_text(encoding="utf-8") == "kept\n"
    forced = ["--db", str(db), "export", "training", "--force", str(target)]
    assert CliRunner().invoke(app, forced).exit_code == 0
    assert target.read_text(encoding="utf-8") == ""
