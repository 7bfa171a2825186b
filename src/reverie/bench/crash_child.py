"""The process the crash harness kills: ingest and dream in a loop, announcing every step.

``python -m reverie.bench.crash_child DB SEED ROUND`` ingests batches of synthetic episodes and
runs cycles on one scope. It prints ``acked <id>`` for every episode once ``ingest`` has returned
(so the harness knows what was acknowledged), and ``phase <name>`` at every phase of the cycle and
between the writes of its commit — then pauses a moment there, so a SIGKILL sent on that line
lands inside that phase. It never exits on its own before the harness kills it or ``ROUNDS``
batches are done.

``python -m reverie.bench.crash_child DB SEED ROUND LANE TARGET`` also runs the lane's
steps after every cycle — the model path, the Markdown export, the cold tier; see
:mod:`reverie.bench.crash_lanes` — and pauses only at ``TARGET``, the phase it will be killed at.
"""

from __future__ import annotations

import sys
import time
from contextlib import ExitStack
from datetime import timedelta
from pathlib import Path

from reverie.bench.crash_lanes import Lane, mirror_dir, model_lane
from reverie.bench.synth import DEFAULT_START, synthetic_episodes
from reverie.config import Config, DreamConfig
from reverie.engine import Reverie
from reverie.models import Scope
from reverie.store.sqlite import SQLiteStore

__all__ = ["BATCH", "ROUNDS", "SCOPE", "main"]

SCOPE = "crash/agent-0"
BATCH = 40
ROUNDS = 6
PAUSE_S = 0.02


_PAUSE_AT: list[str] = []  # pause only at these phases (empty: at every phase)


def _announce(phase: str) -> None:
    print(f"phase {phase}", flush=True)
    if not _PAUSE_AT or phase in _PAUSE_AT:
        time.sleep(PAUSE_S)


def _batch(seed: int, round_no: int, step: int) -> list[dict[str, object]]:
    rows = list(synthetic_episodes(BATCH, seed=seed * 1000 + round_no * 10 + step))
    for row in rows:
        row["scope"] = SCOPE
    return rows


def main(argv: list[str]) -> int:
    db, seed, round_no = argv[0], int(argv[1]), int(argv[2])
    lane_name = argv[3] if len(argv) > 3 else None
    _PAUSE_AT[:] = argv[4:5]
    # a model is called for every new problem, however small: the model lane's kills fall
    # between calls of one cycle (reinforcement until a page's evidence grows stays on)
    config = Config(dream=DreamConfig(max_episodes_per_cycle=25, model_min_support=1))
    with Reverie.open(db, config=config) as rv, ExitStack() as stack:
        assert isinstance(rv.store, SQLiteStore)
        distiller = None
        if lane_name == "model":
            distiller = stack.enter_context(model_lane(rv.store, _announce))
        lane = Lane(rv.store, Scope.parse(SCOPE), mirror_dir(Path(db)), _announce)
        rv_hooked = Reverie(rv.store, config=config, on_phase=_announce, distiller=distiller)
        for step in range(ROUNDS):
            rows = _batch(seed, round_no, step)
            rv.ingest(rows)
            for row in rows:
                print(f"acked {row['id']}", flush=True)
            _announce("ingested")
            now = DEFAULT_START + timedelta(days=round_no * ROUNDS + step)
            report = rv_hooked.dream(SCOPE, now=now)
            print(f"dreamt calls={report.model_calls} hits={report.cache_hits}", flush=True)
            if lane_name is not None:
                lane.after_cycle(now)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
