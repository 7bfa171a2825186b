"""Crash injection: 20 SIGKILLs of a real dreaming process, every invariant checked after each.

The rounds are spread over the extractive and the model lane (the LLM distiller against
the local fake model server), and also kill between model calls, during the Markdown export and
during archiving; the file-side checks are tested here against files broken on purpose.
"""

from __future__ import annotations

import gzip
from datetime import timedelta
from pathlib import Path

import pytest

from reverie.bench.crash import (
    ALL_TARGETS,
    TARGETS,
    CrashResult,
    Observed,
    _fresh_db,
    _kill_at,
    _lane_problems,
    check_store,
    run_crash,
)
from reverie.bench.crash_child import SCOPE
from reverie.bench.crash_erase import ERASE_TARGETS, check_erasures
from reverie.bench.crash_lanes import LANE_TARGETS, check_archive, check_mirror, mirror_dir
from reverie.bench.synth import DEFAULT_START, synthetic_episodes
from reverie.engine import Reverie
from reverie.memory.archive import Archive, archive_root
from reverie.models import Scope
from reverie.store.sqlite import SQLiteStore


def test_twenty_kills_lose_nothing_and_double_nothing(tmp_path: Path) -> None:
    result = run_crash(20, tmp_path, seed=7)
    assert result.violations == []
    assert result.kills >= 18  # a round ends unkilled only if its target never came up
    inside = (*TARGETS[-4:], *ERASE_TARGETS[2:7])  # a cycle's commit, an erasure's transaction
    assert sum(result.by_target[t] for t in inside) >= 4
    assert sum(result.by_target[t] for t in ERASE_TARGETS) >= 3
    assert sum(result.by_target[t] for t in LANE_TARGETS) >= 3  # model, export, archive
    assert result.by_lane["model"] >= 5 and result.by_lane["extractive"] >= 5
    assert result.model_calls > 0 and result.cache_hits > 0  # re-runs were served by the cache
    assert result.consolidated > 0 and result.episodes >= result.consolidated


def test_rerun_after_a_kill_between_model_calls_pays_for_nothing_twice(tmp_path: Path) -> None:
    db, seen, result = _fresh_db(tmp_path / "m", 3), Observed(), CrashResult()
    assert _kill_at(db, 3, 0, "model-answered", 2, seen, "model", result)
    assert len(seen.answered) == 2 and result.model_calls == 2  # two answers cached, none committed
    assert not _kill_at(db, 3, 0, "never", 1, seen, "model", result)  # the same input, run through
    assert seen.repaid == [] and result.cache_hits >= 2
    store = SQLiteStore(db)
    assert _lane_problems(store, db, seen, "model") == []
    store.close()


def test_a_cached_input_sent_again_is_reported(tmp_path: Path) -> None:
    db, seen = _fresh_db(tmp_path / "r", 1), Observed()
    seen.answered.add("abc")
    seen.repaid.append("abc")
    store = SQLiteStore(db)
    assert "sent again" in " ".join(_lane_problems(store, db, seen, None))
    store.close()


def _lane_db(tmp_path: Path) -> tuple[Reverie, Path]:
    db = tmp_path / "lane" / "b.db"
    db.parent.mkdir()
    rv = Reverie.open(db)
    rows = list(synthetic_episodes(60, seed=5))
    rv.ingest([{**row, "scope": SCOPE} for row in rows])
    rv.dream(SCOPE, now=DEFAULT_START + timedelta(days=40))
    return rv, db


def test_mirror_check_finds_a_half_written_page_and_ignores_temp_files(tmp_path: Path) -> None:
    rv, db = _lane_db(tmp_path)
    store = rv.store
    assert isinstance(store, SQLiteStore)
    rv.export_markdown(SCOPE, mirror_dir(db))
    assert check_mirror(store, mirror_dir(db)) == []
    page = sorted((mirror_dir(db) / "memories").glob("*.md"))[0]
    (page.parent / f".{page.name}.x1y2.tmp").write_bytes(
        page.read_bytes()[:40]
    )  # a kill's leftover
    assert check_mirror(store, mirror_dir(db)) == []
    page.write_bytes(page.read_bytes()[:-30])
    (page.parent / "stray.md").write_bytes(b"\x00\xff")
    problems = check_mirror(store, mirror_dir(db))
    assert any("half-written" in p for p in problems) and any("stray.md" in p for p in problems)
    rv.close()


def test_archive_check_finds_a_torn_bundle_and_a_stub_without_bundle(tmp_path: Path) -> None:
    rv, _db = _lane_db(tmp_path)
    store = rv.store
    assert isinstance(store, SQLiteStore)
    Archive(store).run(timedelta(days=1), DEFAULT_START + timedelta(days=60), apply=True)
    scope = Scope.parse(SCOPE)
    assert check_archive(store, scope) == []
    bundle = sorted(archive_root(store).glob("*.jsonl.gz"))[0]
    bundle.write_bytes(gzip.compress(b"torn")[:10])
    problems = check_archive(store, scope)
    assert any("does not hash to its name" in p for p in problems)
    assert any("no verified bundle holds it" in p for p in problems)
    rv.close()


def test_kill_points_are_distinct_and_include_every_lane_point() -> None:
    assert set(LANE_TARGETS) <= set(ALL_TARGETS) and len(set(ALL_TARGETS)) == len(ALL_TARGETS)
    assert set(ERASE_TARGETS) <= set(LANE_TARGETS)


@pytest.mark.bench
def test_many_kills(tmp_path: Path) -> None:
    result = run_crash(200, tmp_path, seed=11)
    assert result.violations == []


def test_store_check_finds_a_lost_or_rewritten_revision_and_a_forged_cycle(
    tmp_path: Path,
) -> None:
    rv, db = _lane_db(tmp_path)
    store = rv.store
    assert isinstance(store, SQLiteStore)
    scope = Scope.parse(SCOPE)
    seen = Observed()
    assert check_store(store, scope, seen) == [] and seen.revisions
    rv.export_markdown(SCOPE, mirror_dir(db))
    assert check_mirror(store, mirror_dir(db)) == []
    page = store.pages(scope)[0]
    page_id, number = page.id, page.revision.number  # the revision its mirror file names
    with store.write() as c:  # tamper behind the store's back, as a bug would
        c.execute(
            "UPDATE revisions SET hash = 'sha256:forged', cycle_id = 'cy_never'"
            " WHERE page_id = ? AND number = ?",
            (page_id, number),
        )
    problems = check_store(store, scope, seen)
    assert any("revision(s) lost or changed" in p for p in problems)
    assert any(f"revision {page_id}#{number} of unrecorded cycle" in p for p in problems)
    assert any("names no stored revision" in p for p in check_mirror(store, mirror_dir(db)))
    rv.close()


@pytest.mark.parametrize(
    ("target", "committed"),
    [("erase-bundles-written", False), ("erase-episodes", False), ("erase-files", True)],
)
def test_an_erasure_killed_before_inside_or_after_its_commit_is_whole_or_absent(
    tmp_path: Path, target: str, committed: bool
) -> None:
    db, seen = _fresh_db(tmp_path / "e", 5), Observed()
    assert _kill_at(db, 5, 0, target, 2, seen, "extractive")  # the second cycle's erasure
    store = SQLiteStore(db)
    assert seen.erasing and _lane_problems(store, db, seen, "extractive") == []
    unfinished = store.erasure_receipts(unfinished=True)
    assert bool(unfinished) is committed  # applied but its file work cut short, or not at all
    store.close()
    with Reverie.open(db) as rv:
        assert rv.finish_erasures() == []  # what was due is done
        store = rv.store
        assert isinstance(store, SQLiteStore)
        assert _lane_problems(store, db, seen, "extractive") == []
        assert store.erasure_receipts(unfinished=True) == []


def test_erasure_check_finds_a_half_done_erasure_and_an_erased_episode_still_cited(
    tmp_path: Path,
) -> None:
    rv, _db = _lane_db(tmp_path)
    store = rv.store
    assert isinstance(store, SQLiteStore)
    scope = Scope.parse(SCOPE)
    first, second = (e.id for e in store.recent_episodes(scope, 2))
    assert check_erasures(store, scope, {first}) == []  # announced, not erased: still stored
    with store.write() as c:  # an erasure that forgot its receipt, as a bug would
        c.execute("DELETE FROM citations WHERE episode_id = ?", (first,))
        c.execute("DELETE FROM episodes WHERE id = ?", (first,))
    assert any("gone with no receipt" in p for p in check_erasures(store, scope, {first}))
    receipt = rv.forget(episodes=[second], scope=scope, apply=True)
    assert receipt.details["episodes"] == [second] and check_erasures(store, scope, set()) == []
    cited = store.pages(scope)[0].citations[0]
    with store.write() as c:  # a receipt claiming an episode that is still stored and cited
        c.execute(
            "UPDATE erasures SET details = json_set(details, '$.episodes', json_array(?))",
            (cited,),
        )
    problems = check_erasures(store, scope, set())
    assert any("still stored" in p for p in problems)
    assert any("still cite erased" in p for p in problems)
    rv.close()
