"""Shapes for the dashboard: stored cycles turned into journal rows and a growth series.

Pure functions of what the facade returned (like :mod:`reverie.cli.render` for the terminal).
The series is cumulative over the cycles shown, oldest first: ``episodes`` consolidated so far,
``pages`` created so far, and ``compression`` = episodes per page. Undone cycles are listed but
add nothing to the series.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from reverie.models import Cycle, CycleStatus
from reverie.server.schemas import DreamOut
from reverie.store.base import StoreStats

__all__ = ["cycle_dream", "journal"]

_COUNTS = ("scanned", "collected", "deferred", "groups", "created", "revised", "merged")
_MORE = ("superseded", "retired", "unchanged", "episodes_marked", "model_calls", "cache_hits")


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
        **{k: getattr(report, k) for k in (*_COUNTS, *_MORE)},
    }


def _series(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    episodes = pages = 0
    points: list[dict[str, Any]] = []
    for row in rows:
        if not row["undone"]:
            episodes += row["episodes_marked"]
            pages += row["created"]
        points.append(
            {
                "at": row["started_at"],
                "cycle_id": row["cycle_id"],
                "episodes": episodes,
                "pages": pages,
                "compression": round(episodes / pages, 2) if pages else 0.0,
            }
        )
    return points


def journal(cycles: Sequence[Cycle], stats: StoreStats, *, scope: str) -> dict[str, Any]:
    """Journal rows (newest first), the series (oldest first), and the scope's totals."""
    rows = [_row(c) for c in sorted(cycles, key=lambda c: c.started_at)]
    return {
        "scope": scope,
        "cycles": list(reversed(rows)),
        "series": _series(rows),
        "stats": asdict(stats),
    }
