"""Leases, on every backend: compare-and-set, heartbeats, expiry takeover, the commit fence."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from reverie.errors import Conflict, LeaseLost
from reverie.models import Scope
from reverie.store.base import Store
from reverie.store.sql.leases import RELEASED, lease_time
from tests.conftest import EpisodeFactory
from tests.store.test_contract import changeset

T = datetime(2026, 11, 5, 12, tzinfo=UTC)
SCOPE = Scope.parse("acme/coder")


def test_one_holder_at_a_time_until_expiry(store: Store) -> None:
    first = store.acquire_lease(SCOPE, "w1", 10, T)
    assert first is not None and first.token == 1 and first.owner == "w1"
    assert store.acquire_lease(SCOPE, "w2", 10, T + timedelta(seconds=9)) is None
    renewed = store.acquire_lease(SCOPE, "w1", 10, T + timedelta(seconds=5))
    assert renewed is not None and renewed.token == 1  # the live holder renews, same token
    taken = store.acquire_lease(SCOPE, "w2", 10, T + timedelta(seconds=16))
    assert taken is not None and taken.owner == "w2" and taken.token == 2
    with pytest.raises(LeaseLost):
        store.heartbeat_lease(first, 10, T + timedelta(seconds=17))
    assert not store.release_lease(first)
    assert store.acquire_lease(SCOPE, "w1", 10, T + timedelta(seconds=17)) is None  # w2's still


def test_heartbeat_extends_and_release_frees(store: Store) -> None:
    lease = store.acquire_lease(SCOPE, "w1", 10, T)
    assert lease is not None
    beat = store.heartbeat_lease(lease, 10, T + timedelta(seconds=8))
    assert beat.expires_at == T + timedelta(seconds=18)
    assert store.acquire_lease(SCOPE, "w2", 10, T + timedelta(seconds=15)) is None
    assert store.release_lease(beat)
    after = store.acquire_lease(SCOPE, "w2", 10, T + timedelta(seconds=15))
    assert after is not None and after.token == 2


def test_claim_due_takes_pending_scopes_without_a_live_lease(
    store: Store, make_episode: EpisodeFactory
) -> None:
    store.append([make_episode(scope=f"acme/a{i}") for i in range(3)])
    busy = store.acquire_lease(Scope.parse("acme/a0"), "w1", 10, T)
    assert busy is not None
    got = store.claim_due("w2", 10, T, limit=5)
    assert sorted(lease.scope.key for lease in got) == ["acme/a1", "acme/a2"]
    assert store.claim_due("w3", 10, T, limit=5) == []  # all leased now
    late = store.claim_due("w3", 10, T + timedelta(seconds=11), limit=5)
    assert sorted(lease.scope.key for lease in late) == ["acme/a0", "acme/a1", "acme/a2"]
    assert {lease.token for lease in late} == {2}


def test_claim_due_skips_scopes_with_nothing_pending(
    store: Store, make_episode: EpisodeFactory
) -> None:
    eps = store.append([make_episode()])
    store.commit(changeset(SCOPE, 0, eps[0].seq or 0, [eps[0].id], []))
    assert store.claim_due("w1", 10, T) == []


def test_commit_is_fenced_by_another_owners_live_lease(
    store: Store, make_episode: EpisodeFactory
) -> None:
    eps = store.append([make_episode()])
    now = datetime.now(UTC)
    assert store.acquire_lease(SCOPE, "w1", 60, now) is not None
    with pytest.raises(Conflict, match="leased by w1"):
        store.commit(changeset(SCOPE, 0, eps[0].seq or 0, [eps[0].id], []))
    assert store.checkpoint(SCOPE) == 0
    store.lease_owner = "w1"  # type: ignore[attr-defined]  # the holder's own commit lands
    store.commit(changeset(SCOPE, 0, eps[0].seq or 0, [eps[0].id], []))
    assert store.checkpoint(SCOPE) == eps[0].seq


def test_a_released_lease_keeps_its_row_so_tokens_keep_growing(store: Store) -> None:
    assert lease_time(RELEASED) < lease_time(datetime(2026, 1, 1, tzinfo=UTC))
    scope = Scope.parse("acme/coder")
    lease = store.acquire_lease(scope, "w1", 30.0, datetime(2026, 1, 1, tzinfo=UTC))
    assert lease is not None and store.release_lease(lease)
    again = store.acquire_lease(scope, "w2", 30.0, datetime(2026, 1, 1, 0, 0, 1, tzinfo=UTC))
    assert again is not None and again.token == lease.token + 1
