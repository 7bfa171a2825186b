"""The OpenAI-compatible embedder against a real local HTTP server speaking ``POST /embeddings``."""

from __future__ import annotations

import random
from collections.abc import Iterator

import numpy as np
import pytest

from reverie import Reverie
from reverie.embed import HashingEmbedder, resolve_embedder
from reverie.embed.openai import BATCH, OpenAIEmbedder
from reverie.errors import LLMBadOutput
from reverie.llm.fake_server import FakeLLMServer, RecordedRequest, Reply
from tests.conftest import dream_deploys

pytest.importorskip("httpx")

MEANING = HashingEmbedder(dim=64)  # what the fake server "computes": word overlap, deterministic


def _embeddings(request: RecordedRequest) -> Reply:
    if not request.path.endswith("/embeddings"):
        return Reply(status=404, body={"error": {"message": "not found"}})
    texts = request.body["input"]
    vectors = MEANING.embed(texts) * 3.0  # not unit length: the client must normalise
    data = [
        {"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)
    ]
    random.Random(len(texts)).shuffle(data)  # the client must order by index
    return Reply(body={"object": "list", "data": data, "model": request.body["model"]})


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(_embeddings) as s:
        yield s


def test_vectors_are_batched_ordered_and_normalised(server: FakeLLMServer) -> None:
    embedder = OpenAIEmbedder("emb-1", server.openai_base_url, "sk-test")
    texts = [f"deploy number {i} timed out" for i in range(BATCH * 2 + 5)] + [""]
    out = embedder.embed(texts)
    assert out.shape == (len(texts), 64) and out.dtype == np.float32 and embedder.dim == 64
    assert len(server.requests) == 3  # 261 texts in batches of 128
    assert all(r.body["model"] == "emb-1" for r in server.requests)
    assert server.requests[0].headers.get("Authorization") == "Bearer sk-test"
    expected = MEANING.embed(texts[:-1])
    assert np.allclose(out[:-1], expected, atol=1e-5)  # in input order, unit length
    assert not out[-1].any()  # an empty text is the zero vector
    assert embedder.model_id == "openai:emb-1"


def test_a_malformed_answer_is_a_clear_error(server: FakeLLMServer) -> None:
    server.push(Reply(body={"data": [{"index": 0}]}))
    with pytest.raises(LLMBadOutput, match="malformed"):
        OpenAIEmbedder("emb-1", server.openai_base_url).embed(["one"])
    server.push(Reply(body={"object": "list"}))
    with pytest.raises(LLMBadOutput, match="no data list"):
        OpenAIEmbedder("emb-1", server.openai_base_url).embed(["one"])


def test_by_name_from_the_environment_recall_finds_by_meaning(
    server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REVERIE_EMBED_BASE_URL", server.openai_base_url)
    embedder = resolve_embedder("openai:emb-2")
    assert embedder is not None and embedder.model_id == "openai:emb-2"
    with Reverie.open(":memory:", embedder=embedder) as rv:
        dream_deploys(rv)
        paths = {r.path for r in server.requests}
        assert paths == {"/v1/embeddings"}  # the cycle embedded through the endpoint
        found = rv.recall("kubectl rollout ImagePullBackOff", "acme/ops", 300)
        assert found.warning is None and found.items
