"""The hashing embedder: unit rows, deterministic across processes, similar text scores higher."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reverie.embed import Embedder, HashingEmbedder, cosine_matrix, tokenize
from reverie.errors import InvalidInput


def test_shape_dtype_and_unit_rows() -> None:
    vectors = HashingEmbedder(dim=64).embed(["deploy the api", "Search the web", ""])
    assert vectors.shape == (3, 64)
    assert vectors.dtype == np.float32
    norms = np.linalg.norm(vectors, axis=1)
    assert norms[:2] == pytest.approx([1.0, 1.0], abs=1e-6)
    assert norms[2] == 0.0


def test_no_texts_gives_an_empty_matrix() -> None:
    assert HashingEmbedder(dim=32).embed([]).shape == (0, 32)


def test_it_is_an_embedder_with_a_model_id() -> None:
    embedder = HashingEmbedder()
    assert isinstance(embedder, Embedder)
    assert (embedder.model_id, embedder.dim) == ("hashing-v1-256", 256)
    assert HashingEmbedder(dim=512).model_id == "hashing-v1-512"


@pytest.mark.parametrize("dim", [0, 1, -3])
def test_a_useless_dim_is_refused(dim: int) -> None:
    with pytest.raises(InvalidInput, match="dim"):
        HashingEmbedder(dim=dim)


def test_case_and_punctuation_do_not_matter() -> None:
    a, b = HashingEmbedder().embed(["Deploy the API!", "deploy the api"])
    assert np.array_equal(a, b)


def test_similar_texts_are_closer_than_unrelated_ones() -> None:
    texts = [
        "kubectl apply timed out deploying the api service",
        "deploying the api service: kubectl apply timed out again",
        "searched the web for numpy release notes",
    ]
    sims = cosine_matrix(*(HashingEmbedder().embed(texts),) * 2)
    assert sims[0, 1] > 0.5 > sims[0, 2]


def test_word_order_matters_through_bigrams() -> None:
    forward, backward = HashingEmbedder().embed(["alpha beta gamma", "gamma beta alpha"])
    assert 0.0 < float(forward @ backward) < 0.99


def test_same_vectors_in_another_process_whatever_the_hash_seed() -> None:
    text = "rotate the database credentials after the leak"
    here = HashingEmbedder(dim=128).embed([text]).tobytes().hex()
    code = (
        "from reverie.embed import HashingEmbedder;"
        f"print(HashingEmbedder(dim=128).embed([{text!r}]).tobytes().hex())"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert out.stdout.strip() == here


def test_importing_the_module_does_not_import_numpy() -> None:
    code = "import sys, reverie.embed, reverie.dream.cluster; print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_cosine_matrix_normalises_and_tolerates_zero_rows() -> None:
    a = np.array([[3.0, 4.0], [0.0, 0.0]])
    b = np.array([[6.0, 8.0], [-4.0, 3.0]])
    sims = cosine_matrix(a, b)
    assert sims.shape == (2, 2)
    assert sims[0] == pytest.approx([1.0, 0.0], abs=1e-6)
    assert sims[1].tolist() == [0.0, 0.0]


def test_tokenize_keeps_inner_apostrophes() -> None:
    assert tokenize("It's the user_id, café!") == ["it's", "the", "user", "id", "café"]


@given(st.lists(st.text(max_size=60), max_size=8))
@settings(max_examples=50, deadline=None)
def test_rows_are_unit_or_zero_and_independent_of_the_batch(texts: list[str]) -> None:
    embedder = HashingEmbedder(dim=32)
    batch = embedder.embed(texts)
    assert batch.shape == (len(texts), 32)
    for text, row in zip(texts, batch, strict=True):
        norm = float(np.linalg.norm(row))
        assert norm == pytest.approx(1.0, abs=1e-5) or norm == 0.0
        assert np.array_equal(row, embedder.embed([text])[0])
