"""Every CLI command, every option that takes a value, hostile values: never a traceback.

The command tree is read from the app itself, so a new command or option is fuzzed the day it
lands. Each option gets values drawn (seeded) from a pool of the inputs that broke CLIs before:
durations past the calendar, dates at its ends, NUL and control characters, huge numbers, paths
to directories and missing files, ids of nothing. The promise: the command succeeds, or says
what to fix in one line and exits 2 (1 only for ``ingest``'s "some lines failed"), and with
``--json`` an error is JSON on stdout.

Commands that serve or loop until stopped (``serve``, ``mcp``, ``daemon``, ``worker``), run
benchmarks, or call a model provider are not run here; their option parsing is the same code.

Every path a value can name stays under the test's own temporary folder: commands that write
(``export``, ``hook … install``) write where they are told, and the suite may run as root.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from reverie import Reverie
from reverie.cli.app import app
from reverie.cli.demo import load_sample

LONG_RUNNING = {"serve", "mcp", "daemon", "worker", "bench", "demo", "doctor"}
HOSTILE = [
    "",
    " ",
    "\x00",
    "a\x00b",
    "\r\n",
    "-1",
    "0",
    "99999999999999999999999",
    "1e309",
    "nan",
    "-inf",
    "9999999999d",
    "100000000w",
    "99999-01-01",
    "9999-12-31T23:59:59",
    "0001-01-01T00:00:00",
    "2026-02-30",
    "../../../../traversed",  # from the test's working folder, four deep: still in its tmp
    "acme/coder/x/y",
    "acme/",
    "x" * 5000,
    "\u202e\U0001f4a5",
    "--json",
]
DRAWS_PER_OPTION = 5


def _walk(command: Any, path: list[str]) -> Iterator[tuple[list[str], Any]]:
    if hasattr(command, "commands"):
        for name, child in command.commands.items():
            yield from _walk(child, [*path, name])
    else:
        yield path, command


def _commands() -> list[tuple[list[str], Any]]:
    root = typer.main.get_command(app)
    return [(p, c) for p, c in _walk(root, []) if p[0] not in LONG_RUNNING]


def _fill(name: str, where: Path) -> str:
    """A plausible value for a required argument."""
    plausible = {
        "file": str(where / "episodes.jsonl"),
        "query": "how do I deploy",
        "directory": str(where / "out"),
        "out": str(where / "training.jsonl"),
        "embedder": "hashing",
    }
    return plausible.get(name, "pg_0000000000000000")


@pytest.fixture(scope="module")
def brain(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("cli-fuzz")
    rv = Reverie.open(where / "brain.db")
    rv.ingest(load_sample())
    rv.dream("acme/coder")
    rv.close()
    (where / "episodes.jsonl").write_text(
        json.dumps({"scope": "acme/coder", "situation": "s", "action": "a", "outcome": "success"})
        + "\n",
        encoding="utf-8",
    )
    (where / "a-directory").mkdir()
    return where


def _cases(path: list[str], command: Any, where: Path) -> Iterator[list[str]]:
    rng = random.Random(" ".join(path))
    arguments = [p for p in command.params if p.param_type_name == "argument"]
    base = [_fill(p.name, where) for p in arguments if p.required]
    scoped = any(p.param_type_name == "option" and "--scope" in p.opts for p in command.params)
    known = ["--scope", "acme/coder"] if scoped else []  # reach past the scope's checks
    pool = [*HOSTILE, str(where / "a-directory"), str(where / "missing" / "file")]
    for param in command.params:
        if param.param_type_name == "option" and not param.is_flag and param.opts[0] != "--db":
            for value in rng.sample(pool, DRAWS_PER_OPTION):
                scope = [] if "--scope" in param.opts else known
                yield [*path, *base, *scope, param.opts[0], value]
    for index in range(len(base)):
        for value in rng.sample(pool, DRAWS_PER_OPTION):
            args = list(base)
            args[index] = value
            yield [*path, *args, *known]


@pytest.mark.timeout(600)
@pytest.mark.parametrize(
    ("path", "command"), _commands(), ids=lambda v: " ".join(v) if isinstance(v, list) else ""
)
def test_no_hostile_option_value_gives_a_traceback(
    brain: Path, path: list[str], command: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(brain / "home"))  # the hook installer writes under it
    deep = brain / "a" / "b" / "c" / "d"
    deep.mkdir(parents=True, exist_ok=True)
    monkeypatch.chdir(deep)  # "../../../../x" is brain/x
    runner = CliRunner()
    for args in _cases(path, command, brain):
        result = runner.invoke(app, ["--db", str(brain / "brain.db"), *args])
        shown = f"reverie {' '.join(repr(a)[:60] for a in args)}"
        assert result.exception is None or isinstance(result.exception, SystemExit), (
            f"{shown} raised {result.exception!r}"
        )
        assert "Traceback" not in result.output + result.stderr, shown
        allowed = {0, 1, 2} if path[0] == "ingest" or path[-1] == "doctor" else {0, 2}
        assert result.exit_code in allowed, f"{shown} exited {result.exit_code}"
        if result.exit_code == 2 and "--json" in args[len(path) :] and result.stdout.strip():
            assert "error" in json.loads(result.stdout), shown
