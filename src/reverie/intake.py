"""What ingest accepts: an item parsed into an :class:`~reverie.models.Episode`, dated no later
than the ingest clock allows.

Every path that stores episodes — the library's ``remember`` / ``ingest``, the CLI, the HTTP
service, the MCP server — goes through :class:`reverie.Reverie`, which reads the clock at the
edge and hands it here. An episode whose ``created_at`` is more than
``MemoryConfig.future_skew_s`` after that clock is refused with
:class:`~reverie.errors.InvalidInput` on ``created_at``: one episode dated 9999-12-31 would
otherwise stay "newest" for ever. An episode sent without ``created_at`` is dated by the
clock's ``now`` when the caller gave one (else the model's default, the wall clock, applies);
either way the date is the server's, which is why it takes no part in the episode's derived id.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from reverie.errors import InvalidInput
from reverie.models import Episode, Scope, check_metadata

__all__ = ["IngestClock", "admit"]


@dataclass(frozen=True)
class IngestClock:
    """``now`` when the caller gave one, and the newest ``created_at`` accepted."""

    now: datetime | None
    latest: datetime
    skew_s: float

    @classmethod
    def at(cls, given: datetime | None, wall: datetime, skew_s: float) -> IngestClock:
        """The clock for the caller's ``given`` time, else for ``wall`` (read by the caller)."""
        return cls(given, (given or wall) + timedelta(seconds=skew_s), skew_s)


def _recheck(ep: Episode) -> Episode:
    """An :class:`Episode` built by the caller was validated when made, but its metadata is a
    mutable dict: the limits (:mod:`reverie.limits`) are checked again as it is admitted."""
    try:
        check_metadata(ep.metadata)
    except ValueError as exc:
        raise InvalidInput("metadata", str(exc)) from None
    return ep


def _parse(item: Episode | dict[str, Any], scope: Scope | None, clock: IngestClock) -> Episode:
    if isinstance(item, Episode):
        ep = _recheck(item)
    else:
        if isinstance(item, dict) and scope is not None and "scope" not in item:
            item = {**item, "scope": scope}
        ep = Episode.parse(item)
    if clock.now is not None:
        ep.dated_on_arrival(clock.now)
    return ep


def admit(item: Episode | dict[str, Any], scope: Scope | None, clock: IngestClock) -> Episode:
    """``item`` as an episode of ``scope`` (when it names none), or :class:`InvalidInput`."""
    ep = _parse(item, scope, clock)
    if ep.created_at > clock.latest:
        raise InvalidInput(
            "created_at",
            f"{ep.created_at.isoformat()} is in the future: at most {clock.skew_s:g} s after the"
            f" ingest clock is accepted (latest {clock.latest.isoformat()})",
        )
    return ep
