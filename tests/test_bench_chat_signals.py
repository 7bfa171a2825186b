"""``reverie bench chat --signals``: separation of answerable from never-said questions."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from reverie.bench.chat_gen import ChatConfig
from reverie.bench.chat_signals import SIGNALS, auc, passing, run_signals
from reverie.cli.app import app
from reverie.errors import InvalidInput


@pytest.mark.parametrize(
    ("positive", "negative", "expected"),
    [
        ([0.9, 0.8], [0.1, 0.2], 1.0),
        ([0.1, 0.2], [0.9, 0.8], 0.0),
        ([0.5], [0.5], 0.5),
        ([0.9, 0.1], [0.5], 0.5),
        ([], [0.5], 0.5),
    ],
)
def test_auc_is_the_chance_a_positive_outscores_a_negative(
    positive: list[float], negative: list[float], expected: float
) -> None:
    assert auc(positive, negative) == pytest.approx(expected)


def test_passing_counts_positives_over_the_line_that_empties_the_share_asked() -> None:
    negative = [0.1 * i for i in range(1, 11)]  # 0.1 .. 1.0
    positive = [0.35, 0.75, 0.95, 1.5]
    assert passing(positive, negative, 0.9) == pytest.approx(0.5)  # line 0.9: 0.95 and 1.5
    assert passing(positive, negative, 0.7) == pytest.approx(0.75)  # line 0.7
    assert passing(positive, negative, 0.3) == pytest.approx(1.0)  # line 0.3
    assert passing([], negative, 0.9) == 0.0


def test_every_signal_is_scored_on_the_generated_chats() -> None:
    found = run_signals(ChatConfig(seed=3, people=2), embedder="hashing")
    assert found["answerable"] > 0 and found["never_said"] > 0
    assert [s["signal"] for s in found["signals"]] == [name for name, _ in SIGNALS]
    for row in found["signals"]:
        assert 0.0 <= row["auc"] <= 1.0
        assert 0.0 <= row["at_90"] <= row["at_78"] <= 1.0  # emptying more passes fewer


def test_an_embedder_that_embeds_nothing_is_refused() -> None:
    with pytest.raises(InvalidInput):
        run_signals(ChatConfig(seed=3, people=2), embedder="none")


def test_the_command_prints_the_signals_as_json() -> None:
    pytest.importorskip("onnxruntime")
    result = CliRunner().invoke(app, ["bench", "chat", "--signals", "--people", "2", "--json"])
    assert result.exit_code == 0, result.output
    assert {s["signal"] for s in json.loads(result.output)["signals"]} == {n for n, _ in SIGNALS}
