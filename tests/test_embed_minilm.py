"""The default embedder (all-MiniLM-L6-v2 int8 on ONNX Runtime) and embedder resolution."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from reverie.embed import Embedder, HashingEmbedder, resolve_embedder
from reverie.embed.onnx import MiniLMEmbedder, minilm_available
from reverie.errors import InvalidInput

needs_model = pytest.mark.skipif(
    not minilm_available(),
    reason="the embed extra is not installed (pip install 'reverie[embed]')",
)


def test_importing_reverie_loads_no_model() -> None:
    code = (
        "import sys, reverie, reverie.embed, reverie.embed.onnx;"
        "print('onnxruntime' in sys.modules or 'tokenizers' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_resolution_by_name() -> None:
    assert resolve_embedder(None) is None
    assert resolve_embedder("none") is None
    assert isinstance(resolve_embedder("hashing"), HashingEmbedder)
    mine = HashingEmbedder(dim=8)
    assert resolve_embedder(mine) is mine
    auto = resolve_embedder("auto")
    assert isinstance(auto, MiniLMEmbedder if minilm_available() else HashingEmbedder)
    with pytest.raises(InvalidInput, match="embedder"):
        resolve_embedder("word2vec")


@needs_model
def test_minilm_rows_are_unit_vectors_and_empty_text_is_zero() -> None:
    embedder = MiniLMEmbedder()
    assert isinstance(embedder, Embedder)
    vectors = embedder.embed(["Deploy the API with kubectl.", "", "deploy the api with kubectl"])
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.linalg.norm(vectors[0]) == pytest.approx(1.0, abs=1e-5)
    assert not vectors[1].any()
    assert float(vectors[0] @ vectors[2]) > 0.95  # case and punctuation barely matter


@needs_model
def test_minilm_knows_meaning_not_just_words() -> None:
    a, b, c = MiniLMEmbedder().embed(
        [
            "I went to a support group for LGBTQ people yesterday.",
            "When did Caroline attend the LGBTQ support meeting?",
            "The deployment to staging failed with ImagePullBackOff.",
        ]
    )
    assert float(a @ b) > 0.5 > float(a @ c)


@needs_model
def test_batches_and_order_do_not_change_a_text_vector() -> None:
    embedder = MiniLMEmbedder()
    texts = [f"episode number {i} about {'cats' if i % 2 else 'deploys'}" for i in range(70)]
    together = embedder.embed(texts)
    alone = embedder.embed([texts[41]])
    assert np.allclose(together[41], alone[0], atol=1e-4)
    assert set(embedder._sessions) == {None, 1}  # one text (a query) runs on its own thread
