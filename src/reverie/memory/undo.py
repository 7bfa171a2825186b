"""Undoing a cycle: a new revision per touched page restoring what it read, episodes released.

Undo never deletes: a page the cycle created gets a retired revision, a page it changed gets a new
revision with the exact content of the one before. The cycle's episodes lose their marks and the
checkpoint moves back below the first of them, so the next cycle consolidates them again (episodes
consolidated by later cycles keep their marks and are not collected twice). Undo refuses when a
later cycle changed one of the same pages, and a second undo of the same cycle is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from reverie.dream.apply import WriteContext, next_revision
from reverie.dream.journal import entry
from reverie.errors import UndoRefused
from reverie.models import Cycle, CycleStatus, PageChange, PageStatus
from reverie.store.base import BrainStore, Changeset, PageWrite

__all__ = ["UndoReport", "plan_undo"]


@dataclass(frozen=True)
class UndoReport:
    cycle_id: str
    pages_restored: list[str]
    episodes_released: int
    checkpoint: int
    message: str


def _later_cycles(store: BrainStore, cycle: Cycle) -> list[Cycle]:
    """The cycles of ``cycle``'s scope recorded after it (``cycles`` lists newest first)."""
    later = []
    for other in store.cycles(cycle.scope, limit=2**62):
        if other.id == cycle.id:
            break
        later.append(other)
    return later


def _check_undoable(store: BrainStore, cycle: Cycle) -> None:
    if cycle.undone_at is not None:
        raise UndoRefused(
            f"cycle {cycle.id} was already undone at {cycle.undone_at.isoformat()}; nothing to do"
        )
    if cycle.status != CycleStatus.COMMITTED:
        raise UndoRefused(
            f"cycle {cycle.id} is {cycle.status}; only committed cycles can be undone"
        )
    touched = {c.page_id for c in cycle.report.changes}
    for later in _later_cycles(store, cycle):
        if later.undone_at is not None:
            continue
        clash = touched & {c.page_id for c in later.report.changes}
        if clash:
            raise UndoRefused(
                f"later cycle {later.id} changed the same page(s) {sorted(clash)};"
                f" undo {later.id} first"
            )


def _restore(store: BrainStore, change: PageChange, ctx: WriteContext) -> PageWrite:
    page = store.page(change.page_id)
    history = store.revisions(page.id)
    if page.revision.hash != history[change.revision_after - 1].hash:
        raise UndoRefused(
            f"page {page.id} was changed after cycle {ctx.cycle_id} (now at revision"
            f" {page.revision.number}); undo the later change first"
        )
    reason = f"undo of cycle {ctx.cycle_id}"
    if change.revision_before is None:
        rev = next_revision(
            ctx, page, status=PageStatus.RETIRED, reason=reason + " (page created by it)"
        )
    else:
        old = history[change.revision_before - 1]
        # all of the old content, its pins too: undoing a person's edit takes its pins back
        rev = next_revision(ctx, page, reason=reason, **old.content_fields())
    return PageWrite(ctx.scope, page.topic_key, rev, expected_revision=page.revision.number)


def _journal(cycle: Cycle, writes: list[PageWrite], released: int, now: datetime) -> str:
    """The journal entry of an undo."""
    changes = [
        ("retired" if w.revision.status is PageStatus.RETIRED else "restored", w, 0) for w in writes
    ]
    note = f"{released} episode(s) eligible again"
    return entry(f"undo of cycle {cycle.id} · {cycle.scope}", now, changes, note)


def plan_undo(store: BrainStore, cycle_id: str, now: datetime) -> tuple[Changeset, UndoReport]:
    """The changeset that undoes ``cycle_id``, or :class:`UndoRefused` saying why not."""
    cycle = store.cycle(cycle_id)
    _check_undoable(store, cycle)
    ctx = WriteContext(cycle.scope, cycle.id, now, {}, author="undo")
    seen: set[str] = set()
    writes = []
    for change in cycle.report.changes:
        if change.page_id not in seen:
            seen.add(change.page_id)
            writes.append(_restore(store, change, ctx))
    released = store.marked(cycle.id)
    current = store.checkpoint(cycle.scope)
    checkpoint = min(current, released[0] - 1) if released else current
    changes = Changeset(
        scope=cycle.scope,
        expected_checkpoint=current,
        checkpoint=checkpoint,
        page_writes=writes,
        unmark_cycle=cycle.id,
        undone_cycle=cycle.id,
        journal=_journal(cycle, writes, len(released), now),
        at=now,
    )
    report = UndoReport(
        cycle_id=cycle.id,
        pages_restored=[w.revision.page_id for w in writes],
        episodes_released=len(released),
        checkpoint=checkpoint,
        message=(
            f"undid cycle {cycle.id}: {len(writes)} page(s) restored,"
            f" {len(released)} episode(s) eligible again"
        ),
    )
    return changes, report
