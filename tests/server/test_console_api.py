"""The routes the console stands on, over real HTTP: recall explained, episodes searched and
filtered, the pages that cite an episode, undo, restore and a person's edit, the journal's
growth series. Each action's effect is read back through the API and the facade."""

from __future__ import annotations

from typing import Any

import httpx

from reverie.cli.demo import load_sample
from reverie.dream.pins import HUMAN_EDIT
from tests.server.conftest import Live, as_scope


def fresh_scope(live: Live, scope: str, prefix: str) -> None:
    """The sample week in ``scope`` of its own, dreamt once (other tests keep acme/coder)."""
    live.rv.ingest(as_scope(load_sample(), scope, prefix))
    live.rv.dream(scope)


def page_of(client: httpx.Client, page_id: str) -> dict[str, Any]:
    body: dict[str, Any] = client.get(f"/v1/pages/{page_id}").json()["page"]
    return body


def test_recall_explains_itself_only_when_asked(live: Live) -> None:
    ask = {"query": "deploy staging timeout", "scope": "acme/coder", "budget_tokens": 200}
    with live.client(live.tokens["acme-read"]) as client:
        plain = client.post("/v1/recall", json=ask).json()
        explained = client.post("/v1/recall", json=ask, params={"explain": "true"}).json()
    assert "trace" not in plain
    trace = explained.pop("trace")
    assert explained == plain  # the same section, with its reasons beside it
    packed = [u for u in trace["units"] if u["decision"] == "packed"]
    assert [(u["id"], u["text"]) for u in packed] == [(i["id"], i["text"]) for i in plain["items"]]
    assert any(u["decision"] == "cut" for u in trace["units"])
    assert all(u["reason"] and "signals" in u for u in trace["units"])
    assert trace["used_tokens"] == plain["used_tokens"] <= trace["budget_tokens"] == 200


def test_episodes_are_searched_and_filtered(live: Live) -> None:
    with live.client(live.tokens["acme-read"]) as client:
        everything = client.get("/v1/episodes", params={"scope": "acme/coder", "limit": 500})
        assert everything.status_code == 200
        listed = everything.json()
        assert listed["complete"] and listed["matched"] == live.rv.status("acme/coder").episodes
        seqs = [e["seq"] for e in listed["episodes"]]
        assert seqs == sorted(seqs, reverse=True)  # newest first without words
        failures = client.get(
            "/v1/episodes",
            params={"scope": "acme/coder", "q": "kubectl", "outcome": "failure", "limit": 500},
        ).json()["episodes"]
        assert failures and all(e["outcome"] == "failure" for e in failures)
        assert all("kubectl" in (e["situation"] + e["action"]).lower() for e in failures)
        dated = client.get(
            "/v1/episodes",
            params={
                "scope": "acme/coder",
                "since": "2026-11-05T00:00:00+00:00",
                "until": "2026-11-06T23:59:59+00:00",
                "consolidated": "true",
                "limit": 500,
            },
        ).json()["episodes"]
        assert dated and all("2026-11-05" <= e["created_at"][:10] <= "2026-11-06" for e in dated)
        assert all(e["consolidated_in"] for e in dated)
        bad = client.get("/v1/episodes", params={"scope": "acme/coder", "outcome": "great"})
    assert bad.status_code == 422 and bad.json()["error"]["field"] == "outcome"


def test_an_episode_leads_to_the_pages_that_cite_it(live: Live) -> None:
    page = live.rv.pages("acme/coder")[0]
    cited = page.revision.claims[0].episode_ids[0]
    with live.client(live.tokens["acme-read"]) as client:
        citing = client.get(f"/v1/episodes/{cited}/pages").json()
    assert page.id in [p["id"] for p in citing]
    assert all(cited in p["revision"]["claims"][0]["episode_ids"] or p["id"] for p in citing)


def test_undo_over_http_reverts_the_page(live: Live) -> None:
    scope = "acme/console-undo"
    fresh_scope(live, scope, "cu")
    [first] = live.rv.cycles(scope)
    with live.client(live.tokens["acme-read"]) as reader:
        assert reader.post(f"/v1/cycles/{first.id}/undo").status_code == 403
    with live.client(live.tokens["acme-write"]) as client:
        undone = client.post(f"/v1/cycles/{first.id}/undo")
        assert undone.status_code == 200, undone.text
        assert undone.json()["episodes_released"] > 0
        assert client.get("/v1/pages", params={"scope": scope}).json() == []
        again = client.post(f"/v1/cycles/{first.id}/undo")
    assert again.status_code == 409 and again.json()["error"]["code"] == "undo_refused"
    assert live.rv.cycle(first.id).undone_at is not None


def test_restore_and_edit_over_http_are_pinned_revisions(live: Live) -> None:
    scope = "acme/console-edit"
    fresh_scope(live, scope, "ce")
    page = live.rv.pages(scope)[0]
    number = page.revision.number
    claims = [{"text": c.text, "episode_ids": list(c.episode_ids)} for c in page.revision.claims]
    edit = {
        "revision": number,
        "title": "Checking the rollout before calling a deploy done",
        "kind": "warning",
        "claims": [*claims, {"text": "Always name the kubectl context explicitly."}],
    }
    with live.client(live.tokens["acme-read"]) as reader:
        assert reader.post(f"/v1/pages/{page.id}/edit", json=edit).status_code == 403
    with live.client(live.tokens["acme-write"]) as client:
        edited = client.post(f"/v1/pages/{page.id}/edit", json=edit)
        assert edited.status_code == 200, edited.text
        body = edited.json()
        assert body["revision"] == number + 1 and sorted(body["pins"]) == ["kind", "title"]
        shown = page_of(client, page.id)
        assert shown["revision"]["title"] == edit["title"]
        assert shown["revision"]["kind"] == "warning"
        assert shown["revision"]["author"] == "human"
        added = shown["revision"]["claims"][-1]
        assert added["pinned"] and added["episode_ids"] == [body["episode_id"]]
        stale = client.post(f"/v1/pages/{page.id}/edit", json=edit)
        assert stale.status_code == 409 and "changed since" in stale.json()["error"]["message"]
        restored = client.post(f"/v1/pages/{page.id}/restore", json={"revision": number})
        assert restored.status_code == 200, restored.text
        back = restored.json()["page"]["revision"]
        assert back["title"] == page.title and back["number"] == number + 2
    recorded = live.rv.episode(body["episode_id"], tenant="acme")
    assert recorded.metadata["reverie"] == HUMAN_EDIT and recorded.consolidated_in
    assert live.rv.cycle(body["cycle_id"]).report.changes[0].page_id == page.id


def test_an_edit_that_changes_nothing_writes_nothing(live: Live) -> None:
    page = live.rv.pages("acme/coder")[-1]
    before = len(live.rv.revisions(page.id))
    with live.client(live.tokens["acme-write"]) as client:
        same = client.post(
            f"/v1/pages/{page.id}/edit", json={"revision": page.revision.number}
        ).json()
    assert same["cycle_id"] is None and len(live.rv.revisions(page.id)) == before


def test_the_journal_has_entries_and_a_growth_series(live: Live) -> None:
    with live.client(live.tokens["acme-read"]) as client:
        shown = client.get("/v1/journal", params={"scope": "acme/coder"}).json()
    series = shown["series"]
    assert series[-1]["active_pages"] == shown["stats"]["active_pages"]
    assert all({"model_calls", "input_tokens", "output_tokens"} <= set(c) for c in shown["cycles"])
    cycles = {c["cycle_id"] for c in shown["cycles"]}
    assert shown["entries"] and {e["cycle_id"] for e in shown["entries"]} & cycles
