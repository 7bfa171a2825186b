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

:func:`ingest` stores many items in batches, each batch one append (one transaction). A bad item
never costs the others: one that does not parse is reported by its position and left out of its
batch, and a batch the store refuses for one item's sake is retried item by item, so only the
items that fail again are reported.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from reverie.errors import Conflict, InvalidInput, describe
from reverie.models import Episode, Scope, check_metadata
from reverie.store.base import BrainStore

__all__ = ["ITEM_ERRORS", "IngestClock", "IngestError", "IngestResult", "admit", "ingest"]

ITEM_ERRORS = (Conflict, ValueError, TypeError, OverflowError, RecursionError)
"""What one item can make a batch's append raise: the batch is retried item by item and only
the items that raise again are reported. A failure of the store itself (:class:`StoreError`,
the disk full) is not an item's fault and propagates: the batches before it stay stored."""


@dataclass(frozen=True)
class IngestClock:
    """``received``, the time the store records as when the episodes arrived (the caller's
    ``now``, else the facade's clock) and the date of an episode sent without one; and the
    newest ``created_at`` accepted."""

    received: datetime
    latest: datetime
    skew_s: float

    @classmethod
    def at(cls, received: datetime, skew_s: float) -> IngestClock:
        """The clock of an ingest at ``received``, accepting ``skew_s`` seconds of skew."""
        return cls(received, received + timedelta(seconds=skew_s), skew_s)


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
    ep.dated_on_arrival(clock.received)
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


@dataclass(frozen=True)
class IngestError:
    """An item ``ingest`` could not store: its 0-based position, the field and the reason."""

    index: int
    field: str
    reason: str


@dataclass
class IngestResult:
    stored: int = 0
    duplicates: int = 0
    errors: list[IngestError] = field(default_factory=list)

    def count(self, stored: list[Episode], asked: int) -> None:
        """``asked`` items appended, of which ``stored`` were new: the rest were duplicates."""
        self.stored += len(stored)
        self.duplicates += asked - len(stored)


def ingest(
    store: BrainStore,
    items: Iterable[Episode | dict[str, Any]],
    scope: Scope | None,
    clock: IngestClock,
    batch_size: int,
) -> IngestResult:
    """Admit ``items`` (of ``scope`` when they name none) and append them ``batch_size`` at a
    time; what was stored, what was already there, and each item that was refused."""
    result = IngestResult()
    for batch in _batches(items, scope, clock, batch_size, result):
        _append_batch(store, batch, clock.received, result)
    return result


def _batches(
    items: Iterable[Episode | dict[str, Any]],
    scope: Scope | None,
    clock: IngestClock,
    size: int,
    result: IngestResult,
) -> Iterator[list[tuple[int, Episode]]]:
    batch: list[tuple[int, Episode]] = []
    for index, item in enumerate(items):
        try:
            batch.append((index, admit(item, scope, clock)))
        except InvalidInput as exc:
            result.errors.append(IngestError(index, exc.field, exc.reason))
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def _append_batch(
    store: BrainStore, batch: list[tuple[int, Episode]], at: datetime, result: IngestResult
) -> None:
    try:
        stored = store.append([ep for _i, ep in batch], at=at)
    except ITEM_ERRORS:
        for index, ep in batch:  # find the culprit(s); the rest still land
            _append_one(store, index, ep, at, result)
        return
    result.count(stored, len(batch))


def _append_one(
    store: BrainStore, index: int, ep: Episode, at: datetime, result: IngestResult
) -> None:
    try:
        result.count(store.append([ep], at=at), 1)
    except Conflict as exc:
        result.errors.append(IngestError(index, "id", str(exc)))
    except ITEM_ERRORS as exc:
        result.errors.append(IngestError(index, "item", f"cannot be stored: {describe(exc)}"))
