"""Review mode over real HTTP: a dream held as a plan, read with its diff,
applied or rejected by a write key, refused as stale when the brain moved, hidden from other
scopes' keys."""

from __future__ import annotations

from typing import Any

import httpx

from reverie.cli.demo import load_sample
from tests.server.conftest import Live, as_scope, wait_dream

SCOPE = "acme/reviewer"


def _held(client: httpx.Client, live: Live, prefix: str, scope: str = SCOPE) -> dict[str, Any]:
    """Fresh episodes for ``scope``, dreamt with review on: the plan the dream held."""
    live.rv.ingest(as_scope(load_sample()[:24], scope, prefix))
    started = client.post("/v1/dreams", json={"scope": scope, "review": True})
    assert started.status_code == 202 and started.json()["review"] is True
    done = wait_dream(client, started.json()["cycle_id"])
    assert done["state"] == "done" and done["report"]["status"] == "pending", done
    [plan] = client.get("/v1/plans", params={"scope": scope}).json()
    return plan


def test_a_held_plan_is_read_with_its_diff_then_applied(live: Live) -> None:
    with live.client(live.tokens["acme-write"]) as client:
        before = client.get("/v1/pages", params={"scope": SCOPE}).json()
        plan = _held(client, live, "rv1")
        assert plan["status"] == "pending" and plan["pages"] > 0
        assert client.get("/v1/pages", params={"scope": SCOPE}).json() == before  # held
        again = client.post("/v1/dreams", json={"scope": SCOPE})
        blocked = wait_dream(client, again.json()["cycle_id"])
        assert blocked["state"] == "failed" and plan["id"] in blocked["error"]
        shown = client.get(f"/v1/plans/{plan['id']}").json()
        assert shown["pages"] and all(p["diff"] for p in shown["pages"])
        assert all(e["id"] for p in shown["pages"] for e in p["episodes"])
        applied = client.post(f"/v1/plans/{plan['id']}/apply")
        assert applied.status_code == 200 and applied.json()["status"] == "committed"
        pages = client.get("/v1/pages", params={"scope": SCOPE}).json()
        assert len(pages) > len(before)
        twice = client.post(f"/v1/plans/{plan['id']}/apply")
        assert twice.status_code == 409
        listed = client.get("/v1/plans", params={"scope": SCOPE, "status": "all"}).json()
        assert {p["id"]: p["status"] for p in listed}[plan["id"]] == "applied"


def test_a_plan_is_rejected_with_a_reason_or_refused_as_stale(live: Live) -> None:
    scope = "acme/reviewer-2"
    with live.client(live.tokens["acme-write"]) as client:
        plan = _held(client, live, "rv2", scope)
        rejected = client.post(f"/v1/plans/{plan['id']}/reject", json={"reason": "not yet"})
        assert rejected.status_code == 200
        assert rejected.json()["status"] == "rejected" and rejected.json()["reason"] == "not yet"
        first = live.rv.dream(scope)  # the rejected plan's episodes stayed eligible
        assert first.episodes_marked > 0
        stale = _held(client, live, "rv3", scope)
        live.rv.undo(first.cycle_id)  # the checkpoint moves back under the held plan
        refused = client.post(f"/v1/plans/{stale['id']}/apply")
        assert refused.status_code == 409, refused.text
        assert refused.json()["error"]["code"] == "plan_stale"
        listed = client.get("/v1/plans", params={"scope": scope, "status": "all"}).json()
        assert {p["id"]: p["status"] for p in listed}[stale["id"]] == "stale"


def test_plans_are_hidden_from_other_scopes_and_read_keys_cannot_settle_them(live: Live) -> None:
    scope = "acme/reviewer-3"
    with live.client(live.tokens["acme-write"]) as client:
        plan = _held(client, live, "rv5", scope)
    with live.client(live.tokens["globex"]) as other:
        assert other.get(f"/v1/plans/{plan['id']}").status_code == 404
        assert other.post(f"/v1/plans/{plan['id']}/apply").status_code == 404
        assert other.get("/v1/plans", params={"scope": scope}).status_code == 403
    with live.client(live.tokens["acme-other-agent"]) as agent:
        assert agent.post(f"/v1/plans/{plan['id']}/reject").status_code == 404
    with live.client(live.tokens["acme-read"]) as reader:
        assert reader.get(f"/v1/plans/{plan['id']}").status_code == 200
        assert reader.post(f"/v1/plans/{plan['id']}/apply").status_code == 403
    with live.client(live.tokens["acme-write"]) as client:
        assert client.get("/v1/plans/pl_nope").status_code == 404
        assert client.get("/v1/plans", params={"scope": scope}).json()[0]["status"] == "pending"
