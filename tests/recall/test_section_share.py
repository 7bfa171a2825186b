"""A small budget buys knowledge: framing stays a small share, the section fills up, and a page
is ranked by what it says, never carried by what it cites."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reverie import Reverie
from reverie.bench.agent import framing_share
from reverie.bench.agent_gen import Dataset, GenConfig, generate
from reverie.bench.lexical import fit_lines
from reverie.config import RecallConfig
from reverie.models import Claim, ClaimRole, Episode, Scope
from reverie.recall import recall
from reverie.recall.render import FENCE_CLOSE, FENCE_OPEN, quoted_lines
from reverie.store.sqlite import SQLiteStore
from tests.recall.test_recall import commit, write

WORDS = 100
"""The budget in whitespace words, as ``bench agent`` cuts it (asked for 4 tokens a word)."""
SHARE = 0.15


@pytest.fixture(scope="module")
def agent_brain(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Reverie, Dataset]]:
    """The agent bench's episodes (three agents, lessons, facts, routine work, noise), ingested
    and dreamt day by day as agents would: a realistic set of pages."""
    data = generate(GenConfig(scale=0.15))
    with Reverie.open(tmp_path_factory.mktemp("share") / "brain.db") as rv:
        days = [(batch, data.day_end(day)) for day, batch in enumerate(data.days)]
        for batch, now in [*days, (data.backfill, data.final)]:
            rv.ingest(batch)
            for scope in data.scopes:
                rv.dream(scope, now=now)
        yield rv, data


def _sections(rv: Reverie, data: Dataset) -> list[list[str]]:
    out = []
    for probe in data.probes:
        if probe.kind in ("lesson", "fact"):
            lines = quoted_lines(
                rv.recall(probe.query, probe.scope, 4 * WORDS, now=data.final).text
            )
            out.append([lines[i] for i in fit_lines(lines, WORDS)])
    return out


def test_framing_takes_at_most_15_percent_of_a_100_word_section(
    agent_brain: tuple[Reverie, Dataset],
) -> None:
    rv, data = agent_brain
    sections = [s for s in _sections(rv, data) if s]
    assert len(sections) >= 10
    fence = (FENCE_OPEN, FENCE_CLOSE)
    shares = [framing_share(lines, fence) or 0.0 for lines in sections]
    assert sum(shares) / len(shares) <= SHARE, shares
    for lines, share in zip(sections, shares, strict=True):
        words = 2 + sum(len(line.split()) for line in lines)
        assert share * words <= SHARE * WORDS, lines  # never more than 15 of the 100 words


def test_a_section_fills_its_budget_when_the_brain_knows_about_the_question(
    agent_brain: tuple[Reverie, Dataset],
) -> None:
    rv, data = agent_brain
    lessons = [p for p in data.probes if p.kind == "lesson"]
    words = []
    for probe in lessons:
        lines = quoted_lines(rv.recall(probe.query, probe.scope, 4 * WORDS, now=data.final).text)
        words.append(sum(len(lines[i].split()) for i in fit_lines(lines, WORDS)))
    assert sum(words) / len(words) >= 0.75 * WORDS, words


# -- what a page says, against what it cites ------------------------------------------------

SCOPE = Scope(tenant="acme", agent="ops")
T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
word = st.text(alphabet="bcdfghjklmnpqrstvwxz", min_size=5, max_size=9)
"""Made-up words (no vowels: never an English stop word, never a word the code knows)."""


def _episode(ident: str, text: str, day: int = 0) -> Episode:
    return Episode.model_validate(
        {"id": ident, "scope": SCOPE, "situation": text, "action": "ran it",
         "outcome": "failure", "created_at": T0 + timedelta(hours=day)}
    )  # fmt: skip


def _recall_ids(topic: list[str], filler: list[str], many: int) -> list[str]:
    """Recall, on a fresh brain, for a question about ``topic`` where a boilerplate page of
    ``filler`` words cites the episode that matches the question best (and ``many`` others),
    and the problem's page (its title and claim in the question's words) cites a weaker one."""
    a, b, c, d = topic
    episodes = [
        _episode("ep-match", f"{a} {b} {c} {d} failed again on {a} {b} {c}"),
        _episode("ep-weak", f"{a} {b} failed", 1),
        *(
            _episode(f"ep-{i}", f"{filler[i % len(filler)]} routine run {i}", 2)
            for i in range(many)
        ),
    ]
    boilerplate = " ".join(filler).capitalize() + "."
    cited = ("ep-match", *(f"ep-{i}" for i in range(many)))
    with tempfile.TemporaryDirectory() as tmp:
        store = SQLiteStore(Path(tmp) / "b.db")
        store.migrate()
        store.append(episodes)
        commit(store, SCOPE, [
            write(SCOPE, "pg-filler", boilerplate, [
                Claim(text=boilerplate, episode_ids=cited, role=ClaimRole.LESSON)]),
            write(SCOPE, "pg-answer", f"{a} {b} {c} failing", [
                Claim(text=f"Pin {d} first, then retry.", episode_ids=("ep-weak",),
                      role=ClaimRole.LESSON)]),
        ])  # fmt: skip
        query = f"How do I fix {a} {b} {c} {d}?"
        found = recall(store, query, SCOPE, 400, config=RecallConfig(), now=datetime.now(UTC))
        store.close()
    return [item.id for item in found.items if item.kind == "page"]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    topic=st.lists(word, min_size=4, max_size=4, unique=True),
    filler=st.lists(word, min_size=3, max_size=8, unique=True),
    many=st.integers(min_value=0, max_value=60),
)
def test_a_page_whose_words_miss_the_question_never_wins_through_its_evidence(
    topic: list[str], filler: list[str], many: int
) -> None:
    filler = [w for w in filler if w not in topic] or ["qqqqq"]
    pages = _recall_ids(topic, filler, many)
    assert pages[:1] == ["pg-answer"]
    assert "pg-filler" not in pages
