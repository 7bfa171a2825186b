"""count_tokens: never 0 for text, additive over lines, within the byte-level BPE ceiling."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

import reverie.recall
from reverie.recall import count_tokens

lines = st.text(min_size=1).map(lambda t: " ".join(t.split())).filter(bool)


@given(st.text(min_size=1))
def test_text_costs_at_least_one_token_and_at_most_its_bytes(text: str) -> None:
    assert 1 <= count_tokens(text) <= len(text.encode("utf-8"))


@given(lines, lines)
def test_additive_over_lines(a: str, b: str) -> None:
    assert count_tokens(f"{a}\n{b}") == count_tokens(a) + 1 + count_tokens(b)


def test_known_prices() -> None:
    assert count_tokens("") == 0
    assert count_tokens("hello world") == 2
    assert count_tokens("Increase --timeout to 10m for large manifests.") == 14
    assert count_tokens("2026-11-03") == 6


def test_long_text_is_priced_like_short_text() -> None:
    text = " ".join(["deploy the service"] * 100)
    assert len(text) > 1000  # past the cache
    assert count_tokens(text) == 100 * count_tokens("deploy the service") == 500


def test_public_names() -> None:
    assert sorted(reverie.recall.__all__) == [
        "MODEL_GUIDANCE",
        "RecallTrace",
        "count_tokens",
        "pack",
        "query_terms",
        "recall",
        "render",
    ]
    functions = [name for name in reverie.recall.__all__ if not name.isupper()]
    assert all(callable(getattr(reverie.recall, name)) for name in functions)
    assert isinstance(reverie.recall.MODEL_GUIDANCE, str)
