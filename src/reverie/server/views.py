"""Shapes for the console: stored cycles turned into journal rows and a growth series.

Pure functions of what the facade returned (like :mod:`reverie.cli.tables` for the terminal).
The series is cumulative over the cycles shown, oldest first: ``episodes`` consolidated so far,
``pages`` created so far, ``compression`` = episodes per page, and ``active_pages``: the pages
active after each cycle, replayed from the changes the cycles recorded (a page created, revised,
merged into or restored is active; one superseded or retired is not). Undone cycles are listed
but add nothing to the series: an undo puts back what stood before, and is refused while a
later change of the same page stands, so skipping the undone cycle replays the same state.
When older cycles than those shown exist, ``active_pages`` is offset so that its last point is
the scope's count of active pages now.

Recall use (:func:`recall_days`) is the store's hourly counts summed per UTC day, oldest first:
the days on which something recalled, not a row for every day in between.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from datetime import UTC
from typing import Any

from reverie.models import Cycle, CycleStatus
from reverie.server.schemas import DreamOut
from reverie.store.base import JournalEntry, RecallTally, StoreStats

__all__ = ["cycle_dream", "entry_view", "journal", "recall_days"]

_COUNTS = ("scanned", "collected", "deferred", "groups", "created", "revised", "merged")
_MORE = ("superseded", "retired", "unchanged", "episodes_marked", "model_calls", "cache_hits")
_COST = ("input_tokens", "output_tokens", "model_latency_s")
_ACTIVE = frozenset({"created", "revised", "merged", "restored"})
_ENDED = frozenset({"superseded", "retired"})


def cycle_dream(cycle: Cycle) -> DreamOut:
    """A recorded cycle in the shape of a dream started over HTTP."""
    state = "undone" if cycle.undone_at else "done"
    return DreamOut(
        cycle_id=cycle.id,
        scope=cycle.scope.key,
        state=state,
        dry_run=cycle.status == CycleStatus.DRY_RUN,
        started_at=cycle.started_at.isoformat(),
        finished_at=cycle.finished_at.isoformat() if cycle.finished_at else None,
        report=cycle.report.model_dump(mode="json"),
        error=None,
    )


def _row(cycle: Cycle) -> dict[str, Any]:
    report = cycle.report
    duration = round(sum(report.timings.values()), 6)  # measured; started_at may be --now
    touched = report.created + report.revised + report.merged
    return {
        "cycle_id": cycle.id,
        "status": str(cycle.status),
        "undone": cycle.undone_at is not None,
        "started_at": cycle.started_at.isoformat(),
        "duration_s": duration,
        "timings": report.timings,
        "compression": round(report.episodes_marked / touched, 2) if touched else None,
        "message": report.message,
        **{k: getattr(report, k) for k in (*_COUNTS, *_MORE, *_COST)},
    }


def _replay(active: set[str], cycle: Cycle) -> None:
    """The pages active after ``cycle``, from those active before it (module docstring)."""
    if cycle.undone_at is not None or cycle.status != CycleStatus.COMMITTED:
        return
    for change in cycle.report.changes:
        if change.action in _ACTIVE:
            active.add(change.page_id)
        elif change.action in _ENDED:
            active.discard(change.page_id)


def _series(cycles: Sequence[Cycle], rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    episodes = pages = 0
    active: set[str] = set()
    points: list[dict[str, Any]] = []
    for cycle, row in zip(cycles, rows, strict=True):
        if not row["undone"]:
            episodes += row["episodes_marked"]
            pages += row["created"]
        _replay(active, cycle)
        points.append(
            {
                "at": row["started_at"],
                "cycle_id": row["cycle_id"],
                "episodes": episodes,
                "pages": pages,
                "active_pages": len(active),
                "compression": round(episodes / pages, 2) if pages else 0.0,
            }
        )
    return points


def _anchored(points: list[dict[str, Any]], active_now: int, complete: bool) -> None:
    """Offset ``active_pages`` by the pages older cycles than those shown left active."""
    if complete or not points:
        return
    offset = active_now - points[-1]["active_pages"]
    for point in points:
        point["active_pages"] = max(0, point["active_pages"] + offset)


def journal(
    cycles: Sequence[Cycle], stats: StoreStats, *, scope: str, complete: bool = True
) -> dict[str, Any]:
    """Journal rows (newest first), the series (oldest first), and the scope's totals;
    ``complete`` when ``cycles`` are every cycle of the scope."""
    ordered = sorted(cycles, key=lambda c: c.started_at)
    rows = [_row(c) for c in ordered]
    points = _series(ordered, rows)
    _anchored(points, stats.active_pages, complete)
    return {
        "scope": scope,
        "cycles": list(reversed(rows)),
        "series": points,
        "stats": asdict(stats),
    }


def entry_view(entry: JournalEntry) -> dict[str, Any]:
    """One entry of the dream journal (a cycle, an undo, a restore, an edit) for the console."""
    return {"at": entry.created_at.isoformat(), "cycle_id": entry.cycle_id, "text": entry.text}


def recall_days(tallies: Sequence[RecallTally]) -> list[dict[str, Any]]:
    """Recall use per UTC day: recalls, hits (at least one unit packed), misses, units, tokens."""
    days: dict[str, dict[str, Any]] = {}
    for t in tallies:
        day = t.hour.astimezone(UTC).replace(hour=0).isoformat()
        row = days.setdefault(day, {"at": day, "recalls": 0, "hits": 0, "units": 0, "tokens": 0})
        for name in ("recalls", "hits", "units", "tokens"):
            row[name] += getattr(t, name)
    for row in days.values():
        row["misses"] = row["recalls"] - row["hits"]
    return [days[d] for d in sorted(days)]
