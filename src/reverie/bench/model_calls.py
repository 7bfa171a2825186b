"""How many model calls a brain costs: the LLM distiller against a local model server.

The server (:class:`reverie.llm.fake_server.FakeLLMServer`) speaks the OpenAI wire format on
127.0.0.1; its scripted model reads the evidence fenced in the prompt and answers a valid plan
(a create for a new problem, a revise of the page shown), citing the episodes it was shown. What
is measured is the cost rule (:mod:`reverie.dream.budget`) and the response cache, through the
real client, over a real socket: calls per episode, cache hits, and how many groups were
reinforced without a call. The plans' wording is not the point; it is a scripted model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from reverie.config import Config
from reverie.dream.llm_distill import LLMDistiller
from reverie.engine import Reverie
from reverie.llm._http import HTTPSettings
from reverie.llm.fake_server import FakeLLMServer, RecordedRequest, Reply, openai_reply
from reverie.llm.openai_compat import OpenAICompatLLM
from reverie.store.sqlite import SQLiteStore

__all__ = ["ModelCalls", "measure_model_calls", "plan_reply"]

_TOPIC = re.compile(r'Group topic_key \(use it for a create\): (".*")')
_FENCE = re.compile(r"DATA FENCE \w+ BEGIN[^\n]*\n(.*)\nDATA FENCE \w+ END", re.S)


@dataclass(frozen=True)
class ModelCalls:
    episodes: int
    calls: int
    cache_hits: int
    cycles: int

    @property
    def per_episode(self) -> float:
        return round(self.calls / self.episodes, 4) if self.episodes else 0.0


def _claim(lines: Sequence[dict[str, Any]]) -> dict[str, Any]:
    new = [line for line in lines if line.get("section") == "new"]
    lesson = next((line["lesson"] for line in new if line.get("lesson")), None)
    text = lesson or next((line.get("situation") for line in new), None) or "observed"
    return {"text": str(text)[:300], "episode_ids": [line["id"] for line in new][:200]}


def plan_reply(request: RecordedRequest) -> Reply:
    """A scripted model: a create for the group's topic, or a revise of the page shown."""
    prompt = request.body["messages"][-1]["content"]
    topic = json.loads(_TOPIC.search(prompt).group(1))  # type: ignore[union-attr]
    fenced = _FENCE.search(prompt)
    lines = [json.loads(line) for line in (fenced.group(1) if fenced else "").splitlines()]
    claim = _claim(lines)
    content = {"title": claim["text"][:120], "kind": "lesson", "confidence": 0.7,
               "claims": [claim]}  # fmt: skip
    page = next((line for line in lines if line.get("section") == "page"), None)
    if page is None:
        op = {"op": "create", "topic_key": topic, **content}
    else:
        old = page.get("claims") or []
        op = {"op": "revise", "page_id": page["page_id"], "expected_hash": page["hash"],
              **content, "claims": [*old, claim]}  # fmt: skip
    return openai_reply({"operations": [op]})


def measure_model_calls(
    days: Sequence[Sequence[dict[str, Any]]],
    scopes: Sequence[str],
    day_end: Callable[[int], datetime],
    workdir: Path,
    *,
    late: Sequence[dict[str, Any]] = (),
    final: datetime | None = None,
    config: Config | None = None,
) -> ModelCalls:
    """Ingest ``days`` day by day, dreaming every scope at each ``day_end(day)`` with the LLM
    distiller, then ``late`` and a final dream at ``final``; count the model calls made."""
    settings = HTTPSettings(timeout_s=10.0, max_retries=0)
    with FakeLLMServer(responder=plan_reply) as server:
        store = SQLiteStore(workdir / "model-calls.db")
        store.migrate()
        llm = OpenAICompatLLM(server.openai_base_url, "scripted", settings=settings)
        cycles = hits = 0
        distiller = LLMDistiller(llm, cache=store)
        with Reverie(store, config=config, distiller=distiller) as rv:
            for day, rows in enumerate(days):
                if rows:
                    rv.ingest(list(rows))
                for scope in scopes:
                    report = rv.dream(scope, now=day_end(day))
                    cycles, hits = cycles + 1, hits + report.cache_hits
            if late:
                rv.ingest(list(late))
            for scope in scopes:
                report = rv.dream(scope, now=final or day_end(len(days)))
                cycles, hits = cycles + 1, hits + report.cache_hits
        episodes = sum(len(rows) for rows in days) + len(late)
        return ModelCalls(episodes=episodes, calls=len(server.requests), cache_hits=hits,
                          cycles=cycles)  # fmt: skip
