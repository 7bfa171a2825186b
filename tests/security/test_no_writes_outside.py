"""No path outside the data directory is ever written (DESIGN, habit 12).

A full run (:mod:`tests.security.fs_audit_run`: demo, CLI, model path, Markdown export and import,
archive, training export, HTTP requests) runs in a child process whose HOME, TMPDIR, XDG folders
and working directory are fresh, empty folders. Two independent checks: the child's audit hook
saw no write outside the data directory, and the fresh folders are still empty afterwards.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

RUNNER = Path(__file__).with_name("fs_audit_run.py")
ALLOWED_DEVICES = {"/dev/null", "/dev/tty"}


def test_a_full_run_writes_only_inside_the_data_directory(tmp_path: Path) -> None:
    data, home, tmp, cwd = (tmp_path / name for name in ("data", "home", "tmp", "cwd"))
    for folder in (data, home, tmp, cwd):
        folder.mkdir()
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "TMPDIR": str(tmp),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "PYTHONDONTWRITEBYTECODE": "1",
        # the lexical path: ONNX Runtime itself keeps a device id under
        # ~/.cache/Microsoft/DeveloperTools/.onnxruntime whenever it loads (docs/security.md)
        "REVERIE_EMBEDDER": "none",
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
    }
    done = subprocess.run(
        [sys.executable, str(RUNNER), str(data)],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    written = json.loads(done.stdout.strip().splitlines()[-1])
    root = str(data.resolve())
    inside = [root, *ALLOWED_DEVICES]
    outside = [p for p in written if p not in inside and not p.startswith(root + os.sep)]
    assert outside == []
    assert len(written) > 20  # the audit saw the run's own writes
    for folder in (home, tmp, cwd):
        assert list(folder.rglob("*")) == [], folder
