"""The sentence-transformers adapter. The library (and torch, ~1.4 GB) is not installed here, so
the model is a stand-in with the library's interface (``encode``,
``get_sentence_embedding_dimension``); without the extra, ``st:NAME`` says what to install."""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from reverie import Reverie
from reverie.embed import HashingEmbedder, resolve_embedder
from reverie.embed.st import SentenceTransformerEmbedder
from reverie.errors import InvalidInput, MissingExtra
from tests.conftest import dream_deploys


class StandIn:
    """What ``sentence_transformers.SentenceTransformer`` offers the adapter."""

    name = "stand-in"

    def __init__(self) -> None:
        self.inner = HashingEmbedder(dim=32)
        self.calls: list[dict[str, Any]] = []

    def get_sentence_embedding_dimension(self) -> int:
        return 32

    def encode(self, sentences: Sequence[str], **options: Any) -> Any:
        self.calls.append({"count": len(sentences), **options})
        return self.inner.embed(list(sentences)) * 2.0  # unnormalised: the adapter normalises


def test_rows_are_unit_length_empty_texts_zero_and_options_passed() -> None:
    model = StandIn()
    embedder = SentenceTransformerEmbedder(model)
    out = embedder.embed(["deploy timed out", "", "kubectl rollout"])
    assert embedder.dim == 32 and embedder.model_id == "st:stand-in"
    assert out.shape == (3, 32) and out.dtype == np.float32
    assert np.allclose(np.linalg.norm(out[[0, 2]], axis=1), 1.0) and not out[1].any()
    assert model.calls == [
        {"count": 2, "batch_size": 64, "convert_to_numpy": True,
         "normalize_embeddings": True, "show_progress_bar": False}
    ]  # fmt: skip


def test_a_brain_dreams_and_recalls_with_it() -> None:
    with Reverie.open(":memory:", embedder=SentenceTransformerEmbedder(StandIn())) as rv:
        dream_deploys(rv)
        found = rv.recall("kubectl rollout ImagePullBackOff", "acme/ops", 300)
        assert found.warning is None and found.items


@pytest.mark.skipif(
    importlib.util.find_spec("sentence_transformers") is not None,
    reason="the extra is installed here",
)
def test_by_name_without_the_extra_says_what_to_install() -> None:
    embedder = resolve_embedder("st:all-MiniLM-L6-v2")
    assert isinstance(embedder, SentenceTransformerEmbedder)  # nothing loaded yet
    with pytest.raises(MissingExtra, match=r"reverie\[st\]"):
        embedder.embed(["x"])
    with pytest.raises(InvalidInput, match="st:MODEL"):
        resolve_embedder("st:")
