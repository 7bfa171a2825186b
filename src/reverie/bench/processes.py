"""Running the child processes of a benchmark: their output is read all at once.

Reading children one after another (``proc.communicate()`` in a loop) stalls every child but the
first as soon as it has written a pipe's worth of output (64 KiB on Linux): its next write blocks
until the children before it exit. ``reverie bench scale`` measured exactly that — a second worker
blocked on its event log after ~113 scopes, sat on its lease until it expired, and the run read as
"two workers slower than one" — and the soak's writers lost time the same way.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

__all__ = ["communicate_all"]


def communicate_all(procs: Sequence[subprocess.Popen[str]]) -> list[tuple[str, str]]:
    """``(stdout, stderr)`` of every process in ``procs``, in order, read concurrently (one
    thread per process) so that none ever waits on a full pipe; returns once all have exited."""
    if not procs:
        return []
    with ThreadPoolExecutor(len(procs), thread_name_prefix="bench-child") as pool:
        outputs = list(pool.map(lambda proc: proc.communicate(), procs))
    return [(out or "", err or "") for out, err in outputs]
