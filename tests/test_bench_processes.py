"""Benchmark children are read at once: one that fills its pipe never waits on another."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from reverie.bench.processes import communicate_all

WAITER = """
import sys, time, pathlib
marker = pathlib.Path(sys.argv[1])
deadline = time.monotonic() + 20
while not marker.exists():
    if time.monotonic() > deadline:
        sys.exit(3)  # the writer never finished: its pipe was not being read
    time.sleep(0.02)
print("waited")
"""
WRITER = """
import sys, pathlib
for _ in range(300):
    sys.stdout.write("x" * 1000 + "\\n")  # 300 KB: several pipes' worth
sys.stdout.flush()
pathlib.Path(sys.argv[1]).touch()
"""


def _spawn(code: str, marker: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", code, str(marker)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_child_that_fills_its_pipe_does_not_wait_for_the_ones_before_it(tmp_path: Path) -> None:
    marker = tmp_path / "written"
    procs = [_spawn(WAITER, marker), _spawn(WRITER, marker)]  # read one by one, this deadlocks
    outputs = communicate_all(procs)
    assert [p.returncode for p in procs] == [0, 0]
    assert outputs[0][0] == "waited\n"
    assert len(outputs[1][0].splitlines()) == 300


def test_no_children() -> None:
    assert communicate_all([]) == []
