"""Fuzzing the HTTP API over real HTTP (uvicorn on 127.0.0.1): never a 500.

Every answer is either a record that is really stored (read back afterwards) or a 4xx whose body
has the service's one error shape and names the problem (``code`` and ``message``, and the
``field`` for an invalid input). Payloads are hypothesis-generated episodes (the same strategy as
the Python API fuzz), whole batches, recall and dream requests, raw bytes that are not JSON, and
junk query parameters on every read route.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, given, settings

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

import httpx

from reverie import Reverie
from reverie.limits import MAX_METADATA_DEPTH
from reverie.server import create_app
from tests.fuzz.test_episode_fuzz import payloads, values
from tests.server.conftest import start_server, stop_server

HEALTH = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
READS = [
    "/v1/scopes", "/v1/dreams", "/v1/cycles", "/v1/pages", "/v1/stats", "/v1/journal",
    "/v1/episodes/{x}", "/v1/dreams/{x}", "/v1/cycles/{x}", "/v1/cycles/{x}/report",
    "/v1/pages/{x}", "/v1/pages/{x}/why", "/v1/pages/{x}/revisions",
]  # fmt: skip
PARAMS = ["scope", "limit", "status", "since", "as_of", "q", "junk"]


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    rv = Reverie.open(tmp_path_factory.mktemp("httpfuzz") / "h.db")
    token = rv.keys.create("acme", rights="write", name="fuzzer")[1]
    rv.remember({"id": "anchor", "scope": "acme/coder", "situation": "kept", "action": "a"})
    running = start_server(create_app(rv, max_body_bytes=256 * 1024))
    headers = {"Authorization": f"Bearer {token}"}
    try:
        with httpx.Client(base_url=running.url, headers=headers, timeout=30) as client:
            yield client
    finally:
        stop_server(running)
        rv.close()


def _names_the_problem(response: httpx.Response) -> None:
    assert response.status_code < 500, (response.status_code, response.text[:500])
    if response.status_code >= 400:
        error = response.json()["error"]
        assert error["status"] == response.status_code and error["code"] and error["message"]
        if error["code"] == "invalid_input":
            assert error["field"] and error["reason"]


def _kept(api: httpx.Client) -> None:
    assert api.get("/v1/episodes/anchor").json()["situation"] == "kept"


@settings(max_examples=200, deadline=None, suppress_health_check=HEALTH)
@given(payload=payloads)
def test_post_episode_stores_or_names_the_problem(
    api: httpx.Client, payload: dict[str, Any]
) -> None:
    response = api.post("/v1/episodes", content=json.dumps(payload, default=str).encode())
    _names_the_problem(response)
    if response.status_code in (200, 201):
        stored = response.json()
        assert api.get(f"/v1/episodes/{stored['id']}").json()["id"] == stored["id"]
    _kept(api)


@settings(max_examples=60, deadline=None, suppress_health_check=HEALTH)
@given(items=st.lists(payloads, min_size=0, max_size=5), scope=st.none() | values)
def test_batch_reports_every_bad_item(api: httpx.Client, items: list[Any], scope: Any) -> None:
    body: dict[str, Any] = (
        {"episodes": items} if scope is None else {"episodes": items, "scope": scope}
    )
    response = api.post("/v1/episodes/batch", content=json.dumps(body, default=str).encode())
    _names_the_problem(response)
    if response.status_code == 200:
        out = response.json()
        assert out["stored"] + out["duplicates"] + len(out["errors"]) == len(items)
        assert all(e["field"] and e["reason"] for e in out["errors"])


@settings(max_examples=120, deadline=None, suppress_health_check=HEALTH)
@given(
    route=st.sampled_from(["/v1/recall", "/v1/dreams", "/v1/episodes", "/v1/episodes/batch"]),
    body=st.one_of(
        st.binary(max_size=300),
        st.dictionaries(
            st.sampled_from(["query", "scope", "budget_tokens", "dry_run", "x"]), values
        ).map(lambda d: json.dumps(d, default=str).encode()),
        values.map(lambda v: json.dumps(v, default=str).encode()),
    ),
)
def test_any_body_on_any_write_route_is_a_4xx_or_a_record(
    api: httpx.Client, route: str, body: bytes
) -> None:
    _names_the_problem(api.post(route, content=body, headers={"Content-Type": "application/json"}))
    _kept(api)


@settings(max_examples=150, deadline=None, suppress_health_check=HEALTH)
@given(
    route=st.sampled_from(READS),
    ident=st.text(max_size=40),
    params=st.dictionaries(st.sampled_from(PARAMS), st.text(max_size=30), max_size=4),
)
def test_read_routes_never_fail_on_junk_ids_or_parameters(
    api: httpx.Client, route: str, ident: str, params: dict[str, str]
) -> None:
    path = route.replace("{x}", quote(ident, safe="") or "x")
    _names_the_problem(api.get(path, params=params))


def test_oversized_body_is_413_with_the_error_shape(api: httpx.Client) -> None:
    big = json.dumps({"scope": "acme/coder", "situation": "x" * (300 * 1024)}).encode()
    response = api.post("/v1/episodes", content=big)
    assert response.status_code == 413
    _names_the_problem(response)


@settings(max_examples=40, deadline=None, suppress_health_check=HEALTH)
@given(levels=st.integers(min_value=1, max_value=3000), as_list=st.booleans())
def test_metadata_nested_any_depth_is_a_record_or_a_4xx(
    api: httpx.Client, levels: int, as_list: bool
) -> None:
    opening, closing = ("[", "]") if as_list else ('{"k": ', "}")
    deep = opening * levels + "1" + closing * levels
    body = '{"scope": "acme/coder", "situation": "deep", "metadata": {"m": ' + deep + "}}"
    headers = {"Content-Type": "application/json"}
    response = api.post("/v1/episodes", content=body.encode(), headers=headers)
    _names_the_problem(response)
    assert response.status_code in (201, 400, 422)
    assert (response.status_code == 201) == (levels + 1 <= MAX_METADATA_DEPTH)
    if response.status_code == 201:
        assert api.get(f"/v1/episodes/{response.json()['id']}").status_code == 200
    _kept(api)
