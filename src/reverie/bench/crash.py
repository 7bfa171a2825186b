"""Crash injection: kill a real dreaming process with SIGKILL at chosen points, then check.

Each round starts :mod:`reverie.bench.crash_child` on one SQLite file, reads what it announces,
and sends SIGKILL when it reaches the round's target — inside the commit transaction (between its
writes), between phases of the cycle, or right after an ingest. Then the harness opens the file
itself and checks DESIGN.md's invariants:

- the database passes ``PRAGMA integrity_check``;
- every acknowledged episode is stored (no write lost);
- every consolidation mark names a committed cycle (no half-applied cycle), so no episode is
  consolidated twice or by a cycle that did not happen;
- every revision ever seen is still there with the same hash (no page or revision lost), every
  revision a cycle wrote belongs to a recorded cycle, and every citation names a stored episode;
- the checkpoint never passes an eligible episode that is not consolidated.

At the end it dreams until nothing is left and checks that every eligible episode was consolidated
exactly once. Rounds are reproducible from the seed.

There are two *lanes* (:mod:`reverie.bench.crash_lanes`), each on its own database: the
extractive lane and the model lane (the LLM distiller against the local fake model server). In
both the child also exports the Markdown mirror and archives old episodes after every cycle, so
rounds also kill between model calls, during the export and during archiving; after every kill
:func:`check_mirror` and :func:`check_archive` run beside :func:`check_store`, and no model input
whose answer was already cached may be sent to the model again.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path

from reverie.bench.crash_child import SCOPE
from reverie.bench.crash_erase import check_erasures, erased_ids, stale_revisions, tombstoned
from reverie.bench.crash_lanes import (
    LANE_TARGETS,
    LANES,
    check_archive,
    check_mirror,
    mirror_dir,
    model_lane,
)
from reverie.bench.synth import DEFAULT_START
from reverie.config import DreamConfig
from reverie.dream.boilerplate import Boilerplate, boilerplate_of
from reverie.engine import Reverie
from reverie.models import Episode, Scope
from reverie.store.sqlite import SQLiteStore

__all__ = ["ALL_TARGETS", "TARGETS", "CrashResult", "check_store", "run_crash"]

TARGETS = (
    "ingested", "collect", "cluster", "distill", "validate", "apply",
    "checkpoint-checked", "pages-written", "episodes-marked", "cycle-recorded",
)  # fmt: skip
"""Where a round may kill the child; the last four lie inside the commit transaction."""
ALL_TARGETS = TARGETS + LANE_TARGETS
"""With lanes, also between model calls, during the Markdown export and during archiving."""
CHILD_TIMEOUT_S = 60.0


@dataclass
class Observed:
    """What the harness has seen so far and must never see disappear."""

    acked: set[str] = field(default_factory=set)
    revisions: set[tuple[str, int, str]] = field(default_factory=set)
    answered: set[str] = field(default_factory=set)  # model inputs whose answer is cached
    repaid: list[str] = field(default_factory=list)  # inputs sent to the model again
    erasing: set[str] = field(default_factory=set)  # episodes an erasure was started for


@dataclass
class CrashResult:
    kills: int = 0
    completed: int = 0
    by_target: Counter[str] = field(default_factory=Counter)
    violations: list[str] = field(default_factory=list)
    episodes: int = 0
    consolidated: int = 0
    seconds: float = 0.0
    by_lane: Counter[str] = field(default_factory=Counter)
    model_calls: int = 0
    cache_hits: int = 0

    @property
    def passed(self) -> bool:
        return not self.violations


def _eligible(ep: Episode, config: DreamConfig, boilerplate: Boilerplate) -> bool:
    """Eligible by importance or lesson alone (recurrence may make more eligible; never fewer);
    a lesson that may be boilerplate of the brain makes nothing eligible
    (:func:`_may_be_filler`)."""
    lesson = bool(ep.lesson and not boilerplate.is_stop(ep.lesson))
    return (ep.importance or 0) >= config.importance_threshold or lesson


def _may_be_filler(store: SQLiteStore, scope: Scope, config: DreamConfig) -> Boilerplate:
    """The lessons a cycle may have judged boilerplate: a cycle judged them on the episodes it
    saw, which kills, erasures and later arrivals have changed since, so the check takes every
    phrase spread over half the cycle's threshold now (reverie.dream.boilerplate)."""
    half = replace(config, boilerplate_spread=config.boilerplate_spread / 2)
    return boilerplate_of(store, scope, half)


def _all_episodes(store: SQLiteStore, scope: Scope) -> list[Episode]:
    return store.recent_episodes(scope, 10_000_000)


def check_store(store: SQLiteStore, scope: Scope, seen: Observed) -> list[str]:
    """Every invariant violation in ``store`` given what was ``seen`` before; updates ``seen``."""
    problems: list[str] = []
    if (verdict := store.integrity_check()) != "ok":
        problems.append(f"integrity_check: {verdict}")
    episodes = _all_episodes(store, scope)
    ids = {e.id for e in episodes}
    if lost := seen.acked - ids - erased_ids(store):  # an erasure's receipt names its own
        problems.append(f"{len(lost)} acknowledged episode(s) lost, e.g. {sorted(lost)[:3]}")
    committed = {c.id for c in store.cycles(scope, limit=1_000_000) if c.undone_at is None}
    orphans = [e.id for e in episodes if e.consolidated_in and e.consolidated_in not in committed]
    if orphans:
        problems.append(f"{len(orphans)} mark(s) name no committed cycle, e.g. {orphans[:3]}")
    problems += _check_pages(store, scope, seen, ids)
    checkpoint = store.checkpoint(scope)
    config = DreamConfig()
    stops = _may_be_filler(store, scope, config)
    behind = [
        e.id
        for e in episodes
        if not e.consolidated_in and _eligible(e, config, stops) and (e.seq or 0) <= checkpoint
    ]
    if behind:
        problems.append(f"checkpoint {checkpoint} passed unconsolidated eligible {behind[:3]}")
    return problems


REVISION_KEYS = (
    "SELECT r.page_id, r.number, r.hash, r.author, r.cycle_id FROM revisions r"
    " JOIN pages p ON p.id = r.page_id WHERE p.scope_key = ?"
)
"""Every revision of a scope's pages as stored, nothing decoded: what the check compares across
kills (a revision rewritten in place shows as a changed hash)."""


def _check_pages(store: SQLiteStore, scope: Scope, seen: Observed, ids: set[str]) -> list[str]:
    problems: list[str] = []
    now: set[tuple[str, int, str]] = set()
    cycles = {c.id for c in store.cycles(scope, limit=1_000_000)}
    for page_id, number, digest, author, cycle_id in store.read(REVISION_KEYS, (scope.key,)):
        now.add((page_id, number, digest))
        if author == "cycle" and cycle_id not in cycles:
            problems.append(f"revision {page_id}#{number} of unrecorded cycle")
    for page in store.pages(scope, None):
        if missing := set(page.citations) - ids:
            problems.append(f"page {page.id} cites missing episodes {sorted(missing)[:3]}")
    if lost := seen.revisions - now - tombstoned(store):  # erased: its tombstone says so
        problems.append(f"{len(lost)} revision(s) lost or changed, e.g. {sorted(lost)[:2]}")
    seen.revisions |= now
    return problems


def _kill_at(  # noqa: PLR0913 (one crash-test round, called positionally by tests/test_crash.py)
    db: Path,
    seed: int,
    round_no: int,
    target: str,
    nth: int,
    seen: Observed,
    lane: str | None = None,
    result: CrashResult | None = None,
) -> bool:
    """Run one child; SIGKILL it at the ``nth`` time it reaches ``target``. True if killed."""
    cmd = [sys.executable, "-m", "reverie.bench.crash_child", str(db), str(seed), str(round_no)]
    cmd += [lane, target] if lane else []
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, bufsize=1) as proc:
        assert proc.stdout is not None
        hits, deadline = 0, time.monotonic() + CHILD_TIMEOUT_S
        for line in proc.stdout:
            word, _, rest = line.strip().partition(" ")
            if word == "acked":
                seen.acked.add(rest)
            elif word == "erasing":
                seen.erasing.add(rest)
            _model_line(word, rest, seen, result or CrashResult())
            hits += word == "phase" and rest == target
            if hits >= nth or time.monotonic() > deadline:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()
                return True
        proc.wait()
    return False


def _model_line(word: str, rest: str, seen: Observed, result: CrashResult) -> None:
    """Follow the model lane's ``called`` / ``cached`` / ``dreamt`` lines (invariant 2)."""
    if word == "called":
        result.model_calls += 1
        if rest in seen.answered:
            seen.repaid.append(rest)
    elif word == "cached":
        seen.answered.add(rest)
    elif word == "dreamt" and "hits=" in rest:
        result.cache_hits += int(rest.rpartition("hits=")[2] or 0)


def _settle(db: Path, result: CrashResult, seen: Observed, lane: str | None = None) -> None:
    """Dream until quiet, then check every eligible episode was consolidated exactly once."""
    with Reverie.open(db) as opened, ExitStack() as stack:
        store = opened.store
        assert isinstance(store, SQLiteStore)
        rv = opened
        if lane == "model":

            def tell(line: str) -> None:
                word, _, rest = line.partition(" ")
                _model_line(word, rest, seen, result)

            rv = Reverie(store, distiller=stack.enter_context(model_lane(store, _quiet, tell)))
        for day in range(1000):
            if rv.dream(SCOPE, now=DEFAULT_START + timedelta(days=5000 + day)).scanned == 0:
                break
        if left := rv.finish_erasures():  # what a kill after an erasure's commit left to do
            result.violations.append(f"{len(left)} erasure(s) could not be finished")
        scope = Scope.parse(SCOPE)
        result.violations += _lane_problems(store, db, seen, lane)
        episodes = _all_episodes(store, scope)
        config = DreamConfig()
        stops = _may_be_filler(store, scope, config)
        never = [e.id for e in episodes if _eligible(e, config, stops) and not e.consolidated_in]
        if never:
            result.violations.append(f"{len(never)} eligible episode(s) never consolidated")
        result.episodes += len(episodes)
        result.consolidated += sum(1 for e in episodes if e.consolidated_in)


def _quiet(_phase: str) -> None:
    """No announcements while settling in this process."""


def _lane_problems(store: SQLiteStore, db: Path, seen: Observed, lane: str | None) -> list[str]:
    """:func:`check_store`, and for a lane the mirror, the cold tier and the response cache."""
    scope = Scope.parse(SCOPE)
    found = check_store(store, scope, seen)
    if lane is not None:
        stale = frozenset(stale_revisions(store))
        found += check_mirror(store, mirror_dir(db), stale) + check_archive(store, scope)
        found += check_erasures(store, scope, seen.erasing)
    if seen.repaid:
        found.append(f"{len(seen.repaid)} cached model input(s) sent again, e.g. {seen.repaid[0]}")
        seen.repaid.clear()
    return found


def _fresh_db(folder: Path, seed: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / f"crash-{seed}.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    Reverie.open(db).close()
    return db


def _pick_lane(rng: random.Random, target: str) -> str:
    return "model" if target.startswith("model-") else rng.choice(LANES)


def run_crash(kills: int, workdir: Path, *, seed: int = 0, lanes: bool = True) -> CrashResult:
    """``kills`` rounds of run-and-SIGKILL, checked after each; then settle.

    With ``lanes`` (the default) rounds are spread over the extractive and the model lane, each on
    its own database under ``workdir/lane-*``, and kill at every point of :data:`ALL_TARGETS`;
    without, one database and the cycle's points (:data:`TARGETS`) only.
    """
    workdir.mkdir(parents=True, exist_ok=True)
    names: list[str | None] = [*LANES] if lanes else [None]
    dbs: dict[str | None, Path] = {}
    for name in names:
        folder = workdir / f"lane-{name}-{seed}" if name else workdir
        if name:
            shutil.rmtree(folder, ignore_errors=True)
        dbs[name] = _fresh_db(folder, seed)
    seen = {name: Observed() for name in names}
    rng, result = random.Random(seed), CrashResult()
    started = time.perf_counter()
    for round_no in range(kills):
        target = rng.choice(ALL_TARGETS if lanes else TARGETS)
        lane = _pick_lane(rng, target) if lanes else None
        db, observed = dbs[lane], seen[lane]
        killed = _kill_at(db, seed, round_no, target, rng.randint(1, 4), observed, lane, result)
        result.kills += killed
        result.completed += not killed
        result.by_target[target] += killed
        result.by_lane[lane or "extractive"] += killed
        store = SQLiteStore(db)
        found = _lane_problems(store, db, observed, lane)
        store.close()
        result.violations += [f"round {round_no} ({lane or ''} {target}): {p}" for p in found]
    for name in names:
        _settle(dbs[name], result, seen[name], name)
    result.seconds = round(time.perf_counter() - started, 2)
    return result
