"""DESIGN.md invariants 1-3 under random interleavings (hypothesis state machine).

Ingest in random batches with out-of-order timestamps, dream with small caps, inject an exception
at every phase of the cycle (and between the writes of its commit), re-run — and after every step:
no episode consolidated twice, no page loses a citation, no revision is lost, the checkpoint never
passes an unconsolidated eligible episode. At the end, dreaming until quiet consolidates every
eligible episode exactly once, and each one is cited by a page.
"""

from __future__ import annotations

import contextlib
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import hypothesis.strategies as st
from hypothesis import HealthCheck, settings
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from reverie import Config, DreamConfig, Reverie
from reverie.dream.boilerplate import is_template_lesson
from reverie.models import Episode, Scope
from reverie.store.sqlite import SQLiteStore

SCOPE = Scope.parse("acme/coder")
T0 = datetime(2026, 11, 1, tzinfo=UTC)
PHASES = [
    None,
    "collect",
    "cluster",
    "distill",
    "validate",
    "apply",
    "checkpoint-checked",
    "pages-written",
    "episodes-marked",
    "cycle-recorded",
]
THRESHOLD = 6


class Injected(RuntimeError):
    pass


episode_fields = st.fixed_dictionaries(
    {
        "category": st.sampled_from(["deploy", "search", "tests", None]),
        "tools": st.sampled_from([["kubectl"], ["web_search"], ["pytest"], []]),
        "outcome": st.sampled_from(["success", "failure", "timeout", "partial", "unknown"]),
        "error": st.sampled_from(
            [None, "TimeoutError: waited 30s", "HTTP Error 429: Too Many Requests"]
        ),
        "lesson": st.sampled_from(
            [None, None, "approach worked", "retry with backoff after a 429"]
        ),
        "importance": st.integers(1, 10),
        "hours": st.integers(-500, 500),
    }
)


class CycleMachine(RuleBasedStateMachine):
    @initialize()
    def open(self) -> None:
        self.dir = tempfile.TemporaryDirectory()
        self.store = SQLiteStore(Path(self.dir.name) / "brain.db")
        self.store.migrate()
        self.armed: str | None = None
        self.count = 0
        self.seen_revisions: set[tuple[str, int, str]] = set()
        self.citations: dict[str, set[str]] = {}

    def teardown(self) -> None:
        self.store.close()
        self.dir.cleanup()

    def _hook(self, phase: str) -> None:
        if phase == self.armed:
            self.armed = None
            raise Injected(phase)

    def _engine(self, cap: int) -> Reverie:
        config = Config(
            # No learnt stop phrases: the checks below judge eligibility by the prior alone.
            dream=DreamConfig(
                max_episodes_per_cycle=cap, importance_threshold=THRESHOLD, boilerplate_window=0
            )
        )
        return Reverie(self.store, config=config, on_phase=self._hook)

    @rule(batch=st.lists(episode_fields, min_size=1, max_size=8))
    def ingest(self, batch: list[dict[str, object]]) -> None:
        items = []
        for fields in batch:
            self.count += 1
            hours = int(fields.pop("hours"))  # type: ignore[call-overload]
            items.append(
                {
                    **fields,
                    "id": f"ep-{self.count:04d}",
                    "scope": SCOPE.key,
                    "created_at": T0 + timedelta(hours=hours),
                    "situation": f"task {self.count % 4}",
                    "action": "ran the tool",
                }
            )
        result = self._engine(5).ingest(items)
        assert result.stored == len(items) and not result.errors

    @rule(cap=st.integers(1, 6), fault=st.sampled_from(PHASES), day=st.integers(0, 60))
    def dream(self, cap: int, fault: str | None, day: int) -> None:
        self.armed = fault
        with contextlib.suppress(Injected):
            self._engine(cap).dream(SCOPE, now=T0 + timedelta(days=day))
        self.armed = None

    @invariant()
    def nothing_lost_nothing_doubled(self) -> None:
        if not hasattr(self, "store"):
            return
        for page in self.store.pages(SCOPE, None):
            revisions = self.store.revisions(page.id)
            cited = set(page.citations)
            assert self.citations.get(page.id, set()) <= cited, "a page lost a citation"
            self.citations[page.id] = cited
            self.seen_revisions |= {(r.page_id, r.number, r.hash) for r in revisions}
        stored = {
            (r.page_id, r.number, r.hash)
            for p in self.store.pages(SCOPE, None)
            for r in self.store.revisions(p.id)
        }
        assert self.seen_revisions <= stored, "a revision was lost"
        cited = {e for p in self.store.pages(SCOPE, None) for e in p.citations}
        known = {e.id for e in self.store.episodes(cited, tenant="acme") if e.scope == SCOPE}
        assert cited <= known, "a page cites an episode that is not evidence of its scope"
        assert self.store.integrity_check() == "ok"

    @invariant()
    def checkpoint_never_passes_pending_eligible(self) -> None:
        if not hasattr(self, "store"):
            return
        checkpoint = self.store.checkpoint(SCOPE)
        for ep in self.store.scan(SCOPE, 0, 10_000):
            if _eligible(ep):
                assert (ep.seq or 0) > checkpoint, (
                    f"{ep.id} is eligible, unconsolidated and behind the checkpoint"
                )

    def check_final(self) -> None:
        engine = self._engine(6)
        for _ in range(200):
            report = engine.dream(SCOPE, now=T0 + timedelta(days=90))
            if report.scanned == 0:
                break
        ids = [f"ep-{i:04d}" for i in range(1, self.count + 1)]
        everything = self.store.episodes(ids, tenant=SCOPE.tenant)
        cited = {e for p in self.store.pages(SCOPE, None) for e in p.citations}
        for ep in everything:
            if _eligible(ep):
                assert ep.consolidated_in is not None, f"{ep.id} was never consolidated"
                assert ep.id in cited, f"{ep.id} is consolidated but no page cites it"
        marked = [e.id for e in everything if e.consolidated_in]
        assert len(marked) == len(set(marked))
        # the extractive distiller cites every episode it consolidates (an evidence line at least)
        assert set(marked) <= cited, "an episode was consolidated but no page cites it"


def _eligible(ep: Episode) -> bool:
    return (ep.importance or 0) >= THRESHOLD or bool(
        ep.lesson and not is_template_lesson(ep.lesson)
    )


class FinalCheckMachine(CycleMachine):
    @rule()
    def settle(self) -> None:
        self.check_final()


FinalCheckMachine.TestCase.settings = settings(
    max_examples=150,
    stateful_step_count=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestCycleInvariants = FinalCheckMachine.TestCase
