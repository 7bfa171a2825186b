"""The model budget (reverie.dream.budget) with the real LLM client against the local model server.

One problem grows from 3 to 12 episodes, one cycle at a time: below ``model_min_support`` (4) its
page is written extractively; at 4 the model writes it; until its evidence has tripled since then
(12) each cycle reinforces it without a call, citing every new episode and growing its tallies; at
12 the model is called again. A re-run after undo is served by the response cache.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from reverie import Reverie
from reverie.bench.model_calls import plan_reply
from reverie.dream.llm_distill import LLMDistiller
from reverie.llm.fake_server import FakeLLMServer
from reverie.llm.openai_compat import OpenAICompatLLM
from reverie.models import (
    Claim,
    ClaimRole,
    CycleReport,
    Episode,
    Page,
    PageSupport,
)
from reverie.store.sqlite import SQLiteStore
from tests.conftest import EpisodeFactory
from tests.dream.pages import store_page
from tests.llm.conftest import FAST

SCOPE = "acme/coder"
DAY = datetime(2026, 11, 10, tzinfo=UTC)


@pytest.fixture
def rv(tmp_path: Path) -> Iterator[tuple[Reverie, FakeLLMServer]]:
    """A brain with the default budget and the LLM distiller, its server's scripted model."""
    with FakeLLMServer(responder=plan_reply) as server:
        llm = OpenAICompatLLM(server.openai_base_url, "scripted", settings=FAST)
        store = SQLiteStore(tmp_path / "b.db")
        store.migrate()
        with Reverie(store, distiller=LLMDistiller(llm, cache=store)) as brain:
            yield brain, server
        llm.close()


class Problem:
    """One recurring problem, its episodes ingested and dreamed a batch per cycle."""

    def __init__(self, rv: Reverie, make_episode: EpisodeFactory) -> None:
        self.rv, self.make, self.episodes, self.night = rv, make_episode, list[Episode](), 0

    def grow(self, n: int) -> CycleReport:
        new = [self.make(lesson="wait on the rollout with a 10m timeout") for _ in range(n)]
        self.rv.ingest(new)
        self.episodes += new
        self.night += 1
        return self.rv.dream(SCOPE, now=DAY + timedelta(days=self.night))

    def page(self) -> Page:
        [page] = self.rv.pages(SCOPE)
        return page


def _model_claims(page: Page) -> list[str]:
    return [c.text for c in page.revision.claims if c.role is not ClaimRole.EVIDENCE]


def test_a_problem_is_written_by_a_model_at_four_episodes_and_again_at_twelve(
    rv: tuple[Reverie, FakeLLMServer], make_episode: EpisodeFactory
) -> None:
    brain, server = rv
    problem = Problem(brain, make_episode)
    first = problem.grow(3)
    assert first.created == 1 and first.model_calls == 0 and server.requests == []
    assert problem.page().revision.support.distilled_at is None  # type: ignore[union-attr]

    at_four = problem.grow(1)
    assert (at_four.revised, at_four.model_calls, len(server.requests)) == (1, 1, 1)
    written = problem.page()
    assert written.revision.support is not None and written.revision.support.distilled_at == 4

    for n, total in ((2, 6), (2, 8), (2, 10), (1, 11)):
        report = problem.grow(n)
        page = problem.page()
        assert (report.revised, report.model_calls, len(server.requests)) == (1, 0, 1)
        assert page.citations == sorted(e.id for e in problem.episodes)  # nothing uncited
        assert page.revision.support is not None
        assert (page.revision.support.episodes, page.revision.support.distilled_at) == (total, 4)
        assert _model_claims(page) == _model_claims(written)  # as the model wrote them
        assert page.revision.title == written.revision.title

    at_twelve = problem.grow(1)
    page = problem.page()
    assert (at_twelve.model_calls, len(server.requests)) == (1, 2)
    assert page.revision.support is not None and page.revision.support.distilled_at == 12
    assert page.citations == sorted(e.id for e in problem.episodes)


def test_a_rerun_after_undo_pays_nothing(
    rv: tuple[Reverie, FakeLLMServer], make_episode: EpisodeFactory
) -> None:
    brain, server = rv
    problem = Problem(brain, make_episode)
    problem.grow(3)
    at_four = problem.grow(1)
    assert at_four.revised == 1 and at_four.model_calls == 1
    written = problem.page().revision.hash
    brain.undo(at_four.cycle_id, now=DAY + timedelta(days=3))
    assert problem.page().revision.support.distilled_at is None  # type: ignore[union-attr]
    again = brain.dream(SCOPE, now=DAY + timedelta(days=4))
    assert again.revised == 1 and (again.model_calls, again.cache_hits) == (0, 1)
    assert len(server.requests) == 1 and problem.page().revision.hash == written


def test_a_rerun_after_undoing_a_model_created_page_brings_it_back_without_a_call(
    rv: tuple[Reverie, FakeLLMServer], make_episode: EpisodeFactory
) -> None:
    brain, server = rv
    problem = Problem(brain, make_episode)
    created = problem.grow(4)
    assert created.created == 1 and created.model_calls == 1
    written = problem.page().revision.hash
    brain.undo(created.cycle_id, now=DAY + timedelta(days=2))
    assert brain.pages(SCOPE) == []  # retired, its episodes released
    again = brain.dream(SCOPE, now=DAY + timedelta(days=3))
    assert again.revised == 1 and again.model_calls == 0 and len(server.requests) == 1
    page = problem.page()  # active again, as the model wrote it, citing every episode
    assert page.revision.hash == written
    assert page.citations == sorted(e.id for e in problem.episodes)


def _model_page(
    brain: Reverie, key: str, situation: str, lesson: str | None, ids: list[str]
) -> Page:
    """A page a model wrote from ``ids`` (its support stamped ``distilled_at``), committed as an
    earlier cycle left it; with no ``lesson``, it only tells what happened."""
    told = Claim(text=f"{situation}: timed out.", episode_ids=tuple(ids), role=ClaimRole.ANECDOTE)
    taught = [Claim(text=lesson, episode_ids=tuple(ids), role=ClaimRole.LESSON)] if lesson else []
    support = PageSupport(episodes=len(ids), failures=len(ids), distilled_at=len(ids))
    scope = brain.store.episodes(ids, tenant="acme")[0].scope
    return store_page(brain, scope, key, situation, [*taught, told], DAY, support)


def test_pages_that_converge_merge_without_a_call_until_their_evidence_makes_one_due(
    rv: tuple[Reverie, FakeLLMServer], make_episode: EpisodeFactory
) -> None:
    brain, server = rv
    eps = [
        make_episode(situation=f"deploying the api to {where} cluster", lesson=None)
        for where in ("the staging", "the staging eu") * 4
    ]
    brain.ingest(eps)
    a = _model_page(brain, "deploy|kubectl|api~a", eps[0].situation, "Wait for the rollout.",
                    [e.id for e in eps[0::2]])  # fmt: skip
    b = _model_page(brain, "deploy|kubectl|api~b", eps[1].situation, None,
                    [e.id for e in eps[1::2]])  # fmt: skip
    brain.ingest([make_episode(situation="deploying the api to the staging cluster", lesson=None)])
    report = brain.dream(SCOPE, now=DAY + timedelta(days=1))
    assert (report.merged, report.superseded, report.model_calls) == (1, 1, 0)
    assert server.requests == []  # 4 + 4 + 1 episodes: not yet 3x what the model wrote (4)
    [home] = brain.pages(SCOPE)
    assert {a.id, b.id} - {home.id}
    assert set(a.citations) | set(b.citations) <= set(home.citations)
    assert "Wait for the rollout." in _model_claims(home)  # as the model wrote it
    assert home.revision.support is not None and home.revision.support.episodes == 9
