"""The generated secret corpus: recall and precision of redaction against their targets."""

from __future__ import annotations

import pytest

from reverie.bench.redact import (
    PRECISION_TARGET,
    RECALL_TARGET,
    corpus,
    render_redact,
    run_redact,
    score,
)
from reverie.bench.secrets_corpus import fill
from reverie.redaction import Redactor


def spans(text: str) -> list[tuple[int, int]]:
    return [(s.start, s.end) for s in Redactor().spans(text)]


def test_the_corpus_is_broad_and_labelled() -> None:
    secrets, looks = corpus(0)
    assert sum(len(s.spans) for s in secrets) >= 300 and len(looks) >= 200
    assert len({s.format for s in secrets}) >= 50
    for sample in secrets:
        assert sample.spans and all(0 <= a < b <= len(sample.text) for a, b in sample.spans)
    assert corpus(0) == corpus(0) and corpus(0) != corpus(1)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_recall_and_precision_meet_their_targets(seed: int) -> None:
    secrets, looks = corpus(seed)
    figure = score(spans, [*secrets, *looks])
    assert figure.recall >= RECALL_TARGET, figure.misses
    assert figure.precision >= PRECISION_TARGET, figure.false_positives
    assert figure.lookalikes_kept >= PRECISION_TARGET, figure.false_positives


def test_a_secret_counts_only_when_every_character_is_gone() -> None:
    sample = fill("key {s} end", "abcdefgh", "x")
    assert score(lambda _t: [(4, 12)], [sample]).recall == 1.0
    assert score(lambda _t: [(4, 10)], [sample]).recall == 0.0
    assert score(lambda _t: [(4, 8), (8, 12)], [sample]).recall == 1.0
    assert score(lambda _t: [(0, 3), (4, 12)], [sample]).precision == 0.5


def test_the_bench_reports_every_figure() -> None:
    result = run_redact(rounds=1, detect_secrets=False)
    text = render_redact(result)
    assert result.passed and result.throughput_ratio > 0
    for words in ("recall", "precision", "look-alikes kept", "chars/s", "misses by format"):
        assert words in text
