"""Fixtures for the model path: a real scripted server, clients pointed at it, a "good model"."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reverie import Config, DreamConfig, Reverie
from reverie.dream.llm_distill import LLMDistillConfig, LLMDistiller
from reverie.llm._http import HTTPSettings
from reverie.llm.fake_server import FakeLLMServer, RecordedRequest, Reply, openai_reply
from reverie.llm.openai_compat import OpenAICompatLLM
from reverie.llm.protocol import LLM
from reverie.store.sqlite import SQLiteStore

FAST = HTTPSettings(timeout_s=2.0, connect_timeout_s=1.0, max_retries=1, backoff_s=0.01)


def fenced_items(user: str) -> list[dict[str, Any]]:
    """The JSON objects between the fence lines of a rendered prompt."""
    lines = user.splitlines()
    start = next(
        i for i, line in enumerate(lines) if line.startswith("DATA FENCE") and "BEGIN" in line
    )
    end = next(i for i, line in enumerate(lines) if line.startswith("DATA FENCE") and "END" in line)
    return [json.loads(line) for line in lines[start + 1 : end]]


def user_prompt(request: RecordedRequest) -> str:
    return str(request.body["messages"][1]["content"])


def good_plan(user: str) -> dict[str, Any]:
    """What a competent model answers: create (or revise) the group's page, citing new episodes."""
    items = fenced_items(user)
    topic = json.loads(user.splitlines()[0].split(": ", 1)[1])
    new = [i for i in items if i["section"] == "new"]
    pages = [i for i in items if i["section"] == "page"]
    claims = [
        {
            "text": f"{i['situation'][:200]}: {i['outcome']}.",
            "episode_ids": [i["id"]],
        }
        for i in new
    ]
    body: dict[str, Any] = {
        "title": f"About {topic}",
        "kind": "lesson",
        "confidence": 0.8,
        "claims": claims,
    }
    if pages:
        page = pages[0]
        claims += page["claims"]
        return {
            "operations": [
                {"op": "revise", "page_id": page["page_id"], "expected_hash": page["hash"], **body}
            ]
        }
    return {"operations": [{"op": "create", "topic_key": topic, **body}]}


def good_model(request: RecordedRequest) -> Reply:
    return openai_reply(good_plan(user_prompt(request)))


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as s:
        yield s


@pytest.fixture
def llm(server: FakeLLMServer) -> Iterator[OpenAICompatLLM]:
    client = OpenAICompatLLM(server.openai_base_url, "fake-model", settings=FAST)
    yield client
    client.close()


def every_group(**dream: Any) -> Config:
    """A model called for every group, however small or recently written: these tests are
    about the call itself (caching, retries, repair, deferral, fencing); the budget that
    decides when a call is worth making is tested in ``tests/dream/test_budget.py``."""
    return Config(dream=DreamConfig(model_min_support=1, model_refresh_growth=None, **dream))


def brain(path: Path, llm: LLM, config: LLMDistillConfig | None = None) -> Reverie:
    store = SQLiteStore(path)
    store.migrate()
    return Reverie(store, config=every_group(), distiller=LLMDistiller(llm, config, cache=store))


def file_digest(path: Path) -> str:
    """sha256 of the database file and its WAL (if any), read after every connection closed."""
    digest = hashlib.sha256(path.read_bytes())
    wal = path.with_name(path.name + "-wal")
    if wal.exists():
        digest.update(wal.read_bytes())
    return digest.hexdigest()
