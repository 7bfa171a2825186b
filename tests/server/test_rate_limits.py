"""Per-key rate limits: the bucket's arithmetic on a given clock, and 429s over real HTTP."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from reverie import Reverie
from reverie.errors import InvalidInput
from reverie.server import create_app
from reverie.server.ratelimit import Rate, RateLimiter, RateLimits, limits_for, route_class
from tests.server.conftest import start_server, stop_server


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_bucket_grants_its_burst_then_refills_at_its_rate() -> None:
    clock = Clock()
    limiter = RateLimiter(RateLimits(read=Rate(per_second=2.0, burst=3)), clock=clock)
    assert [limiter.take("k1", "read") for _ in range(3)] == [0.0, 0.0, 0.0]
    wait = limiter.take("k1", "read")
    assert wait == pytest.approx(0.5)
    clock.now += 0.5
    assert limiter.take("k1", "read") == 0.0
    clock.now += 100.0  # a long idle refills to the burst, never beyond it
    assert [limiter.take("k1", "read") for _ in range(4)][-1] > 0.0


def test_keys_and_route_classes_have_their_own_buckets() -> None:
    limits = RateLimits(read=Rate(1.0, 1), write=Rate(1.0, 1), destructive=Rate(1.0, 1))
    limiter = RateLimiter(limits, clock=Clock())
    assert limiter.take("k1", "read") == 0.0
    assert limiter.take("k1", "read") > 0.0
    assert limiter.take("k2", "read") == 0.0
    assert limiter.take("k1", "write") == 0.0
    assert limiter.take("k1", "destructive") == 0.0


@pytest.mark.parametrize(
    ("method", "path", "expected"),
    [
        ("GET", "/v1/pages", "read"),
        ("POST", "/v1/recall", "read"),
        ("POST", "/v1/episodes/batch", "write"),
        ("POST", "/v1/dreams", "write"),
        ("POST", "/v1/forget", "destructive"),
        ("GET", "/v1/forget/er_1", "read"),
        ("POST", "/v1/cycles/cy_1/undo", "destructive"),
        ("DELETE", "/v1/anything", "destructive"),
    ],
)
def test_each_route_has_one_class(method: str, path: str, expected: str) -> None:
    assert route_class(method, path) == expected


def test_auto_limits_only_beyond_loopback_and_specs_parse() -> None:
    assert limits_for("auto", "127.0.0.1") is None
    assert limits_for("auto", "0.0.0.0") == RateLimits()
    assert limits_for("off", "0.0.0.0") is None
    assert limits_for("on", "::1") == RateLimits()
    spec = limits_for("read=5/10, destructive=0.5/2", "127.0.0.1")
    assert spec is not None
    assert spec.read == Rate(5.0, 10)
    assert spec.destructive == Rate(0.5, 2)
    assert spec.write == RateLimits().write
    for bad in ("reads=5/10", "read=", "read=fast/1", "read=-1/3"):
        with pytest.raises(InvalidInput, match="--rate-limit"):
            limits_for(bad, "127.0.0.1")


def test_a_flooding_key_gets_429_with_retry_after_and_another_key_is_served(
    tmp_path: Path,
) -> None:
    rv = Reverie.open(tmp_path / "brain.db")
    flooder = rv.keys.create("acme", rights="write")[1]
    other = rv.keys.create("acme", rights="write")[1]
    limits = RateLimits(read=Rate(per_second=0.01, burst=3))
    running = start_server(create_app(rv, rate_limits=limits))
    try:
        with httpx.Client(base_url=running.url, timeout=10) as client:
            recall = {"scope": "acme/coder", "query": "deploy", "budget_tokens": 50}
            answers = [
                client.post("/v1/recall", json=recall, headers={"X-API-Key": flooder})
                for _ in range(5)
            ]
            assert [a.status_code for a in answers] == [200, 200, 200, 429, 429]
            refused = answers[-1]
            assert int(refused.headers["Retry-After"]) >= 1
            error = refused.json()["error"]
            assert error["code"] == "rate_limited"
            assert error["route_class"] == "read"
            assert "retry after" in error["message"]
            served = client.post("/v1/recall", json=recall, headers={"X-API-Key": other})
            assert served.status_code == 200
            bearer = client.get(
                "/v1/pages?scope=acme/coder", headers={"Authorization": f"Bearer {flooder}"}
            )
            assert bearer.status_code == 429  # the same key, by the other header, same bucket
            write = {"scope": "acme/coder", "situation": "s", "action": "a", "outcome": "success"}
            assert (
                client.post("/v1/episodes", json=write, headers={"X-API-Key": flooder}).status_code
                == 201
            )
    finally:
        stop_server(running)
        rv.close()


def test_a_forged_token_with_a_keys_id_cannot_drain_that_keys_bucket(tmp_path: Path) -> None:
    rv = Reverie.open(tmp_path / "brain.db")
    _key, token = rv.keys.create("acme", rights="read")
    forged = "_".join(token.split("_", 2)[:2]) + "_" + "x" * 43
    running = start_server(create_app(rv, rate_limits=RateLimits(read=Rate(0.1, 2))))
    try:
        with httpx.Client(base_url=running.url, timeout=10) as client:
            for _ in range(5):
                answer = client.get("/v1/pages?scope=acme/coder", headers={"X-API-Key": forged})
                assert answer.status_code == 401
            real = client.get("/v1/pages?scope=acme/coder", headers={"X-API-Key": token})
            assert real.status_code == 200, real.text
    finally:
        stop_server(running)
        rv.close()
