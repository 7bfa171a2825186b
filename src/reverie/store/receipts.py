"""What an erasure is and what it leaves behind: pure records (docs/privacy.md).

:class:`Erasure` is the plan the planner (:mod:`reverie.memory.forget`) reads out of the store
and :meth:`~reverie.store.base.BrainStore.erase` applies in one transaction, as a
:class:`~reverie.store.base.Changeset` is for a cycle. :class:`Receipt` and :class:`Tombstone`
are what stays: what was asked, what was removed, and every revision's hash before and after.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from reverie.models import Episode, Revision, Scope
from reverie.store.archive import BundleInfo

__all__ = [
    "BundleSwap",
    "Erasure",
    "ExportRecord",
    "PageDrop",
    "Receipt",
    "RevisionRewrite",
    "Tombstone",
]


@dataclass(frozen=True)
class Tombstone:
    """A revision an erasure rewrote (``hash_after``: its new hash) or deleted (None)."""

    erasure_id: str
    page_id: str
    revision: int
    scope: Scope
    hash_before: str
    hash_after: str | None
    at: datetime
    reason: str
    request_id: str

    def to_json(self) -> dict[str, Any]:
        return {
            "page_id": self.page_id,
            "revision": self.revision,
            "scope": self.scope.key,
            "hash_before": self.hash_before,
            "hash_after": self.hash_after,
            "at": self.at.isoformat(),
            "reason": self.reason,
            "request_id": self.request_id,
        }


@dataclass(frozen=True)
class RevisionRewrite:
    """A revision re-derived without the erased evidence (same page and number, new hash)."""

    scope: Scope
    revision: Revision
    hash_before: str
    current: bool


@dataclass(frozen=True)
class PageDrop:
    """A page deleted whole; ``revisions`` are the (number, hash) the plan read."""

    page_id: str
    scope: Scope
    revisions: tuple[tuple[int, str], ...]


@dataclass(frozen=True)
class BundleSwap:
    """An archive bundle that held erased episodes, and the one replacing it (None: it held
    nothing else)."""

    old: BundleInfo
    new: BundleInfo | None


@dataclass(frozen=True)
class ExportRecord:
    """Where a scope was exported: a Markdown mirror folder or a training file."""

    path: str
    kind: str
    scope: Scope
    first_at: datetime
    last_at: datetime


@dataclass(frozen=True)
class Erasure:
    """Everything one erasure removes, as the planner read it; applied by
    :meth:`ErasureSQL.erase` all or nothing."""

    id: str
    request_id: str
    at: datetime
    reason: str
    request: Mapping[str, Any]
    episodes: Sequence[Episode] = ()
    rewrites: Sequence[RevisionRewrite] = ()
    drops: Sequence[PageDrop] = ()
    topic_keys: Mapping[str, str] = field(default_factory=dict)
    bundles: Sequence[BundleSwap] = ()
    scopes: Sequence[Scope] = ()
    """Scopes erased whole (their rows in every table)."""
    touched: Sequence[Scope] = ()
    """Scopes whose reports, journal, plans and messages are scrubbed of ``needles``."""
    needles: tuple[str, ...] = ()
    details: Mapping[str, Any] = field(default_factory=dict)
    pending: Mapping[str, Any] = field(default_factory=dict)
    counted: Mapping[str, int] = field(default_factory=dict)
    """Counts the planner knows and the store cannot (claims dropped, files out of reach)."""

    @property
    def episode_ids(self) -> frozenset[str]:
        return frozenset(e.id for e in self.episodes)


@dataclass(frozen=True)
class Receipt:
    """What an erasure did (or, for a dry run, would do)."""

    id: str
    request_id: str
    created_at: datetime
    request: Mapping[str, Any]
    counts: Mapping[str, int]
    details: Mapping[str, Any]
    applied: bool = True
    finished_at: datetime | None = None
    tombstones: Sequence[Tombstone] = ()

    @property
    def pending(self) -> Mapping[str, Any]:
        """File work still due after the commit (none once ``finished_at`` is set)."""
        return {} if self.finished_at else dict(self.details.get("pending") or {})

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "request_id": self.request_id,
            "applied": self.applied,
            "created_at": self.created_at.isoformat(),
            "finished_at": self.finished_at.isoformat() if self.finished_at else None,
            "request": dict(self.request),
            "counts": dict(self.counts),
            **{k: v for k, v in self.details.items() if k != "pending"},
            "pending": dict(self.pending),
            "tombstones": [t.to_json() for t in self.tombstones],
        }
