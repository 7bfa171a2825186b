"""The store contract beyond the core, on every backend: history, stats, plans, vectors, keys,
the response cache, the cold tier and the schedule, and the capabilities only PostgreSQL has
(nearest neighbours, bundles in the database), each checked where ``isinstance`` says the store
has it."""

from __future__ import annotations

import ast
import dataclasses
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from reverie.errors import Conflict, NotFound, PlanPending, StoreError
from reverie.keys import mint_key
from reverie.models import Episode
from reverie.store import base
from reverie.store.base import (
    BrainStore,
    BundleBytes,
    CycleTally,
    NearestNeighbours,
    Observation,
    PageWrite,
    Promotion,
    RecallTally,
)
from reverie.store.records import BundleInfo, PendingPlan, PlanStatus, VectorUnit, is_stub
from reverie.store.sql.plans import plan_id_for
from tests.conftest import EpisodeFactory
from tests.store.test_contract import NOW, OTHER, SCOPE, changeset, revision

ORG = SCOPE.org


def _dreamed(store: BrainStore, make_episode: EpisodeFactory) -> list[Episode]:
    """Three episodes of SCOPE, the first two consolidated by cy_1 into page pg_a."""
    eps = store.append([make_episode() for _ in range(3)])
    write = PageWrite(SCOPE, "t", revision("pg_a", 1, [e.id for e in eps[:2]]), None)
    store.commit(changeset(SCOPE, 0, eps[1].seq or 0, [e.id for e in eps[:2]], [write]))
    return eps


def test_episodes_are_read_back_in_seq_order(
    store: BrainStore, make_episode: EpisodeFactory
) -> None:
    eps = store.append([make_episode() for _ in range(4)])
    assert [e.id for e in store.episodes([eps[2].id, eps[0].id, "ep-none"], tenant="acme")] == [
        eps[0].id,
        eps[2].id,
    ]
    assert store.episode(eps[1].id, tenant="acme").situation == eps[1].situation
    assert [e.id for e in store.recent_episodes(SCOPE, 2)] == [eps[3].id, eps[2].id]


def test_pages_are_read_by_id_by_citation_and_by_revision(
    store: BrainStore, make_episode: EpisodeFactory
) -> None:
    eps = _dreamed(store, make_episode)
    assert set(store.pages_by_id(SCOPE, ["pg_a", "pg_none"])) == {"pg_a"}
    assert store.pages_by_id(OTHER, ["pg_a"]) == {}  # another scope's page is not read
    assert store.pages_citing(SCOPE, [eps[0].id, eps[2].id]) == {eps[0].id: ["pg_a"]}
    assert [r.hash for r in store.revisions("pg_a")] == [store.page("pg_a").revision.hash]
    with pytest.raises(NotFound):
        store.revisions("pg_none")


def test_cycles_in_order_and_an_undo_stamped_with_the_changeset_time(
    store: BrainStore, make_episode: EpisodeFactory
) -> None:
    eps = _dreamed(store, make_episode)
    store.commit(changeset(SCOPE, eps[1].seq or 0, eps[2].seq or 0, [eps[2].id], [], "cy_2"))
    assert store.cycle("cy_1").checkpoint_after == eps[1].seq
    assert [c.id for c in store.cycles(SCOPE)] == ["cy_2", "cy_1"]
    undo_at = NOW + timedelta(days=1)
    undo = base.Changeset(
        scope=SCOPE,
        expected_checkpoint=eps[2].seq or 0,
        checkpoint=eps[1].seq or 0,
        unmark_cycle="cy_2",
        undone_cycle="cy_2",
        journal="undid cy_2",
        at=undo_at,
    )
    store.commit(undo)
    assert store.cycle("cy_2").undone_at == undo_at
    assert [(j.cycle_id, j.created_at, j.text) for j in store.journal(SCOPE)] == [
        ("cy_2", undo_at, "undid cy_2")
    ]
    with pytest.raises(Conflict):  # an undo lands once
        store.commit(dataclasses.replace(undo, expected_checkpoint=eps[1].seq or 0))


def test_strengths_count_observations_of_cycles_not_undone(
    store: BrainStore, make_episode: EpisodeFactory
) -> None:
    eps = store.append([make_episode() for _ in range(2)])
    write = PageWrite(SCOPE, "t", revision("pg_a", 1, [eps[0].id]), None)
    seen = Observation("pg_a", 3, NOW)
    store.commit(dataclasses.replace(changeset(SCOPE, 0, 0, [], [write]), observations=[seen]))
    assert store.strengths(["pg_a", "pg_none"]) == {"pg_a": base.Strength("pg_a", 3, 1, NOW)}


def test_tallies_add_up_per_scope(store: BrainStore, make_episode: EpisodeFactory) -> None:
    store.append([make_episode()])
    tally = CycleTally(SCOPE, NOW, model_calls=2, input_tokens=10, episodes=1)
    store.commit(dataclasses.replace(changeset(SCOPE, 0, 0, [], []), tally=tally))
    store.record_tally(CycleTally(SCOPE, NOW, failed=True, error="model down"))
    [stats] = store.dream_stats(SCOPE)
    assert (stats.cycles_completed, stats.cycles_failed, stats.model_calls) == (1, 1, 2)
    assert (stats.last_completed_at, stats.last_failed_at, stats.last_error) == (
        NOW,
        NOW,
        "model down",
    )
    assert [s.scope for s in store.dream_stats()] == [SCOPE]


def test_recall_counts_add_up_per_scope_and_hour(
    store: BrainStore, make_episode: EpisodeFactory
) -> None:
    store.append([make_episode()])  # SCOPE exists; OTHER has never been written
    hour = NOW.replace(minute=0, second=0, microsecond=0)
    later = hour + timedelta(hours=2)
    store.record_recalls([RecallTally(SCOPE, hour, recalls=3, hits=2, units=5, tokens=90)])
    store.record_recalls(
        [
            RecallTally(SCOPE, hour, recalls=1, hits=1, units=2, tokens=40),  # the same hour adds
            RecallTally(SCOPE, later, recalls=2, hits=0),
            RecallTally(OTHER, hour, recalls=7, hits=7),  # no such brain: dropped
        ]
    )
    store.record_recalls([])
    assert store.recall_stats(SCOPE) == [
        RecallTally(SCOPE, hour, recalls=4, hits=3, units=7, tokens=130),
        RecallTally(SCOPE, later, recalls=2, hits=0),
    ]
    assert store.recall_stats(SCOPE, since=hour + timedelta(hours=1)) == [
        RecallTally(SCOPE, later, recalls=2, hits=0)
    ]
    assert store.recall_stats(OTHER) == []
    assert OTHER not in store.scopes()


def test_promotions_write_into_the_org_brain_only(
    store: BrainStore, make_episode: EpisodeFactory
) -> None:
    eps = _dreamed(store, make_episode)
    org_write = PageWrite(ORG, "t", revision("pg_org", 1, [eps[0].id]), None)
    promotion = Promotion(org_write, "pg_a", SCOPE, 1, cycles=2)
    cp = eps[1].seq or 0
    store.commit(
        dataclasses.replace(changeset(SCOPE, cp, cp, [], [], "cy_2"), promotions=[promotion])
    )
    [record] = store.promotions(SCOPE)
    assert (record.org_page_id, record.source_page_id, record.cycle_id) == (
        "pg_org",
        "pg_a",
        "cy_2",
    )
    assert store.promotions(ORG) == [record]
    assert store.page("pg_org").scope == ORG
    store.append([make_episode(scope=OTHER.key)])  # OTHER exists: only the refusal stops it
    stray = PageWrite(OTHER, "t", revision("pg_x", 1, [eps[0].id]), None)
    with pytest.raises(StoreError, match="refused"):
        store.commit(
            dataclasses.replace(changeset(SCOPE, cp, cp, [], [], "cy_3"), page_writes=[stray])
        )


def test_plans_are_held_applied_once_and_settled(
    store: BrainStore, make_episode: EpisodeFactory
) -> None:
    eps = store.append([make_episode()])
    changes = changeset(SCOPE, 0, eps[0].seq or 0, [eps[0].id], [], "cy_9")
    plan = PendingPlan(plan_id_for("cy_9"), SCOPE, "cy_9", PlanStatus.PENDING, NOW, changes)
    store.put_plan(plan)
    with pytest.raises(PlanPending):
        store.put_plan(dataclasses.replace(plan, id="pl_other"))
    held = store.plan(plan.id).changes
    assert (held.checkpoint, list(held.marks), held.at) == (
        changes.checkpoint,
        [eps[0].id],
        changes.at,
    )
    assert [p.id for p in store.plans(SCOPE, PlanStatus.PENDING)] == [plan.id]
    store.commit(dataclasses.replace(changes, plan_id=plan.id))
    assert store.plan(plan.id).status == PlanStatus.APPLIED
    with pytest.raises(Conflict):
        store.settle_plan(plan.id, PlanStatus.REJECTED, NOW, "too late")
    other = PendingPlan("pl_2", SCOPE, "cy_2", PlanStatus.PENDING, NOW, changes)
    store.put_plan(other)
    assert store.settle_plan("pl_2", PlanStatus.REJECTED, NOW, "no").reason == "no"
    with pytest.raises(NotFound):
        store.plan("pl_none")


def _unit_vectors(n: int, dim: int = 8) -> np.ndarray:
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(n, dim)).astype("<f4")
    unit: np.ndarray = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    return unit


def test_vectors_are_cached_by_hash_and_units_scoped(
    store: BrainStore, make_episode: EpisodeFactory
) -> None:
    eps = store.append([make_episode() for _ in range(3)])
    vectors = _unit_vectors(3)
    units = [VectorUnit(SCOPE, "episode", e.id, f"h{i}", e.seq) for i, e in enumerate(eps[:2])]
    blobs = {f"h{i}": v.tobytes() for i, v in enumerate(vectors)}
    store.vectors_put("m", blobs, units)
    store.vectors_put("m", blobs, units)  # idempotent
    assert store.vectors_get("m", ["h0", "h2", "h9"]) == {"h0": blobs["h0"], "h2": blobs["h2"]}
    rows = store.vector_rows(SCOPE, "m", 0)
    assert [r.ref for r in rows] == [eps[0].id, eps[1].id] and rows[0].vector == blobs["h0"]
    assert store.vector_rows(OTHER, "m", 0) == []
    assert store.unit_vectors(SCOPE, "m", "episode", [eps[1].id]) == {eps[1].id: blobs["h1"]}
    assert [e.id for e in store.unembedded_episodes(SCOPE, "m", 10)] == [eps[2].id]
    [theirs] = store.append([make_episode(id=eps[0].id, scope="globex/bot")])  # the same id
    store.vectors_put(
        "m", blobs, [VectorUnit(theirs.scope, "episode", theirs.id, "h2", theirs.seq)]
    )
    assert store.unit_vectors(theirs.scope, "m", "episode", [theirs.id]) == {theirs.id: blobs["h2"]}
    assert store.unit_vectors(SCOPE, "m", "episode", [eps[0].id]) == {eps[0].id: blobs["h0"]}


def test_brain_meta_keeps_one_value_per_key(store: BrainStore) -> None:
    assert store.meta_get("embedder") is None
    store.meta_put("embedder", "a")
    store.meta_put("embedder", "b")  # a write replaces the key's value
    assert store.meta_get("embedder") == "b"


def test_nearest_neighbours_where_the_store_searches_vectors(store: BrainStore) -> None:
    if not isinstance(store, NearestNeighbours):
        pytest.skip(f"{type(store).__name__} searches vectors in memory, not in the database")
    vectors = _unit_vectors(20)
    units = [VectorUnit(SCOPE, "episode", f"ep{i}", f"h{i}", i + 1) for i in range(20)]
    store.vectors_put("m", {f"h{i}": v.tobytes() for i, v in enumerate(vectors)}, units)
    hits = store.vector_search(SCOPE, "m", vectors[4].tobytes(), 3, "episode")
    assert hits[0][1] == "ep4" and hits[0][2] == pytest.approx(1.0, abs=1e-5)
    by_ref, by_hash = store.vector_cosines(SCOPE, "m", vectors[4].tobytes(), ["ep4"], ["h5"])
    assert by_ref["ep4"] == pytest.approx(1.0, abs=1e-5)
    assert by_hash["h5"] == pytest.approx(float(vectors[4] @ vectors[5]), abs=1e-5)


def test_api_keys_keep_their_first_revocation(store: BrainStore) -> None:
    key, _token = mint_key(tenant="acme", agent=None, rights="read", name="ci", now=NOW)
    store.put_api_key(key)
    assert store.api_key(key.id) == key and store.api_keys() == [key]
    first = store.revoke_api_key(key.id, NOW + timedelta(hours=1))
    again = store.revoke_api_key(key.id, NOW + timedelta(hours=2))
    assert first.revoked_at == again.revoked_at == NOW + timedelta(hours=1)
    with pytest.raises(NotFound):
        store.api_key("none")


def test_response_cache_replaces_an_answer(store: BrainStore) -> None:
    assert store.cache_get("k") is None
    at = datetime(2026, 1, 2, tzinfo=UTC)
    store.cache_put("k", {"model": "m", "response": {"a": 1}, "input_tokens": 3, "created_at": at})
    store.cache_put("k", {"model": "m", "response": {"a": 2}, "output_tokens": 4, "created_at": at})
    got = store.cache_get("k")
    assert got is not None
    assert (got["response"], got["input_tokens"], got["output_tokens"]) == ({"a": 2}, 0, 4)


def test_archive_where_the_store_keeps_stubs(
    store: BrainStore, make_episode: EpisodeFactory
) -> None:
    eps = _dreamed(store, make_episode)
    old = store.archive_candidates(SCOPE, NOW + timedelta(days=999), 10)
    assert [e.id for e in old] == [eps[0].id, eps[1].id]
    bundle = BundleInfo("sha256:ab", SCOPE, 2, 100, old[0].seq or 0, old[1].seq or 0, NOW)
    store.archive_commit(bundle, old)
    assert all(is_stub(e) for e in store.episodes([e.id for e in old], tenant="acme"))
    assert store.archive_locations([eps[0].id, eps[2].id], tenant="acme") == {
        eps[0].id: "sha256:ab"
    }
    assert store.archive_bundles_of_cycle("cy_1") == ["sha256:ab"]
    assert store.archive_restore(bundle, old, NOW) == 2
    assert store.episode(eps[0].id, tenant="acme").situation == eps[0].situation
    [listed] = store.archive_bundles(SCOPE)
    assert listed.restored_at == NOW


def test_archived_text_is_no_longer_found_and_comes_back_on_restore(
    store: BrainStore, make_episode: EpisodeFactory
) -> None:
    eps = _dreamed(store, make_episode)
    word = eps[0].situation.split()[0]
    found = {e.id for e, _s in store.search_episodes(SCOPE, [word], 10)}
    old = store.archive_candidates(SCOPE, NOW + timedelta(days=999), 10)
    bundle = BundleInfo("sha256:cd", SCOPE, 2, 100, old[0].seq or 0, old[1].seq or 0, NOW)
    store.archive_commit(bundle, old)
    stubs = {e.id for e in old}
    assert not stubs & {e.id for e, _s in store.search_episodes(SCOPE, [word], 10)}
    assert store.archive_candidates(SCOPE, NOW + timedelta(days=999), 10) == []
    store.archive_restore(bundle, old, NOW)
    assert {e.id for e, _s in store.search_episodes(SCOPE, [word], 10)} == found


def test_bundle_bytes_where_the_database_keeps_them(store: BrainStore) -> None:
    if not isinstance(store, BundleBytes):
        pytest.skip(f"{type(store).__name__} keeps bundles as files beside the database")
    assert store.bundle_get("sha256:ab") is None
    store.bundle_put("sha256:ab", b"\x1f\x8b bytes")
    store.bundle_put("sha256:ab", b"\x1f\x8b bytes")  # the same name holds the same bytes
    assert store.bundle_get("sha256:ab") == b"\x1f\x8b bytes"


def test_schedule_where_the_store_keeps_one(store: BrainStore) -> None:
    record = store.schedule_record(SCOPE, NOW)
    assert record.first_seen == NOW and record.last_run is None
    assert store.schedule_claim(record, "w1", NOW)
    assert not store.schedule_claim(record, "w2", NOW)  # the record moved on
    assert store.schedule_finish(
        SCOPE, "w1", ok=True, status="committed", cycle_id=None, message=""
    )
    [again] = store.schedule_records(NOW)
    assert (again.last_success, again.failures, again.running_owner) == (NOW, 0, None)


def _protocol_methods() -> dict[str, list[str]]:
    tree = ast.parse(Path(base.__file__).read_text())
    return {
        node.name: [f.name for f in node.body if isinstance(f, ast.FunctionDef)]
        for node in tree.body
        if isinstance(node, ast.ClassDef)
        and any(isinstance(b, ast.Name) and b.id == "Protocol" for b in node.bases)
    }


def test_every_protocol_method_is_exercised_by_the_contract_suite() -> None:
    here = Path(__file__).parent
    called = {
        node.attr
        for path in here.glob("test_*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Attribute)
    }
    missing = {
        name: [m for m in methods if m not in called]
        for name, methods in _protocol_methods().items()
    }
    assert {name: m for name, m in missing.items() if m} == {}
