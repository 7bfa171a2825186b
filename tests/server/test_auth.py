"""Keys: stored hashed, bound to a tenant (or one agent), read or write — checked on EVERY route.

The route table below must name every route the app has (the test fails on a new route without
an entry), so no endpoint can be added without its cross-scope check.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import httpx
import pytest
from fastapi.routing import APIRoute
from starlette.routing import Mount, Route

from reverie.cli.demo import load_sample
from tests.server.conftest import Live, as_scope

PUBLIC = {("GET", "/health"), ("GET", "/"), ("GET", "/favicon.ico")}
UNSCOPED = {("GET", "/v1/scopes")}  # answers for the key's own tenant only (checked below)


def acme_ids(live: Live) -> dict[str, str]:
    page = live.rv.pages("acme/coder")[0]
    cycle = live.rv.cycles("acme/coder")[0]
    ids = {"page_id": page.id, "cycle_id": cycle.id, "episode_id": "ep-demo-001"}
    return {**ids, "plan_id": _held_plan(live), "erasure_id": _receipt(live)}


def _receipt(live: Live) -> str:
    """An applied erasure of acme's (in acme/erased, so acme/coder keeps its episodes)."""
    done = [r for r in live.rv.erasures() if r.details.get("scopes") == ["acme/erased"]]
    if not done:
        live.rv.remember({"scope": "acme/erased", "situation": "s", "action": "a", "id": "er-1"})
        done = [live.rv.forget(scope="acme/erased", apply=True)]
    return done[0].id


def _held_plan(live: Live) -> str:
    """A plan held for review in acme/held (its own scope, so acme/coder keeps dreaming)."""
    held = live.rv.plans("acme/held")
    if not held:
        live.rv.ingest(as_scope(load_sample()[:12], "acme/held", "held"))
        live.rv.dream("acme/held", review=True)
        held = live.rv.plans("acme/held")
    return held[0].id


def foreign_requests() -> dict[tuple[str, str], dict[str, Any]]:
    """For each route: a request that targets acme/coder's data."""
    acme = {"scope": "acme/coder"}
    episode = {"scope": "acme/coder", "situation": "probe", "action": "probe"}
    return {
        ("POST", "/v1/episodes"): {"json": episode},
        ("POST", "/v1/episodes/batch"): {"json": {"episodes": [episode]}},
        ("POST", "/v1/transcripts"): {
            "json": {"transcripts": [{"messages": [{"role": "user", "content": "probe"}]}], **acme}
        },
        ("GET", "/v1/episodes/{episode_id}"): {},
        ("GET", "/v1/episodes"): {"params": {**acme, "q": "deploy"}},
        ("GET", "/v1/episodes/{episode_id}/pages"): {},
        ("POST", "/v1/recall"): {
            "json": {"query": "deploy staging", **acme},
            "params": {"explain": "true"},
        },
        ("POST", "/v1/dreams"): {"json": acme},
        ("GET", "/v1/dreams"): {"params": acme},
        ("GET", "/v1/dreams/{cycle_id}"): {},
        ("GET", "/v1/cycles"): {"params": acme},
        ("GET", "/v1/cycles/{cycle_id}"): {},
        ("GET", "/v1/cycles/{cycle_id}/report"): {},
        ("POST", "/v1/cycles/{cycle_id}/undo"): {},
        ("GET", "/v1/pages"): {"params": acme},
        ("GET", "/v1/pages/{page_id}"): {},
        ("GET", "/v1/pages/{page_id}/why"): {},
        ("GET", "/v1/pages/{page_id}/revisions"): {},
        ("POST", "/v1/pages/{page_id}/restore"): {"json": {"revision": 1}},
        ("POST", "/v1/pages/{page_id}/edit"): {"json": {"revision": 1, "title": "probe"}},
        ("GET", "/v1/stats"): {"params": acme},
        ("GET", "/v1/journal"): {"params": acme},
        ("GET", "/v1/plans"): {"params": acme},
        ("GET", "/v1/plans/{plan_id}"): {},
        ("POST", "/v1/plans/{plan_id}/apply"): {},
        ("POST", "/v1/plans/{plan_id}/reject"): {"json": {"reason": "probe"}},
        ("POST", "/v1/forget"): {"json": {**acme, "apply": True}},
        ("GET", "/v1/forget/{erasure_id}"): {},
    }


def flat(routes: list[Any]) -> list[Any]:
    """Routes with included routers opened (newer FastAPI nests them in one route object)."""
    found: list[Any] = []
    for route in routes:
        inner = getattr(route, "original_router", None)
        found += flat(inner.routes) if inner is not None else [route]
    return found


def app_routes(app: Any) -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    for route in flat(app.routes):
        if isinstance(route, APIRoute | Route):
            path = route.path
            if path in ("/openapi.json",):
                continue
            found |= {(m, path) for m in (route.methods or ()) if m != "HEAD"}
    return found


def test_route_table_covers_every_route(live: Live) -> None:
    routes = app_routes(live.app)
    assert routes == set(foreign_requests()) | PUBLIC | UNSCOPED
    mounts = [r.path for r in flat(live.app.routes) if isinstance(r, Mount)]
    assert mounts == ["/dashboard"]  # static files only: the dashboard's data is /v1


@pytest.mark.parametrize("intruder", ["globex", "acme-other-agent", "globex-admin"])
def test_a_key_of_another_scope_gets_403_or_404_everywhere(live: Live, intruder: str) -> None:
    ids = acme_ids(live)
    before = live.rv.status("acme/coder")
    with live.client(live.tokens[intruder]) as client:
        for (method, path), kwargs in foreign_requests().items():
            response = client.request(method, path.format(**ids), **kwargs)
            assert response.status_code in (403, 404), (method, path, response.text)
            error = response.json()["error"]
            assert error["code"] in ("forbidden", "not_found")
            assert "probe" not in response.text and "kubectl" not in response.text
        scopes = client.get("/v1/scopes").json()["scopes"]
    assert "acme/coder" not in scopes
    assert live.rv.status("acme/coder") == before  # nothing written, nothing dreamt
    assert [p.id for p in live.rv.plans("acme/held")] == [ids["plan_id"]]  # still pending


def test_a_foreign_id_looks_exactly_like_a_missing_one(live: Live) -> None:
    ids = acme_ids(live)
    with live.client(live.tokens["globex"]) as client:
        foreign = client.get(f"/v1/pages/{ids['page_id']}").json()
        missing = client.get("/v1/pages/pg_does_not_exist").json()
    assert foreign["error"]["code"] == missing["error"]["code"] == "not_found"
    assert foreign["error"]["message"] == f"no page {ids['page_id']}"


def test_a_batch_item_of_another_scope_refuses_the_whole_batch(live: Live) -> None:
    own = {"scope": "globex/bot", "situation": "fine", "action": "fine", "id": "gx-batch-ok"}
    foreign = {"scope": "acme/coder", "situation": "sneak", "action": "sneak"}
    with live.client(live.tokens["globex"]) as client:
        response = client.post("/v1/episodes/batch", json={"episodes": [own, foreign]})
    assert response.status_code == 403
    assert response.json()["error"]["field"] == "episodes.1.scope"
    with pytest.raises(Exception, match="gx-batch-ok"):
        live.rv.episode("gx-batch-ok", tenant="globex")


def test_requests_without_a_valid_key_get_401(live: Live) -> None:
    with live.client() as anonymous:
        response = anonymous.get("/v1/pages", params={"scope": "acme/coder"})
        assert response.status_code == 401
        assert "reverie keys create" in response.json()["error"]["message"]
        assert anonymous.get("/health").status_code == 200
    with live.client("rvk_0123456789abcdef_" + "x" * 43) as forged:
        assert forged.get("/v1/scopes").status_code == 401
    headers = {"X-API-Key": live.tokens["acme-read"]}
    assert httpx.get(live.url + "/v1/scopes", headers=headers).status_code == 200


def test_read_keys_cannot_write(live: Live) -> None:
    with live.client(live.tokens["acme-read"]) as client:
        episode = {"scope": "acme/coder", "situation": "s", "action": "a"}
        response = client.post("/v1/episodes", json=episode)
        assert response.status_code == 403
        assert "read-only" in response.json()["error"]["message"]
        assert client.post("/v1/dreams", json={"scope": "acme/coder"}).status_code == 403
        assert client.post("/v1/recall", json={"query": "deploy", "scope": "acme/coder"}).is_success


def test_an_agent_key_reaches_its_agent_only(live: Live) -> None:
    with live.client(live.tokens["acme-coder"]) as client:
        assert client.get("/v1/pages", params={"scope": "acme/coder"}).status_code == 200
        assert client.get("/v1/pages", params={"scope": "acme/researcher"}).status_code == 403
        assert client.get("/v1/scopes").json() == {
            "bound_to": "acme/coder",
            "rights": "write",
            "scopes": ["acme/coder"],
            "orgs": [],  # an agent's key does not reach its tenant's org brain
        }


def test_revoked_keys_stop_working_and_secrets_are_not_stored(live: Live, tmp_path: Any) -> None:
    key, token = live.rv.keys.create("acme", rights="read", name="temp")
    with live.client(token) as client:
        assert client.get("/v1/scopes").status_code == 200
        live.rv.keys.revoke(key.id)
        assert client.get("/v1/scopes").status_code == 401
    secret = token.split("_", 2)[2]  # rvk_<id>_<secret>: the secret may hold "_" itself
    db = live.rv.store.url.removeprefix("sqlite:///")
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT * FROM api_keys").fetchall()
    assert rows and not any(secret in str(cell) for row in rows for cell in row)
    assert all(str(row[6]).startswith("hmac-sha256:") for row in rows)


def _b1(scope: str, text: str) -> dict[str, Any]:
    return {"id": "b1", "scope": scope, "situation": text, "action": "kubectl apply"}


def test_two_tenants_each_store_their_own_b1_and_neither_learns_of_the_other(
    live: Live,
) -> None:
    tokens = {
        "initech": live.rv.keys.create("initech", rights="write")[1],
        "initech-admin": live.rv.keys.create("initech", rights="admin")[1],
    }
    with (
        live.client(live.tokens["acme-write"]) as acme,
        live.client(tokens["initech"]) as initech,
        live.client(live.tokens["globex"]) as globex,
    ):
        ours = acme.post("/v1/episodes", json=_b1("acme/ids", "acme's b1"))
        theirs = initech.post("/v1/episodes", json=_b1("initech/ids", "initech's b1"))
        fresh = initech.post("/v1/episodes", json={**_b1("initech/ids", "x"), "id": "c1"})
        assert ours.status_code == theirs.status_code == fresh.status_code == 201
        assert set(theirs.json()) == set(fresh.json()) and theirs.json()["id"] == "b1"
        assert acme.get("/v1/episodes/b1").json()["situation"] == "acme's b1"
        assert initech.get("/v1/episodes/b1").json()["situation"] == "initech's b1"
        again = initech.post("/v1/episodes", json=_b1("initech/ids", "initech's b1"))
        assert again.status_code == 201 and again.json()["seq"] == theirs.json()["seq"]
        clash = initech.post("/v1/episodes", json=_b1("initech/ids", "other content"))
        assert clash.status_code == 409  # within a tenant an id is one episode
        held, never = globex.get("/v1/episodes/b1"), globex.get("/v1/episodes/zz9")
        assert held.status_code == never.status_code == 404
        assert (
            held.json()["error"]["message"].replace("b1", "zz9") == never.json()["error"]["message"]
        )
    with live.client(tokens["initech-admin"]) as admin:
        done = admin.post("/v1/forget", json={"episodes": ["b1"], "apply": True}).json()
        assert done["applied"] and done["episodes"] == ["b1"] and done["scopes"] == ["initech/ids"]
        assert admin.get("/v1/episodes/b1").status_code == 404
    with live.client(live.tokens["acme-write"]) as acme:
        assert acme.get("/v1/episodes/b1").json()["situation"] == "acme's b1"  # acme's stays


def test_an_agent_key_cannot_tell_a_sibling_agents_id_from_an_unused_one(live: Live) -> None:
    """Ids are a tenant's own and an agent key sees only its agent: the ids it sends live in
    its agent's namespace, so a sibling's id is stored as a new episode, answered as an unused
    id is, and read back by the id sent; the sibling's own episode stays out of reach."""
    live.rv.remember(
        {"id": "sib-1", "scope": "acme/support", "situation": "support's", "action": "a"}
    )
    with live.client(live.tokens["acme-other-agent"]) as tester:
        assert tester.post("/v1/episodes", json=_b1("acme/tester", "tester's")).status_code == 201
    with live.client(live.tokens["acme-coder"]) as coder:
        answers = {
            sent: coder.post(
                "/v1/episodes", json={**_b1("acme/coder", f"coder's {sent}"), "id": sent}
            )
            for sent in ("sib-1", "b1", "never-1")
        }
        assert {r.status_code for r in answers.values()} == {201}
        assert [r.json()["id"] for r in answers.values()] == [
            "sib-1@coder",
            "b1@coder",
            "never-1@coder",
        ]
        batch = coder.post(
            "/v1/episodes/batch", json={"episodes": [_b1("acme/coder", "coder's b1")]}
        )
        assert batch.json() == {"stored": 0, "duplicates": 1, "errors": []}
        for sent in ("sib-1", "b1", "b1@coder"):
            assert coder.get(f"/v1/episodes/{sent}").json()["scope"]["agent"] == "coder"
        assert coder.get("/v1/episodes/sib-1/pages").status_code == 200
        held, never = coder.get("/v1/episodes/sib-2"), coder.get("/v1/episodes/never-2")
        assert held.status_code == never.status_code == 404
    live.rv.remember({"id": "sib-2", "scope": "acme/support", "situation": "s", "action": "a"})
    with live.client(live.tokens["acme-coder"]) as coder:
        held = coder.get("/v1/episodes/sib-2")
        assert held.status_code == 404
        assert held.json()["error"]["message"] == never.json()["error"]["message"].replace(
            "never", "sib"
        )
    assert live.rv.episode("sib-1", tenant="acme").situation == "support's"
