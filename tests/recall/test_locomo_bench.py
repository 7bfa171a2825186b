"""The LoCoMo bench helpers, and one small conversation end to end when the data is present."""

from __future__ import annotations

import io
import json
from datetime import datetime
from pathlib import Path

import pytest

from reverie.bench.locomo import (
    Turn,
    answer_recall,
    content_tokens,
    cut_words,
    evidence_recall,
    parse_session_time,
    run_locomo,
)
from reverie.dream.dialogue import fact_sentences, passages

DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "locomo" / "locomo-dev.json"


def test_session_times_parse() -> None:
    assert parse_session_time("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56)


def test_answer_and_evidence_recall() -> None:
    context = set(content_tokens("Caroline went to the support group on 7 May 2023"))
    assert answer_recall("7 May 2023", context) == 1.0
    assert answer_recall("Transgender woman", context) == 0.0
    assert answer_recall("the", context) is None
    turn = Turn("D1:3", "Caroline", "I went to a LGBTQ pride parade", None, datetime(2023, 5, 8))
    assert evidence_recall([turn], context) == 0.0
    assert evidence_recall([turn], context | {"lgbtq", "pride"}) == 1.0


def test_cut_words_never_exceeds_the_budget() -> None:
    lines = ["one two three", "four five six seven eight", "nine"]
    assert cut_words(lines, 4) == "one two three\nnine"
    assert len(cut_words(lines, 100).split()) == 9
    assert cut_words(["a b c d e f"], 3) == ""


def test_facts_keep_statements_with_absolute_dates() -> None:
    when = datetime(2023, 5, 8, 13, 56)
    said = (
        "Hey Mel! I went to a LGBTQ support group yesterday. How are you? I painted that last year!"
    )
    assert fact_sentences(said, when) == [
        "I went to a LGBTQ support group yesterday (7 May 2023).",
        "I painted that last year (2022)!",
    ]


def test_passages_keep_a_sentence_with_its_neighbours() -> None:
    said = ["I've got a hand-painted bowl.", "A friend made it.", "It reminds me of art."]
    assert passages(said, words=8) == ["I've got a hand-painted bowl. A friend made it.",
                                       "It reminds me of art."]  # fmt: skip
    assert passages(said, words=0) == said
    assert passages([]) == []


@pytest.mark.skipif(not DATA.exists(), reason=f"LoCoMo data not found at {DATA}")
def test_one_conversation_end_to_end(tmp_path: Path) -> None:
    out = io.StringIO()
    result = run_locomo(DATA, conversations=range(0, 1), budget=100, contexts=out)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert result.questions > 100 and result.pages > 0
    assert {"conversation", "qa", "question", "context"} <= set(lines[0])
    assert all(len(line["context"].split()) <= 100 for line in lines)
    assert result.figure("reverie")["answer_recall"] > 0.3
