"""One heartbeat for every lease holder, with one failure rule (reverie.runtime.heartbeat)."""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from reverie.errors import LeaseLost, StoreError
from reverie.models import Scope
from reverie.runtime.heartbeat import Heartbeat
from reverie.store.base import Lease

T0 = datetime(2026, 5, 1, tzinfo=UTC)
LEASE = Lease(Scope.parse("acme/coder"), "me", 1, T0, T0 + timedelta(seconds=3))


class ScriptedLeases:
    """``heartbeat_lease`` answers from a script: an exception to raise, or None to extend."""

    def __init__(self, *script: BaseException | None) -> None:
        self.script = list(script)
        self.calls = 0
        self.done = threading.Event()

    def heartbeat_lease(self, lease: Lease, ttl: float, now: datetime) -> Lease:
        self.calls += 1
        step = self.script.pop(0) if self.script else None
        if not self.script:
            self.done.set()
        if step is not None:
            raise step
        return replace(lease, expires_at=now + timedelta(seconds=ttl))


def _beat(leases: ScriptedLeases) -> Heartbeat:
    return Heartbeat(leases, LEASE, 0.03, lambda: T0)  # type: ignore[arg-type]


def test_a_transient_error_is_retried_and_the_lease_extended() -> None:
    leases = ScriptedLeases(StoreError("database is locked"), OSError("reset"), None)
    with _beat(leases) as beat:
        assert leases.done.wait(5)
    assert not beat.lost and leases.calls >= 3
    assert beat.lease.expires_at == T0 + timedelta(seconds=0.03)


def test_a_lost_lease_stops_the_beat() -> None:
    leases = ScriptedLeases(StoreError("busy"), LeaseLost("taken over"))
    beat = _beat(leases)
    beat.start()
    beat.join(5)
    assert not beat.is_alive() and beat.stop() is True
    assert leases.calls == 2 and beat.lease == LEASE


def test_stopping_before_the_first_beat_extends_nothing() -> None:
    leases = ScriptedLeases()
    beat = Heartbeat(leases, LEASE, 60.0, lambda: T0)  # type: ignore[arg-type]
    with beat:
        pass
    assert leases.calls == 0 and beat.stop() is False
