"""The process the crash harness kills: ingest and dream in a loop, announcing every step.

``python -m reverie.bench.crash_child DB SEED ROUND`` ingests batches of synthetic episodes and
runs cycles on one scope. It prints ``acked <id>`` for every episode once ``ingest`` has returned
(so the harness knows what was acknowledged), and ``phase <name>`` at every phase of the cycle and
between the writes of its commit — then pauses a moment there, so a SIGKILL sent on that line
lands inside that phase. It never exits on its own before the harness kills it or ``ROUNDS``
batches are done.
"""

from __future__ import annotations

import sys
import time
from datetime import timedelta

from reverie.config import Config, DreamConfig
from reverie.engine import Reverie
from reverie.synth import DEFAULT_START, synthetic_episodes

__all__ = ["BATCH", "ROUNDS", "SCOPE", "main"]

SCOPE = "crash/agent-0"
BATCH = 40
ROUNDS = 6
PAUSE_S = 0.02


def _announce(phase: str) -> None:
    print(f"phase {phase}", flush=True)
    time.sleep(PAUSE_S)


def _batch(seed: int, round_no: int, step: int) -> list[dict[str, object]]:
    rows = list(synthetic_episodes(BATCH, seed=seed * 1000 + round_no * 10 + step))
    for row in rows:
        row["scope"] = SCOPE
    return rows


def main(argv: list[str]) -> int:
    db, seed, round_no = argv[0], int(argv[1]), int(argv[2])
    config = Config(dream=DreamConfig(max_episodes_per_cycle=25))
    with Reverie.open(db, config=config) as rv:
        rv_hooked = Reverie(rv.store, config=config, on_phase=_announce)
        for step in range(ROUNDS):
            rows = _batch(seed, round_no, step)
            rv.ingest(rows)
            for row in rows:
                print(f"acked {row['id']}", flush=True)
            _announce("ingested")
            now = DEFAULT_START + timedelta(days=round_no * ROUNDS + step)
            rv_hooked.dream(SCOPE, now=now)
            print("dreamt", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
