"""Review mode (docs/review.md): hold a cycle's changes as a plan, show it, apply or reject it.

A held plan is the exact :class:`~reverie.store.base.Changeset` the cycle would have committed
(:mod:`reverie.store.sql.plans`). Applying commits that changeset, so an applied plan gives the same
pages, revisions, marks and checkpoint as the direct cycle would have; the store's
compare-and-set refuses it when anything it was built on moved, and the plan turns ``stale``
with the list of what moved (:func:`what_moved`). A conflict that is not movement (a worker's
lease on the scope) leaves the plan pending, to be applied later.

**One pending plan per scope.** While a plan of a scope waits, a cycle of that scope that would
change the store — a direct one or another review — is refused with
:class:`~reverie.errors.PlanPending` naming the plan; a dry run still runs. Deferring the plan's
episodes instead would not help: the checkpoint cannot pass them, and any commit in between makes
the plan stale anyway. ``dream_all`` skips such scopes.

The readable diff (:func:`review`, :func:`render_review`) shows, per page the plan writes, a
unified diff of the page's markdown from the revision the plan was built on to the one it would
write, and the episodes cited by the claims it adds, one line each.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from reverie.errors import Conflict, InvalidInput, LeaseLost, NotFound, PlanPending, PlanStale
from reverie.memory.archive import resolve as resolve_archived
from reverie.models import CycleReport, CycleStatus, Episode, Revision, Scope
from reverie.store.base import BrainStore, Changeset, PageWrite
from reverie.store.records import PendingPlan, PlanStatus
from reverie.store.sql.plans import plan_id_for

__all__ = [
    "EpisodeLine",
    "PageDiff",
    "PlanReview",
    "apply_plan",
    "holder",
    "note_held",
    "parse_status",
    "refuse_if_pending",
    "reject_plan",
    "render_review",
    "review",
    "settled_line",
    "waiting_plan",
    "what_moved",
]


@dataclass(frozen=True)
class EpisodeLine:
    """One cited episode in a line: ``when · outcome · what happened``; ``new``: the plan
    consolidates it (it is not yet on any page)."""

    id: str
    line: str
    new: bool = False


@dataclass(frozen=True)
class PageDiff:
    """What a plan would do to one page."""

    page_id: str
    title: str
    action: str
    revision_before: int | None
    revision_after: int
    diff: str
    episodes: tuple[EpisodeLine, ...]


@dataclass(frozen=True)
class PlanReview:
    """A plan, the diff of every page it would change, and what moved since it was made."""

    plan: PendingPlan
    pages: tuple[PageDiff, ...]
    moved: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            **self.plan.summary(),
            "moved": list(self.moved),
            "pages": [dataclasses.asdict(p) for p in self.pages],
            "report": self.plan.report.model_dump(mode="json"),
        }


def waiting_plan(store: BrainStore, scope: Scope) -> PendingPlan | None:
    """The plan of ``scope`` awaiting review, if any."""
    found = store.plans(scope, PlanStatus.PENDING, limit=1)
    return found[0] if found else None


def refuse_if_pending(store: BrainStore, scope: Scope) -> None:
    """:class:`PlanPending` when a plan of ``scope`` awaits review (see the module doc)."""
    plan = waiting_plan(store, scope)
    if plan is not None:
        raise PlanPending(plan.id, scope.key)


def holder(store: BrainStore, now: datetime) -> Callable[[Changeset], None]:
    """The ``hold`` of :meth:`reverie.dream.cycle.DreamCycle.run`: store the changes as a plan."""

    def hold(changes: Changeset) -> None:
        cycle_id = changes.cycle.id if changes.cycle else changes.mark_cycle
        if cycle_id is None:
            raise InvalidInput("review", "only a cycle's changes can be held for review")
        plan = PendingPlan(
            id=plan_id_for(cycle_id),
            scope=changes.scope,
            cycle_id=cycle_id,
            status=PlanStatus.PENDING,
            created_at=now,
            changes=changes,
        )
        store.put_plan(plan)

    return hold


def note_held(report: CycleReport) -> CycleReport:
    """A held cycle's report names its plan and the command that shows it."""
    if report.status == CycleStatus.PENDING:
        plan_id = plan_id_for(report.cycle_id)
        report.message = (
            f"held for review as plan {plan_id} (reverie plan show {plan_id}); {report.message}"
        )
    return report


def parse_status(value: str | None) -> PlanStatus | None:
    if value is None:
        return None
    try:
        return PlanStatus(value)
    except ValueError:
        known = ", ".join(str(s) for s in PlanStatus)
        raise InvalidInput("status", f"{value!r} is not one of {known}") from None


# -- apply / reject ------------------------------------------------------------------------------


def _pending(plans: BrainStore, plan_id: str, verb: str) -> PendingPlan:
    plan = plans.plan(plan_id)
    if plan.status != PlanStatus.PENDING:
        why = f" ({plan.reason})" if plan.reason else ""
        raise Conflict(f"plan {plan_id} is {plan.status}{why}; only a pending plan can be {verb}")
    return plan


def _as_applied(plan: PendingPlan, now: datetime) -> Changeset:
    """The plan's changeset, naming the plan, landing ``now`` (its cycle record finished then)."""
    cycle = plan.changes.cycle
    if cycle is None:
        return dataclasses.replace(plan.changes, plan_id=plan.id, at=now)
    message = f"applied reviewed plan {plan.id}; {cycle.report.message}"
    report = cycle.report.model_copy(update={"finished_at": now, "message": message})
    cycle = cycle.model_copy(update={"finished_at": now, "report": report})
    return dataclasses.replace(plan.changes, plan_id=plan.id, cycle=cycle, at=now)


def apply_plan(store: BrainStore, plan_id: str, now: datetime) -> CycleReport:
    """Commit a pending plan exactly as made; :class:`PlanStale` (plan marked stale, nothing
    changed) when a page, the checkpoint or an episode it was built on moved since."""
    plan = _pending(store, plan_id, "applied")
    changes = _as_applied(plan, now)
    try:
        store.commit(changes)
    except LeaseLost:
        raise
    except Conflict as exc:
        moved = what_moved(store, plan.changes)
        if not moved:  # not movement (a worker's lease, a concurrent settle): still pending
            raise
        try:
            store.settle_plan(plan.id, PlanStatus.STALE, now, "; ".join(moved))
        except Conflict:  # settled meanwhile by someone else: their word stands
            raise exc from None
        raise PlanStale(plan.id, moved) from exc
    if changes.cycle is None:
        raise InvalidInput("plan", f"plan {plan_id} holds no cycle record")
    return changes.cycle.report


def reject_plan(store: BrainStore, plan_id: str, now: datetime, reason: str | None) -> PendingPlan:
    """Set a pending plan aside; nothing it holds is applied and its episodes stay eligible."""
    _pending(store, plan_id, "rejected")
    return store.settle_plan(plan_id, PlanStatus.REJECTED, now, reason or "rejected by review")


def _current_revision(store: BrainStore, page_id: str) -> int | None:
    try:
        return store.page(page_id).revision.number
    except NotFound:
        return None


def what_moved(store: BrainStore, changes: Changeset) -> list[str]:
    """Everything ``changes`` was built on that is no longer so (empty: it would still apply)."""
    moved = []
    current = store.checkpoint(changes.scope)
    if current != changes.expected_checkpoint:
        moved.append(
            f"the checkpoint of {changes.scope} is {current}, the plan expected"
            f" {changes.expected_checkpoint} (another cycle ran)"
        )
    for w in changes.page_writes:
        now_at = _current_revision(store, w.revision.page_id)
        if now_at == w.expected_revision:
            continue
        name = f'page {w.revision.page_id} "{w.revision.title}"'
        if w.expected_revision is None:
            moved.append(f"{name} was created since (revision {now_at})")
        else:
            moved.append(f"{name} is at revision {now_at}, the plan expected {w.expected_revision}")
    marked = store.episodes(changes.marks, tenant=changes.scope.tenant)
    taken = [e.id for e in marked if e.consolidated_in is not None]
    if taken:
        shown = ", ".join(taken[:3]) + (f" +{len(taken) - 3}" if len(taken) > 3 else "")
        moved.append(f"{len(taken)} of its episodes were consolidated since ({shown})")
    return moved


# -- the readable diff ---------------------------------------------------------------------------


def _markdown(rev: Revision | None) -> list[str]:
    if rev is None:
        return []
    lines = [f"# {rev.title}", "", f"*{rev.kind} · {rev.status} · confidence {rev.confidence:.2f}*"]
    if rev.valid_from or rev.valid_until:
        since = rev.valid_from.isoformat() if rev.valid_from else "…"
        until = rev.valid_until.isoformat() if rev.valid_until else "…"
        lines.append(f"valid {since} → {until}")
    if rev.superseded_by:
        lines.append(f"superseded by {rev.superseded_by}")
    if rev.reason:
        lines.append(f"reason: {rev.reason}")
    return [*lines, "", *rev.body.splitlines()]


def _one_line(e: Episode, width: int = 100) -> str:
    text = " ".join((e.situation or e.action).split())
    text = text if len(text) <= width else text[: width - 1] + "…"
    return f"{e.created_at:%Y-%m-%d %H:%M} · {e.outcome} · {text}"


def _cited(
    store: BrainStore, tenant: str, before: Revision | None, after: Revision, marks: set[str]
) -> tuple[EpisodeLine, ...]:
    """The episodes (of ``tenant``, the page's) cited by the claims ``after`` adds, one line
    each, in citation order."""
    old = set(before.claims) if before else set()
    ids = list(dict.fromkeys(e for c in after.claims if c not in old for e in c.episode_ids))
    found = {e.id: e for e in resolve_archived(store, store.episodes(ids, tenant=tenant))}
    return tuple(
        EpisodeLine(i, _one_line(found[i]) if i in found else "(not found)", i in marks)
        for i in ids
    )


def _page_diff(
    store: BrainStore, w: PageWrite, before: Revision | None, action: str, marks: set[str]
) -> PageDiff:
    after = w.revision
    head = f"{after.page_id} rev {w.expected_revision}" if before else "(new page)"
    diff = difflib.unified_diff(
        _markdown(before),
        _markdown(after),
        fromfile=head,
        tofile=f"{after.page_id} rev {after.number} (plan)",
        lineterm="",
    )
    return PageDiff(
        page_id=after.page_id,
        title=after.title,
        action=action,
        revision_before=w.expected_revision,
        revision_after=after.number,
        diff="\n".join(diff),
        episodes=_cited(store, w.scope.tenant, before, after, marks),
    )


def _revision(store: BrainStore, page_id: str, number: int | None) -> Revision | None:
    if number is None:
        return None
    try:
        return next((r for r in store.revisions(page_id) if r.number == number), None)
    except NotFound:
        return None


def review(store: BrainStore, plan_id: str) -> PlanReview:
    """The plan ``plan_id`` with a diff of every page it would write."""
    plan = store.plan(plan_id)
    actions = {(c.page_id, c.revision_after): c.action for c in plan.report.changes}
    written: dict[str, Revision] = {}  # a page written twice diffs against its first write
    marks = set(plan.changes.marks)
    pages = []
    for w in plan.changes.page_writes:
        page_id = w.revision.page_id
        before = written.get(page_id) or _revision(store, page_id, w.expected_revision)
        default = "created" if w.expected_revision is None else "revised"
        action = actions.get((page_id, w.revision.number), default)
        pages.append(_page_diff(store, w, before, action, marks))
        written[page_id] = w.revision
    pending = plan.status == PlanStatus.PENDING
    moved = what_moved(store, plan.changes) if pending else []
    return PlanReview(plan=plan, pages=tuple(pages), moved=tuple(moved))


def _header(plan: PendingPlan) -> list[str]:
    r, cs = plan.report, plan.changes
    counts = ", ".join(
        f"{getattr(r, k)} {k}"
        for k in ("created", "revised", "merged", "superseded", "retired")
        if getattr(r, k)
    )
    lines = [
        f"plan {plan.id} · {plan.scope} · {plan.status}",
        f"made {plan.created_at:%Y-%m-%d %H:%M} UTC for cycle {plan.cycle_id}",
        f"checkpoint {cs.expected_checkpoint} → {cs.checkpoint} · {len(cs.marks)} episodes"
        f" consolidated · {len(cs.page_writes)} page writes ({counts or 'no page changes'})",
    ]
    if r.model_calls or r.cache_hits:
        lines.append(
            f"model: {r.model_calls} calls, {r.cache_hits} cached, {r.input_tokens} tokens in,"
            f" {r.output_tokens} out"
        )
    lines += [f"rejected group: {x}" for x in r.rejected]
    if plan.settled_at is not None:
        lines.append(f"{plan.status} {plan.settled_at:%Y-%m-%d %H:%M} UTC: {plan.reason or ''}")
    return lines


def _page_section(p: PageDiff) -> list[str]:
    before = "new" if p.revision_before is None else f"rev {p.revision_before}"
    lines = ["", f'== {p.action} "{p.title}" ({p.page_id}, {before} → rev {p.revision_after})']
    lines += p.diff.splitlines() or ["(no visible change)"]
    if p.episodes:
        lines.append("cited episodes (* consolidated by this plan):")
        lines += [f"  {'*' if e.new else ' '} {e.id}  {e.line}" for e in p.episodes]
    return lines


def render_review(found: PlanReview) -> str:
    """The plan as plain text: a header, what moved, then each page's diff and its evidence."""
    lines = _header(found.plan)
    if found.moved:
        lines.append("stale — applying would be refused:")
        lines += [f"  {m}" for m in found.moved]
    for page in found.pages:
        lines += _page_section(page)
    return "\n".join(lines) + "\n"


def settled_line(plan: PendingPlan) -> str:
    """One line for a plan that left pending."""
    return f"plan {plan.id} {plan.status}" + (f": {plan.reason}" if plan.reason else "")
