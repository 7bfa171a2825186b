"""Reverie installs without a checkout: a wheel built from the tree carries everything it reads.

The wheel is built by pip as ``pip install PATH`` builds it (an isolated build environment with
the build backend pyproject.toml names, from the package index or pip's cache), installed with
``--no-deps`` (the dependencies are those of the interpreter running the tests) into a folder
outside the checkout; the installed copy then
opens a brain, ingests the bundled sample week, dreams and recalls — reading its migrations,
data files and tokenizer from the install, not from ``src/``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SMOKE = """
import json, sys
from pathlib import Path
import reverie
from reverie import Reverie
from reverie.cli.demo import load_sample
assert Path(reverie.__file__).is_relative_to(Path(sys.argv[1])), reverie.__file__
with Reverie.open(Path(sys.argv[2]) / "brain.db") as rv:
    rv.ingest([e for e in load_sample() if e["scope"] == "acme/coder"])
    report = rv.dream("acme/coder")
    found = rv.recall("deploy to staging with kubectl", "acme/coder")
    print(json.dumps({"created": report.created, "items": len(found.items)}))
"""


def _pip(*args: str) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", *args],
        check=True,
        timeout=300,
    )


def test_a_wheel_installed_outside_the_checkout_runs(tmp_path: Path) -> None:
    _pip("wheel", "--no-deps", "-w", str(tmp_path / "dist"), str(ROOT))
    [wheel] = (tmp_path / "dist").glob("reverie-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in (
        "reverie/py.typed",
        "reverie/store/migrations/0001_initial.sql",
        "reverie/data/sample_episodes.jsonl",
        "reverie/data/minilm/tokenizer.json",
        "reverie/server/static/index.html",
        "reverie/cli/help_index.json",
    ):
        assert needed in names, needed
    entry = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "reverie = reverie.cli:main" in zipfile.ZipFile(wheel).read(entry).decode()

    site = tmp_path / "site"
    _pip("install", "--no-deps", "--no-index", "--target", str(site), str(wheel))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"PYTHONPATH": str(site)}
    done = subprocess.run(
        [sys.executable, "-c", SMOKE, str(site), str(tmp_path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert '"created": ' in done.stdout and '"items": 0' not in done.stdout
