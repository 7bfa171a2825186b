"""``reverie bench startup``: what it costs to start, and how far a call travels.

Start-up is timed in fresh interpreters, each against ``python -c pass`` in the same run (the
baseline, so a busy machine shifts both): ``import reverie`` and ``reverie --help``. Each child
also reports what it loaded: modules in all, Reverie's own, and which optional dependencies
(a list of extras' packages) came with it; none should.

A call's path is the distinct Reverie modules whose functions run while it runs (a
``sys.setprofile`` trace): ``remember`` of one episode down to its row, and one lexical recall.
Fewer modules means a shorter way for a reader to follow, not only a faster one.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from types import FrameType
from typing import Any

from reverie.engine import Reverie

__all__ = ["OPTIONAL", "Startup", "call_paths", "run_startup"]

OPTIONAL = (
    "psycopg", "pgvector", "numpy", "onnxruntime", "tokenizers", "sentence_transformers",
    "torch", "fastapi", "uvicorn", "starlette", "httpx", "mcp", "anthropic", "openai",
)  # fmt: skip
"""Packages of extras (and heavy ones of the core) that a plain import must not load."""

_REPORT = (
    "\nimport json, sys; mods = list(sys.modules); print(json.dumps({'modules': len(mods),"
    " 'reverie': sum(m.split('.')[0] == 'reverie' for m in mods),"
    f" 'optional': sorted({{m.split('.')[0] for m in mods}} & set({OPTIONAL!r}))}}))"
)
_HELP = (
    "import sys; sys.argv = ['reverie', '--help']\nfrom reverie.cli import main\n"
    "try:\n    main()\nexcept SystemExit:\n    pass\n"
)
COMMANDS: dict[str, tuple[list[str], str]] = {
    "python -c pass": (["-c", "pass"], "pass"),
    "import reverie": (["-c", "import reverie"], "import reverie"),
    "reverie --help": (["-m", "reverie", "--help"], _HELP),
}
"""What is timed, and the same start-up run again to count what it loaded."""


@dataclass
class Startup:
    """Median seconds of each command over ``runs`` fresh interpreters, what each loaded, and
    the Reverie modules each traced call entered."""

    runs: int
    seconds: dict[str, float] = field(default_factory=dict)
    over_baseline: dict[str, float] = field(default_factory=dict)
    loaded: dict[str, dict[str, Any]] = field(default_factory=dict)
    paths: dict[str, list[str]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _child(args: list[str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, *args], check=True, capture_output=True, text=True)
    return time.perf_counter() - started, done.stdout


@contextmanager
def _entered() -> Iterator[set[str]]:
    """The names of the Reverie modules whose code runs inside the block."""
    seen: set[str] = set()

    def profile(frame: FrameType, event: str, _arg: object) -> None:
        if event == "call":
            name = frame.f_globals.get("__name__", "")
            if name.startswith("reverie") and name != __name__:  # not the calls' own lambdas
                seen.add(name)

    sys.setprofile(profile)
    try:
        yield seen
    finally:
        sys.setprofile(None)


def call_paths() -> dict[str, list[str]]:
    """The Reverie modules ``remember`` (one episode, to its row) and a lexical ``recall``
    enter, on a warm in-memory brain (the first calls' one-time set-up is not traced)."""
    now = datetime(2026, 6, 1, tzinfo=UTC)
    episode = {"scope": "acme/coder", "situation": "kubectl apply times out", "action": "retry"}
    with Reverie.open(":memory:", embedder=None) as rv:
        rv.remember({**episode, "id": "warm"}, now=now)
        rv.recall("kubectl timeout", "acme/coder", now=now)
        calls: dict[str, Callable[[], object]] = {
            "remember": lambda: rv.remember({**episode, "id": "e1"}, now=now),
            "recall (lexical)": lambda: rv.recall("kubectl apply timeout", "acme/coder", now=now),
        }
        paths = {}
        for name, call in calls.items():
            with _entered() as seen:
                call()
            paths[name] = sorted(seen)
    return paths


def run_startup(runs: int = 5) -> Startup:
    """Each command ``runs`` times, interleaved so that load on the machine falls on all."""
    result = Startup(runs=runs)
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(runs):
        for name, (args, _code) in COMMANDS.items():
            times[name].append(_child(args)[0])
    base = statistics.median(times["python -c pass"])
    for name, (_args, code) in COMMANDS.items():
        result.seconds[name] = round(statistics.median(times[name]), 4)
        result.over_baseline[name] = round(statistics.median(times[name]) - base, 4)
        result.loaded[name] = json.loads(_child(["-c", code + _REPORT])[1].splitlines()[-1])
    result.paths = call_paths()
    return result
