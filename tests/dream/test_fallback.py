"""A group a model keeps failing on is distilled extractively once it has waited long enough
(reverie.dream.fallback); until then a rejected plan changes nothing, as always."""

from __future__ import annotations

import hashlib
from datetime import timedelta
from pathlib import Path

import pytest

from reverie import Config, DreamConfig, Reverie
from reverie.errors import PlanRejected
from reverie.models import Claim, PageKind, now_utc
from reverie.models.plan import CreatePage, Evidence, Plan
from reverie.store.sqlite import SQLiteStore
from reverie.testing import ScriptedDistiller
from tests.conftest import EpisodeFactory

SCOPE = "acme/coder"


def _invents(ev: Evidence) -> Plan:
    claim = Claim(text="made up", episode_ids=("ep-not-in-evidence",))
    op = CreatePage(
        topic_key=ev.topic_key, title="x", kind=PageKind.FACT, confidence=0.9, claims=(claim,)
    )
    return Plan(operations=(op,))


def _refuses(ev: Evidence) -> Plan:
    raise PlanRejected(["the answer is not JSON"])


def _brain(path: Path, script: object, after: float | None = 7.0) -> Reverie:
    store = SQLiteStore(path)
    store.migrate()
    config = Config(dream=DreamConfig(fallback_after_days=after))
    return Reverie(store, config=config, distiller=ScriptedDistiller(script))  # type: ignore[arg-type]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("script", [_invents, _refuses], ids=["invalid-plan", "refused"])
def test_a_group_waiting_a_week_is_distilled_extractively(
    tmp_path: Path, make_episode: EpisodeFactory, script: object
) -> None:
    rv = _brain(tmp_path / "b.db", script)
    rv.ingest([make_episode(importance=9) for _ in range(3)])
    stored = now_utc()

    early = rv.dream(SCOPE, now=stored + timedelta(days=6))
    assert early.rejected and not early.fallbacks and early.episodes_marked == 0
    assert rv.pages(SCOPE) == []

    late = rv.dream(SCOPE, now=stored + timedelta(days=8))
    assert late.fallbacks and not late.rejected
    assert "distilled extractively" in late.fallbacks[0]
    assert ("not in the evidence" if script is _invents else "not JSON") in late.fallbacks[0]
    assert late.created == 1 and late.episodes_marked == 3
    (page,) = rv.pages(SCOPE)
    stored_ids = {e.id for e in rv.store.recent_episodes(rv.store.scopes()[0], 10)}
    assert all(set(c.episode_ids) <= stored_ids for c in page.revision.claims)  # cited, real
    assert "made up" not in {c.text for c in page.revision.claims}  # not the model's plan
    assert SCOPE not in {s.key for s in rv.store.pending_scopes()}  # nothing left to ask about


def test_a_rejected_plan_still_changes_no_byte_before_the_wait(
    tmp_path: Path, make_episode: EpisodeFactory
) -> None:
    rv = _brain(tmp_path / "b.db", _invents)
    rv.ingest([make_episode(importance=9) for _ in range(3)])
    rv.store.close()
    before = _digest(tmp_path / "b.db")
    rv = _brain(tmp_path / "b.db", _invents)
    report = rv.dream(SCOPE, now=now_utc() + timedelta(days=6))
    assert report.rejected and not report.fallbacks
    rv.store.close()
    assert _digest(tmp_path / "b.db") == before


def test_an_imported_history_is_not_old_and_the_fallback_can_be_turned_off(
    tmp_path: Path, make_episode: EpisodeFactory
) -> None:
    long_ago = now_utc() - timedelta(days=90)
    rv = _brain(tmp_path / "b.db", _invents)
    rv.ingest([make_episode(importance=9, created_at=long_ago) for _ in range(3)])
    assert rv.dream(SCOPE, now=now_utc()).rejected  # created 90 days ago, stored just now

    off = _brain(tmp_path / "off.db", _invents, after=None)
    off.ingest([make_episode(importance=9) for _ in range(3)])
    report = off.dream(SCOPE, now=now_utc() + timedelta(days=365))
    assert report.rejected and not report.fallbacks and off.pages(SCOPE) == []


def test_a_replayed_history_waits_on_its_own_clock_not_the_machines(
    tmp_path: Path, make_episode: EpisodeFactory
) -> None:
    """Ingest and dream both at simulated times a year back: the wait is measured between the
    two, as a live brain's would be (the store keeps the ingest clock's time, not its own)."""
    then = now_utc() - timedelta(days=365)
    rv = _brain(tmp_path / "b.db", _invents)
    rv.ingest([make_episode(importance=9, created_at=then) for _ in range(3)], now=then)
    assert rv.dream(SCOPE, now=then + timedelta(days=6)).rejected
    late = rv.dream(SCOPE, now=then + timedelta(days=8))
    assert late.fallbacks and late.created == 1
