"""``explain``: the trace recall fills in says exactly why the section holds what it holds.

The packed units of the trace are the section's items, in its order; every other unit is cut
with a reason (the relevance floor, no room in the budget, a page that already answers for an
episode); the prices add up to the tokens used; and a recall with a trace returns the very same
section as one without.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from reverie import Reverie
from reverie.cli.demo import load_sample
from reverie.embed import HashingEmbedder
from reverie.recall import RecallTrace
from reverie.recall.trace import CUT, PACKED

SCOPE = "acme/coder"
NOW = datetime(2026, 11, 20, tzinfo=UTC)


@pytest.fixture(scope="module", params=["lexical", "hybrid"])
def brain(request: pytest.FixtureRequest) -> Iterator[Reverie]:
    embedder = HashingEmbedder() if request.param == "hybrid" else None
    with Reverie.open(":memory:", embedder=embedder) as rv:
        rv.ingest(load_sample())
        rv.dream(SCOPE, now=NOW)
        yield rv


def explained(rv: Reverie, query: str, budget: int) -> tuple[object, dict[str, object]]:
    trace = RecallTrace()
    result = rv.recall(query, SCOPE, budget, now=NOW, trace=trace)
    return result, trace.to_json()


@pytest.mark.parametrize("budget", [120, 300, 2000])
def test_the_packed_units_are_the_section_in_its_order(brain: Reverie, budget: int) -> None:
    trace = RecallTrace()
    result = brain.recall("deploy staging timeout", SCOPE, budget, now=NOW, trace=trace)
    shown = trace.to_json()
    packed = [u for u in shown["units"] if u["decision"] == PACKED]
    assert [(u["kind"], u["id"], u["text"]) for u in packed] == [
        (i.kind, i.id, i.text) for i in result.items
    ]
    assert [u["rank"] for u in packed] == list(range(len(packed)))
    assert shown["used_tokens"] == result.used_tokens
    if packed:
        assert shown["header_tokens"] + sum(u["tokens"] for u in packed) == result.used_tokens
    assert all(u["reason"] for u in shown["units"])  # every decision says why


def test_a_trace_changes_nothing_in_the_answer(brain: Reverie) -> None:
    for query in ("deploy staging timeout", "geoip configmap", "what is the weather on mars"):
        plain = brain.recall(query, SCOPE, 300, now=NOW)
        traced = brain.recall(query, SCOPE, 300, now=NOW, trace=RecallTrace())
        assert traced == plain


def test_a_tight_budget_cuts_for_room_and_says_how_much_was_left(brain: Reverie) -> None:
    _result, shown = explained(brain, "deploy staging timeout kubectl", 160)
    units = shown["units"]
    no_room = [u for u in units if u["decision"] == CUT and u["reason"].startswith("no room")]
    assert no_room, [u["reason"] for u in units]
    for unit in no_room:
        needs, left = (int(w) for w in unit["reason"].split() if w.isdigit())
        assert needs == unit["tokens"] and needs > left


def test_scored_units_carry_their_signals(brain: Reverie) -> None:
    _result, shown = explained(brain, "deploy staging timeout", 2000)
    assert shown["terms"] and set(shown["weights"]) == set(shown["terms"])
    for unit in shown["units"]:
        if unit["path"] == "full text":
            assert {"bm25", "bm25_share", "coverage"} <= set(unit["signals"])
            assert 0 <= unit["signals"]["coverage"] <= 1
        if unit["decision"] == PACKED:
            assert unit["tokens"] > 0 and unit["signals"]["value_per_token"] > 0
    if shown["vectors"]:
        assert any("cosine" in u["signals"] for u in shown["units"])


def test_a_weak_match_is_cut_by_the_relevance_floor(brain: Reverie) -> None:
    _result, shown = explained(brain, "staging weather forecast umbrella rain picnic", 2000)
    reasons = {u["reason"] for u in shown["units"]}
    assert any("floor" in r or "fewer than" in r for r in reasons), reasons
    assert not [u for u in shown["units"] if u["decision"] == PACKED]


def test_a_question_of_stop_words_says_why_it_is_empty(brain: Reverie) -> None:
    result, shown = explained(brain, "what is the", 300)
    assert not result.items and shown["units"] == []
    assert "no content terms" in shown["notes"][0]
