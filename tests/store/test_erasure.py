"""The erasure capability on every backend: what a request reaches, the one transaction (and its
dry run), receipts, tombstones, the record of exports, and refusal when the plan's state moved."""

from __future__ import annotations

from datetime import timedelta

import pytest

from reverie.errors import Conflict, InvalidInput, NotFound
from reverie.hashing import content_hash
from reverie.memory.erasure import ForgetRequest, plan_forget
from reverie.models import Claim, Revision
from reverie.store.base import BrainStore, PageWrite
from reverie.store.postgres import PostgresStore
from reverie.store.records import VectorUnit
from tests.conftest import EpisodeFactory
from tests.store.test_contract import GLOBEX, NOW, OTHER, SCOPE, changeset, revision


def _with_claim(rev: Revision, text: str, episode_id: str) -> Revision:
    more = rev.model_copy(
        update={"claims": (*rev.claims, Claim(text=text, episode_ids=(episode_id,)))}
    )
    return more.model_copy(update={"hash": content_hash(more.content())})


def _brain(store: BrainStore, make_episode: EpisodeFactory) -> list[str]:
    """e1 (Zoë's: her name in its metadata), e2, e3 in SCOPE; pg_a cites e1 and e2 in one claim
    and e3 in another, pg_b cites e1 only; OTHER keeps an episode of its own."""
    eps = store.append(
        [
            make_episode(situation="portal login failed", metadata={"customer": "Zoë Quill"}),
            make_episode(situation="portal login failed again"),
            make_episode(situation="staging deploy slow"),
            make_episode(scope=OTHER.key, situation="ZOË QUILL elsewhere"),
        ]
    )
    e1, e2, e3 = (e.id for e in eps[:3])
    writes = [
        PageWrite(SCOPE, "a", _with_claim(revision("pg_a", 1, [e1, e2]), "raise it", e3), None),
        PageWrite(SCOPE, "b", revision("pg_b", 1, [e1]), None),
    ]
    store.commit(changeset(SCOPE, 0, eps[2].seq or 0, [e1, e2, e3], writes))
    return [e1, e2, e3, eps[3].id]


def test_an_erasure_rewrites_what_cites_the_episode_and_leaves_tombstones(
    store: BrainStore, make_episode: EpisodeFactory
) -> None:
    e1, e2, e3, other = _brain(store, make_episode)
    assert store.pages_citing_any([e1], tenant="acme") == ["pg_a", "pg_b"]
    before = store.page("pg_a").revision.hash
    plan = plan_forget(store, ForgetRequest(episodes=(e1,), scope=SCOPE), NOW)
    counts = store.erase(plan.erasure).counts
    assert counts["episodes"] == 1 and counts["pages_deleted"] == 1
    assert counts["revisions_rewritten"] == 1 and counts["tombstones"] == 2
    assert store.episodes([e1, other], tenant="acme") == store.episodes(
        [other], tenant="acme"
    )  # gone; OTHER's stays
    page = store.page("pg_a")
    assert [c.episode_ids for c in page.revision.claims] == [(e2,), (e3,)]  # lost the citation
    assert page.revision.hash == content_hash(page.revision.content()) != before
    with pytest.raises(NotFound):
        store.page("pg_b")  # its only support was erased
    assert store.search_episodes(SCOPE, ["portal"], 10)[0][0].id == e2
    stones = {(t.page_id, t.hash_after) for t in store.tombstones(["pg_a", "pg_b"])}
    assert stones == {("pg_a", page.revision.hash), ("pg_b", None)}
    receipt = store.erasure_receipt(plan.erasure.id)
    assert receipt.counts == counts and receipt.details["episodes"] == [e1]
    assert {t.hash_before for t in receipt.tombstones if t.page_id == "pg_a"} == {before}
    assert [r.id for r in store.erasure_receipts(unfinished=True)] == [receipt.id]
    store.finish_erasure(receipt.id, NOW)
    assert store.erasure_receipts(unfinished=True) == []
    assert store.erasure_receipts()[0].finished_at == NOW
    assert store.scrub_free_space() is True
    assert store.integrity_check() == "ok"


def test_a_dry_run_counts_exactly_and_changes_nothing(
    store: BrainStore, make_episode: EpisodeFactory
) -> None:
    e1, *_rest = _brain(store, make_episode)
    stats, page = store.stats(), store.page("pg_a")
    plan = plan_forget(store, ForgetRequest(episodes=(e1,), scope=SCOPE), NOW)
    dry = store.erase(plan.erasure, apply=False)
    assert store.stats() == stats and store.page("pg_a") == page
    with pytest.raises(NotFound):
        store.erasure_receipt(plan.erasure.id)
    assert store.erase(plan.erasure, apply=True) == dry


def test_episodes_are_found_by_subject_in_any_case_and_field_and_by_age(
    store: BrainStore, make_episode: EpisodeFactory
) -> None:
    e1, _e2, _e3, other = _brain(store, make_episode)
    found = store.erasure_episodes([SCOPE, OTHER], containing="zoë QUILL")
    assert [e.id for e in found] == [e1, other]  # metadata of one, the text of the other
    assert store.erasure_episodes([SCOPE], containing="nobody at all") == []
    assert [e.id for e in store.erasure_episodes([SCOPE], containing="PORTAL LOGIN")][:1] == [e1]
    cutoff = store.episode(e1, tenant="acme").created_at + timedelta(minutes=1)
    assert [e.id for e in store.erasure_episodes([SCOPE], before=cutoff)] == [e1]
    assert store.pages_containing([SCOPE], "RAISE it") == ["pg_a"]
    assert store.pages_containing([OTHER], "raise it") == []


def test_an_erasure_planned_on_state_that_moved_is_refused_whole(
    store: BrainStore, make_episode: EpisodeFactory
) -> None:
    e1, e2, *_rest = _brain(store, make_episode)
    plan = plan_forget(store, ForgetRequest(episodes=(e1,), scope=SCOPE), NOW)
    newer = revision("pg_a", 2, [e1, e2])
    store.commit(changeset(SCOPE, store.checkpoint(SCOPE), store.checkpoint(SCOPE), [],
                           [PageWrite(SCOPE, "a", newer, 1)], cycle_id="cy_2"))  # fmt: skip
    stats = store.stats()
    with pytest.raises(Conflict, match="nothing was erased"):
        store.erase(plan.erasure)
    assert store.stats() == stats and store.episodes([e1], tenant="acme")


def test_a_scope_erased_whole_leaves_no_row_and_other_scopes_intact(
    store: BrainStore, make_episode: EpisodeFactory
) -> None:
    *_mine, other = _brain(store, make_episode)
    plan = plan_forget(store, ForgetRequest(scope=SCOPE), NOW)
    counts = store.erase(plan.erasure).counts
    assert counts["scopes"] == 1 and counts["episodes"] == 3 and counts["pages_deleted"] == 2
    assert SCOPE not in store.scopes() and store.stats(SCOPE).episodes == 0
    assert store.cycles(SCOPE) == [] and store.checkpoint(SCOPE) == 0
    assert [e.id for e in store.recent_episodes(OTHER, 10)] == [other]


def test_exports_are_recorded_once_per_place_and_scope(store: BrainStore) -> None:
    store.record_export("/x/mirror", "markdown", [SCOPE], NOW)
    store.record_export("/x/mirror", "markdown", [SCOPE], NOW + timedelta(days=1))
    store.record_export("/x/train.jsonl", "training", [SCOPE, OTHER], NOW)
    found = store.exports([SCOPE])
    assert [(x.path, x.kind) for x in found] == [
        ("/x/mirror", "markdown"),
        ("/x/train.jsonl", "training"),
    ]
    assert (found[0].first_at, found[0].last_at) == (NOW, NOW + timedelta(days=1))
    assert [x.scope for x in store.exports([OTHER])] == [OTHER]


def _twins(store: BrainStore, make_episode: EpisodeFactory) -> None:
    """acme and globex each store a b1 (both mention Zoë) and a b2, with a page citing both
    and a vector unit for b1."""
    for scope, page in ((SCOPE, "pg_a"), (GLOBEX, "pg_g")):
        eps = store.append(
            [
                make_episode(id="b1", scope=scope.key, situation=f"Zoë at {scope.tenant}"),
                make_episode(id="b2", scope=scope.key, situation=f"deploy at {scope.tenant}"),
            ]
        )
        write = PageWrite(scope, "t", _with_claim(revision(page, 1, ["b1"]), "more", "b2"), None)
        store.commit(changeset(scope, 0, eps[1].seq or 0, ["b1", "b2"], [write], f"cy_{page}"))
        unit = VectorUnit(scope, "episode", "b1", f"h-{scope.tenant}", eps[0].seq)
        store.vectors_put("m", {unit.hash: bytes(16)}, [unit])


def test_erasing_one_tenant_s_b1_leaves_the_other_tenant_s_b1(
    store: BrainStore, make_episode: EpisodeFactory
) -> None:
    _twins(store, make_episode)
    theirs = store.page("pg_g")
    assert store.pages_citing_any(["b1"], tenant="acme") == ["pg_a"]
    plan = plan_forget(store, ForgetRequest(episodes=("b1",), tenant="acme"), NOW)
    counts = store.erase(plan.erasure).counts
    assert counts["episodes"] == 1 and counts["pages_rewritten"] == 1
    assert store.episodes(["b1"], tenant="acme") == []
    assert store.episode("b1", tenant="globex").situation == "Zoë at globex"
    assert store.page("pg_g") == theirs and store.page("pg_a").citations == ["b2"]
    assert store.pages_citing_any(["b1"], tenant="globex") == ["pg_g"]
    assert store.unit_vectors(GLOBEX, "m", "episode", ["b1"]) == {"b1": bytes(16)}
    assert store.unit_vectors(SCOPE, "m", "episode", ["b1"]) == {}
    with pytest.raises(InvalidInput, match="a tenant's own"):
        ForgetRequest(episodes=("b1",))  # whose b1?


def test_a_subject_erased_everywhere_takes_each_tenant_s_own_episodes(
    store: BrainStore, make_episode: EpisodeFactory
) -> None:
    _twins(store, make_episode)
    plan = plan_forget(store, ForgetRequest(subject="zoë at"), NOW)
    assert sorted((e.scope.tenant, e.id) for e in plan.erasure.episodes) == [
        ("acme", "b1"),
        ("globex", "b1"),
    ]
    counts = store.erase(plan.erasure).counts
    assert counts["episodes"] == 2 and counts["pages_rewritten"] == 2
    for tenant, page in (("acme", "pg_a"), ("globex", "pg_g")):
        assert [e.id for e in store.episodes(["b1", "b2"], tenant=tenant)] == ["b2"]
        assert store.page(page).citations == ["b2"]
    assert store.integrity_check() == "ok"


def test_the_receipt_names_the_tables_left_holding_old_row_versions(
    store: BrainStore, make_episode: EpisodeFactory
) -> None:
    e1, *_rest = _brain(store, make_episode)
    plan = plan_forget(store, ForgetRequest(episodes=(e1,), scope=SCOPE), NOW)
    erased = store.erase(plan.erasure)
    physical = store.erasure_receipt(plan.erasure.id).physical
    if not isinstance(store, PostgresStore):  # secure_delete zeroed them; the scrub vacuums
        assert list(erased.residue) == [] and not erased.wal
        assert physical == {"tables": [], "vacuumed": [], "wal": False, "purge": []}
        return
    names = {t.rsplit(".", 1)[-1] for t in erased.residue}
    assert {"episodes", "citations", "revisions", "pages"} <= names  # updated or deleted
    assert "tombstones" not in names  # rows only added: no old version to keep
    assert physical["tables"] == list(erased.residue) and physical["wal"]
    assert physical["purge"][0] == "VACUUM FULL " + ", ".join(erased.residue)
    assert "WAL" in physical["purge"][1] and physical["vacuumed"] == []
