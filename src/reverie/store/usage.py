"""Recall use, counted in memory and written in batches: is memory being used?

Every recall the engine answers for an agent adds one to its scope's hour, a *hit* when it
packed at least one unit (an explained recall, a person's look at the pipeline, is not counted).
Writing each recall at once would put a write transaction (on SQLite a sync of its log) on the
read path, so counts gather here and the engine writes them (``Store.record_recalls``) when
:meth:`RecallUsage.add` says they are due — ``every`` recalls, or ``after`` since the oldest
unwritten one — before the counts are read, and when the engine closes. A crash loses at most
those unwritten counts: they picture use, and no cycle depends on them.
"""

from __future__ import annotations

import threading
from datetime import datetime, timedelta

from reverie.models import Scope
from reverie.store.records import RecallTally

__all__ = ["RecallUsage", "hour_of"]


def hour_of(at: datetime) -> datetime:
    """The start of the hour ``at`` falls in (``at`` is UTC)."""
    return at.replace(minute=0, second=0, microsecond=0)


class RecallUsage:
    """Unwritten recall counts per (scope, hour); safe to share between threads."""

    def __init__(self, *, every: int = 100, after: timedelta = timedelta(seconds=30)) -> None:
        self.every, self.after = every, after
        self._lock = threading.Lock()
        self._counts: dict[tuple[Scope, datetime], RecallTally] = {}
        self._added = 0
        self._oldest: datetime | None = None

    def add(self, scope: Scope, at: datetime, *, units: int, tokens: int) -> bool:
        """Count one recall of ``scope`` at ``at`` that packed ``units`` in ``tokens``;
        True when the counts are due to be written."""
        key = (scope, hour_of(at))
        with self._lock:
            old = self._counts.get(key) or RecallTally(scope, key[1])
            self._counts[key] = RecallTally(
                scope,
                key[1],
                recalls=old.recalls + 1,
                hits=old.hits + (units > 0),
                units=old.units + units,
                tokens=old.tokens + tokens,
            )
            self._added += 1
            self._oldest = min(self._oldest or at, at)
            return self._added >= self.every or at - self._oldest >= self.after

    def drain(self) -> list[RecallTally]:
        """The unwritten counts, handed over once: the next call starts from none."""
        with self._lock:
            counts, self._counts = list(self._counts.values()), {}
            self._added, self._oldest = 0, None
        return counts
