"""The conventional verbs over real stores: add, search, get, get_all, history, delete."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from reverie import Config, IdentityConfig, InvalidInput, NotFound, Reverie
from reverie.cli.demo import load_sample

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
DEPLOY = "deploy to staging with kubectl"


def _dreamed(rv: Reverie) -> None:
    rv.ingest([e for e in load_sample() if e["scope"] == "acme/coder"])
    rv.dream("acme/coder")


def test_add_text_names_the_scope_from_user_and_agent(brain: Reverie) -> None:
    [item] = brain.add("I keep my notes in Obsidian", user_id="alice", agent_id="notes")
    assert item.kind == "episode" and item.scope == "default/notes/alice"
    assert item.user_id == "alice" and item.agent_id == "notes"
    assert "Obsidian" in item.memory
    assert brain.get(item.id) == item
    assert [m.id for m in brain.get_all(user_id="alice", agent_id="notes")] == [item.id]
    assert brain.get_all(user_id="bob", agent_id="notes") == []


def test_add_messages_goes_through_the_chat_adapter(brain: Reverie) -> None:
    messages = [
        {"role": "system", "content": "You are a deploy bot."},
        {"role": "user", "content": "Roll out the api to staging"},
        {"role": "assistant", "content": "Rolled out with kubectl apply."},
        {"role": "user", "content": "And the worker?"},
        {"role": "assistant", "content": "Done too."},
    ]
    items = brain.add(messages, user_id="alice", run_id="run-7", metadata={"ticket": "T-1"})
    assert [i.run_id for i in items] == ["run-7", "run-7"]  # one episode per user turn
    assert all(
        i.metadata["ticket"] == "T-1" and i.metadata["source"] == "openai-chat" for i in items
    )
    again = brain.add(messages, user_id="alice", run_id="run-7", metadata={"ticket": "T-1"})
    assert [i.id for i in again] == [i.id for i in items]  # ids from content: stored once
    assert brain.status().episodes == 2


def test_add_refuses_bad_input_before_storing_anything(brain: Reverie) -> None:
    with pytest.raises(InvalidInput, match="role"):
        brain.add([{"role": "user", "content": "fine"}, {"role": "robot", "content": "?"}])
    with pytest.raises(InvalidInput, match="contradicts scope"):
        brain.add("x", user_id="alice", scope="acme/coder/bob")
    with pytest.raises(InvalidInput, match="no user message"):
        brain.add([{"role": "system", "content": "rules"}])
    with pytest.raises(InvalidInput, match="expected a text"):
        brain.add(42)  # type: ignore[arg-type]
    assert brain.status().episodes == 0


def test_add_an_episode_mapping_keeps_its_fields(brain: Reverie) -> None:
    episode = {"situation": "flaky test", "action": "pinned the seed", "outcome": "success"}
    [item] = brain.add(episode, scope="acme/coder", metadata={"pr": 12}, now=T0)
    assert item.status == "success" and item.created_at == T0
    assert brain.episode(item.id, tenant="acme").metadata == {"pr": 12}


def test_identity_config_names_the_tenant(target: str) -> None:
    config = Config(identity=IdentityConfig(tenant="acme", agent="helper"))
    with Reverie.open(target, config=config) as rv:
        [item] = rv.add("the wiki moved to confluence", user_id="carol")
    assert item.scope == "acme/helper/carol"


def test_search_scores_pages_in_unit_interval_with_citations(brain: Reverie) -> None:
    _dreamed(brain)
    found = brain.search(DEPLOY, scope="acme/coder", limit=3)
    assert 1 <= len(found) <= 3
    assert all(0.0 <= m.score <= 1.0 for m in found if m.score is not None)
    assert [m.score for m in found] == sorted((m.score or 0.0 for m in found), reverse=True)
    top = found[0]
    assert top.id.startswith("pg_") and top.kind != "episode" and top.citations
    assert set(top.citations) <= {e.id for e in brain.episodes(top.citations, tenant="acme")}
    assert top.memory and top.created_at and top.metadata["revision"] >= 1
    only_facts = brain.search(DEPLOY, scope="acme/coder", filters={"kind": "fact"})
    assert all(m.kind == "fact" for m in only_facts)
    assert brain.search(DEPLOY, scope="globex/bot") == []


def test_search_finds_episodes_before_any_dream(brain: Reverie) -> None:
    brain.add("the staging database password rotates every monday", user_id="dan", run_id="r1")
    brain.add("lunch is at noon on fridays", user_id="dan", run_id="r2")
    found = brain.search("when does the staging database password rotate", user_id="dan")
    assert found and found[0].kind == "episode" and "monday" in found[0].memory
    assert brain.search("staging database password", user_id="dan", filters={"run_id": "r2"}) == []


def test_get_all_lists_pages_then_pending_episodes(brain: Reverie) -> None:
    _dreamed(brain)
    pages = brain.pages("acme/coder")
    brain.add("one more note", scope="acme/coder")
    listed = brain.get_all(scope="acme/coder", limit=500)
    assert [m.id for m in listed[: len(pages)]] == [p.id for p in pages]
    assert listed[-1].kind == "episode" and listed[-1].memory.startswith("one more note")
    assert len(brain.get_all(scope="acme/coder", limit=2)) == 2
    kinds = {m.kind for m in brain.get_all(scope="acme/coder", filters={"kind": "procedure"})}
    assert kinds <= {"procedure"}


def test_retire_keeps_the_page_readable_and_undo_brings_it_back(brain: Reverie) -> None:
    _dreamed(brain)
    top = brain.search(DEPLOY, scope="acme/coder", limit=1)[0]
    receipt = brain.retire(top.id)
    assert (
        receipt.status == "retired" and receipt.revision == brain.get(top.id).metadata["revision"]
    )
    assert top.id not in {m.id for m in brain.search(DEPLOY, scope="acme/coder")}
    assert top.id not in {m.id for m in brain.get_all(scope="acme/coder", limit=500)}
    retired = brain.get_all(scope="acme/coder", filters={"status": "retired"})
    assert [m.id for m in retired] == [top.id]
    events = brain.history(top.id)
    assert events[0].event == "ADD" and events[-1].event == "RETIRE"
    assert events[-1].author == "api" and events[-1].cycle_id == receipt.cycle_id
    assert brain.why(top.id).revisions[-1].status == "retired"  # still readable
    with pytest.raises(InvalidInput, match="already retired"):
        brain.retire(top.id)
    brain.undo(receipt.cycle_id)
    assert brain.get(top.id).status == "active"
    assert top.id in {m.id for m in brain.search(DEPLOY, scope="acme/coder")}


def test_delete_of_a_page_erases_it_and_leaves_a_receipt(brain: Reverie) -> None:
    _dreamed(brain)
    top = brain.search(DEPLOY, scope="acme/coder", limit=1)[0]
    deletion = brain.delete(top.id)
    assert deletion.kind == "page" and deletion.pages_deleted == [top.id]
    assert deletion.episodes == []  # a page's episodes are evidence: they stay
    assert all(brain.episode(e, tenant="acme").id == e for e in top.citations)
    with pytest.raises(NotFound):
        brain.get(top.id)
    with pytest.raises(NotFound):
        brain.history(top.id)
    assert top.id not in {m.id for m in brain.search(DEPLOY, scope="acme/coder")}
    receipt = brain.erasure(deletion.erasure_id)
    assert receipt.applied and receipt.request["page"] == top.id
    assert {t.page_id for t in receipt.tombstones} == {top.id}
    with pytest.raises(NotFound):
        brain.delete(top.id)


def test_delete_of_an_episode_erases_it_and_rederives_its_pages(brain: Reverie) -> None:
    _dreamed(brain)
    page = brain.search(DEPLOY, scope="acme/coder", limit=1)[0]
    cited = page.citations[0]
    with pytest.raises(NotFound):
        brain.delete(cited)  # the default tenant has no such episode: ids are a tenant's own
    deletion = brain.delete(cited, tenant="acme")
    assert deletion.kind == "episode" and deletion.episodes == [cited]
    assert page.id in deletion.pages_rederived + deletion.pages_deleted
    with pytest.raises(NotFound):
        brain.get(cited, tenant="acme")
    assert all(cited not in m.citations for m in brain.get_all(scope="acme/coder", limit=500))
    assert brain.erasure(deletion.erasure_id).request["episodes"] == [cited]


def test_retire_of_an_episode_and_delete_of_an_unknown_id_are_refused(brain: Reverie) -> None:
    [item] = brain.add("a note", user_id="erin")
    with pytest.raises(InvalidInput, match="only pages retire"):
        brain.retire(item.id)
    with pytest.raises(NotFound, match="neither a page nor an episode"):
        brain.delete("pg_nope")
    with pytest.raises(NotFound):
        brain.history("nope")
    assert [e.event for e in brain.history(item.id)] == ["ADD"]
    assert brain.delete(item.id).episodes == [item.id]
    assert brain.get_all(user_id="erin") == []


def test_history_follows_a_fact_through_supersession(brain: Reverie) -> None:
    def said(value: str, hours: int) -> dict[str, object]:
        fact = {"subject": "user", "attribute": "editor", "value": value}
        return {"situation": f"editor is {value}", "action": "noted", "metadata": {"fact": fact}}

    brain.add(said("vim", 0), user_id="fay", now=T0)
    brain.dream("default/default/fay", now=T0 + timedelta(hours=1))
    brain.add(said("emacs", 2), user_id="fay", now=T0 + timedelta(hours=2))
    brain.dream("default/default/fay", now=T0 + timedelta(hours=3))
    everything = brain.get_all(user_id="fay", filters={"status": ["active", "superseded"]})
    old = next(m for m in everything if m.status == "superseded")
    assert [e.event for e in brain.history(old.id)][-1] == "SUPERSEDE"
    current = brain.search("which editor does the user use", user_id="fay")
    assert current and "emacs" in current[0].memory
