"""The HTTP API over real HTTP (uvicorn on 127.0.0.1, httpx): every read, write and error."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from reverie import Reverie
from reverie.dream.distill import ExtractiveDistiller
from reverie.models.plan import Evidence, Plan
from reverie.server import create_app
from reverie.server.schemas import MAX_BATCH
from reverie.testing import ScriptedDistiller
from tests.server.conftest import Live, start_server, stop_server, wait_dream
from tests.server.test_auth import flat


def test_health_and_openapi(live: Live) -> None:
    assert httpx.get(live.url + "/health").json() == {"status": "ok", "version": "0.1.0"}
    schema = httpx.get(live.url + "/openapi.json").json()
    for route in flat(live.app.routes):
        methods = getattr(route, "methods", None) or set()
        if getattr(route, "include_in_schema", False):
            for method in methods - {"HEAD"}:
                assert method.lower() in schema["paths"][route.path], (method, route.path)
    assert "HTTPBearer" in schema["components"]["securitySchemes"]
    assert schema["paths"]["/v1/pages/{page_id}/why"]["get"]["responses"]["200"]


def test_append_one_episode_is_idempotent_and_conflicts_are_409(live: Live) -> None:
    episode = {
        "id": "ep-http-1",
        "scope": "acme/coder",
        "created_at": "2026-11-20T10:00:00Z",
        "situation": "HTTP test",
        "action": "POST /v1/episodes",
        "outcome": "success",
    }
    with live.client(live.tokens["acme-write"]) as client:
        first = client.post("/v1/episodes", json=episode)
        again = client.post("/v1/episodes", json=episode)
        clash = client.post("/v1/episodes", json={**episode, "action": "something else"})
        seq = client.post("/v1/episodes", json={**episode, "id": "ep-http-2", "seq": 5})
        read = client.get("/v1/episodes/ep-http-1")
    assert first.status_code == 201 and first.json()["seq"] > 0
    assert again.status_code == 201, again.text
    assert again.json()["seq"] == first.json()["seq"]
    assert clash.status_code == 409 and clash.json()["error"]["code"] == "conflict"
    assert seq.status_code == 422 and seq.json()["error"]["field"] == "seq"
    assert read.json()["action"] == "POST /v1/episodes"


def test_a_transcript_with_its_reward_is_stored_as_turns_and_one_task(live: Live) -> None:
    call = {"id": "c1", "function": {"name": "refund", "arguments": '{"order": "1001"}'}}
    run = {
        "id": "http-run-1",
        "reward": 1,
        "feedback": {"rating": 5, "comment": "quick"},
        "messages": [
            {"role": "user", "content": "Hi! Refund order 1001, it broke."},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": '{"ok": true}'},
            {"role": "assistant", "content": "Refunded."},
        ],
    }
    bad = {"messages": [{"role": "user", "content": "x"}], "reward": "lots"}
    with live.client(live.tokens["acme-write"]) as client:
        body = {"transcripts": [run, bad], "scope": "acme/coder"}
        answer = client.post("/v1/transcripts", json=body).json()
        found = client.get("/v1/episodes", params={"scope": "acme/coder", "q": "refund"}).json()
    assert answer["stored"] == 3  # the run's turn and task, and the bad run's turn
    assert [(e["index"], e["field"]) for e in answer["errors"]] == [(1, "outcome")]
    items = found["episodes"]
    tasks = [e for e in items if e["metadata"].get("task")]
    assert len(tasks) == 1 and tasks[0]["outcome"] == "success"
    assert tasks[0]["outcome_details"] == "quick"


def test_invalid_input_names_the_field_and_the_reason(live: Live) -> None:
    with live.client(live.tokens["acme-write"]) as client:
        empty = client.post("/v1/episodes", json={"scope": "acme/coder"}).json()["error"]
        big = client.post(
            "/v1/episodes", json={"scope": "acme/coder", "situation": "s", "importance": 11}
        ).json()["error"]
        scope = client.get("/v1/pages", params={"scope": "acme"}).json()["error"]
        broken = client.post(
            "/v1/recall", content=b"{oops", headers={"content-type": "application/json"}
        ).json()["error"]
        missing = client.post("/v1/recall", json={"scope": "acme/coder"}).json()["error"]
    assert empty["status"] == 422 and "situation or an action" in empty["reason"]
    assert big["field"] == "importance" and "10" in big["reason"]
    assert scope["field"] == "scope" and "tenant/agent" in scope["reason"]
    assert broken["field"] == "body" and "JSON" in broken["reason"]
    assert missing["field"] == "query" and missing["reason"] == "Field required"


def test_batch_stores_the_good_and_reports_the_bad(live: Live) -> None:
    items: list[dict[str, Any]] = [
        {"id": "ep-batch-1", "situation": "one", "action": "a"},
        {"id": "ep-batch-2", "situation": "", "action": ""},
        {"id": "ep-batch-3", "situation": "three", "action": "a", "outcome": "exploded"},
        {"id": "ep-batch-4", "situation": "four", "action": "a"},
    ]
    with live.client(live.tokens["acme-write"]) as client:
        body = client.post(
            "/v1/episodes/batch", json={"episodes": items, "scope": "acme/coder"}
        ).json()
        too_many = client.post(
            "/v1/episodes/batch", json={"episodes": [{"situation": "x"}] * (MAX_BATCH + 1)}
        )
    assert body["stored"] == 2 and body["duplicates"] == 0
    assert [(e["index"], e["field"]) for e in body["errors"]] == [(1, "input"), (2, "outcome")]
    assert too_many.status_code in (413, 422)


def test_request_bodies_over_the_limit_get_413(live: Live) -> None:
    huge = {"scope": "acme/coder", "situation": "x" * 300_000, "action": "a"}

    def chunks() -> Iterator[bytes]:
        for _ in range(40):
            yield b" " * 10_000

    with live.client(live.tokens["acme-write"]) as client:
        declared = client.post("/v1/episodes", json=huge)
        streamed = client.post(
            "/v1/episodes", content=chunks(), headers={"content-type": "application/json"}
        )
    for response in (declared, streamed):
        assert response.status_code == 413
        assert "split it" in response.json()["error"]["message"]


def test_reads_pages_why_history_stats_cycles_and_reports(live: Live) -> None:
    with live.client(live.tokens["acme-read"]) as client:
        pages = client.get("/v1/pages", params={"scope": "acme/coder"}).json()
        assert pages and all(p["scope"]["tenant"] == "acme" for p in pages)
        page_id = pages[0]["id"]
        page = client.get(f"/v1/pages/{page_id}").json()
        assert page["markdown"].startswith("# ")
        why = client.get(f"/v1/pages/{page_id}/why").json()
        cited = {e for r in why["revisions"] for c in r["claims"] for e in c["episode_ids"]}
        assert cited and cited == {e["id"] for e in why["episodes"]}
        history = client.get(f"/v1/pages/{page_id}/revisions").json()
        assert [r["number"] for r in history] == list(range(1, len(history) + 1))
        stats = client.get("/v1/stats", params={"scope": "acme/coder"}).json()
        assert stats["pages"] >= len(pages) and stats["cycles"] >= 1
        cycles = client.get("/v1/cycles", params={"scope": "acme/coder", "limit": 3}).json()
        assert 1 <= len(cycles) <= 3
        report = client.get(f"/v1/cycles/{cycles[0]['id']}/report").json()
        assert report["cycle_id"] == cycles[0]["id"] and "timings" in report
        assert client.get("/v1/cycles/cy_nope").status_code == 404
        journal = client.get("/v1/journal", params={"scope": "acme/coder"}).json()
        assert journal["series"][-1]["episodes"] >= journal["series"][0]["episodes"]
        recalled = client.post(
            "/v1/recall", json={"query": "deploy to staging with kubectl", "scope": "acme/coder"}
        ).json()
        assert recalled["items"] and recalled["used_tokens"] <= recalled["budget_tokens"]


def test_dreams_run_in_the_background_and_one_per_scope(tmp_path: Path) -> None:
    gate = threading.Event()
    extractive = ExtractiveDistiller()

    def slow(evidence: Evidence) -> Plan:
        gate.wait(10)
        return extractive.distill(evidence)

    rv = Reverie.open(tmp_path / "b.db", distiller=ScriptedDistiller(slow))
    _key, token = rv.keys.create("acme", rights="write")
    running = start_server(create_app(rv))
    try:
        with httpx.Client(
            base_url=running.url, headers={"Authorization": f"Bearer {token}"}, timeout=10
        ) as client:
            for n in range(3):
                episode = {"scope": "acme/coder", "situation": "deploy", "action": "kubectl"}
                episode |= {"outcome": "failure", "error": "timeout", "id": f"e{n}"}
                client.post("/v1/episodes", json=episode).raise_for_status()
            started = client.post("/v1/dreams", json={"scope": "acme/coder"})
            assert started.status_code == 202
            cycle_id = started.json()["cycle_id"]
            assert client.get(f"/v1/dreams/{cycle_id}").json()["state"] == "running"
            busy = client.post("/v1/dreams", json={"scope": "acme/coder"})
            assert busy.status_code == 409 and cycle_id in busy.json()["error"]["message"]
            gate.set()
            done = wait_dream(client, cycle_id)
            assert done["state"] == "done" and done["report"]["episodes_marked"] == 3
            assert client.get(f"/v1/cycles/{cycle_id}/report").json()["created"] >= 1
            recent = client.get("/v1/dreams", params={"scope": "acme/coder"}).json()
            assert [d["cycle_id"] for d in recent] == [cycle_id]
    finally:
        gate.set()
        stop_server(running)
        rv.close()
