"""Plans held for review (migration 0008): a cycle's changeset, not yet applied.

``reverie dream --review`` runs a cycle up to the point where it would commit and stores the
:class:`~reverie.store.base.Changeset` it built instead — page writes naming the revisions they
expect to replace, episode marks, the expected and the new checkpoint, the cycle record — as JSON
in ``pending_plans``. Applying commits *exactly that changeset* through
:meth:`~reverie.store.base.Store.commit`, whose compare-and-set checks (page revisions, the
checkpoint, unmarked episodes) are the staleness check: a plan built on state that has moved is
refused whole and nothing changes.

Invariants:

- the row turns ``applied`` inside the commit's own transaction (``Changeset.plan_id``,
  :func:`settle_applied`), so a plan is never applied twice, nor left pending once it landed;
- at most one plan per scope is pending (a partial unique index): a second one would be built on
  the same episodes and make the first stale;
- a stored revision is re-hashed when a plan is read back; a plan whose content no longer matches
  its hashes is refused as corrupt rather than applied.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from functools import cache
from typing import Any

from pydantic import TypeAdapter, ValidationError

from reverie.errors import Conflict, NotFound, PlanPending, StoreError
from reverie.hashing import content_hash
from reverie.models import Revision, Scope
from reverie.store.records import Changeset, PendingPlan, PlanStatus
from reverie.store.sql.database import Database
from reverie.store.sql.dialect import Dialect

__all__ = [
    "blank_changeset",
    "dump_changeset",
    "load_changeset",
    "plan",
    "plan_id_for",
    "plans",
    "put_plan",
    "settle_applied",
    "settle_plan",
]

FORMAT = 1
"""Version of the stored changeset JSON; a reader refuses a format it does not know."""

_COLUMNS = "id, scope_key, cycle_id, status, created_at, settled_at, reason, changeset"


def plan_id_for(cycle_id: str) -> str:
    """A plan is named after the cycle it would record: ``cy_X`` is held as ``pl_X``."""
    return "pl_" + cycle_id.removeprefix("cy_")


# -- the stored form ---------------------------------------------------------------------------


@cache
def _adapter() -> TypeAdapter[Changeset]:
    return TypeAdapter(Changeset)


def dump_changeset(changes: Changeset) -> dict[str, Any]:
    """``changes`` as plain JSON, every field of :class:`Changeset` included;
    :func:`load_changeset` gives back an equal changeset (sequences as lists)."""
    data = _adapter().dump_python(changes, mode="json")
    data.pop("plan_id", None)  # set when the plan is applied, never stored
    return {"format": FORMAT, "changeset": data}


def _check_hash(rev: Revision) -> None:
    if content_hash(rev.content()) != rev.hash:
        raise StoreError(
            f"the stored plan's revision {rev.number} of page {rev.page_id} no longer matches"
            " its hash; refusing to use it"
        )


def load_changeset(data: dict[str, Any]) -> Changeset:
    """The changeset :func:`dump_changeset` wrote; :class:`StoreError` if it is not one."""
    if data.get("format") != FORMAT:
        raise StoreError(f"stored plan has format {data.get('format')!r}; expected {FORMAT}")
    try:
        changes = _adapter().validate_python(data["changeset"])
    except (KeyError, ValidationError) as exc:
        raise StoreError(f"stored plan is not a changeset: {exc}") from exc
    for write in changes.page_writes:
        _check_hash(write.revision)
    return changes


_REPORT_LISTS = (
    "changes", "insights", "rejected", "fallbacks", "deferred_groups", "recommendations",
    "promoted",
)  # fmt: skip


def blank_changeset(data: dict[str, Any], message: str) -> dict[str, Any]:
    """A stored plan (:func:`dump_changeset`'s form) emptied of everything it would write and
    of every text its report quotes, keeping its scope, checkpoints and cycle record: what an
    erasure leaves of a plan that held erased content (it can no longer be applied)."""
    changes = dict(data.get("changeset") or {})
    for name in ("page_writes", "marks", "episodes", "observations", "promotions"):
        changes[name] = []
    changes.update(journal=None, tally=None, mark_cycle=None, unmark_cycle=None)
    cycle = changes.get("cycle")
    if isinstance(cycle, dict) and isinstance(cycle.get("report"), dict):
        report = {**cycle["report"], **{name: [] for name in _REPORT_LISTS}}
        report.update(tool_stats={}, message=message)
        changes["cycle"] = {**cycle, "report": report}
    return {**data, "changeset": changes}


# -- SQL shared by both backends ---------------------------------------------------------------


def settle_applied(c: Any, d: Dialect, changes: Changeset) -> None:
    """Inside a commit: the reviewed plan it applies turns ``applied``."""
    if changes.plan_id is None:
        return
    cur = c.execute(
        "UPDATE pending_plans SET status = 'applied', settled_at = ?"
        " WHERE id = ? AND scope_key = ? AND status = 'pending'",
        (d.ts(changes.landed_at), changes.plan_id, changes.scope.key),
    )
    if cur.rowcount != 1:
        raise Conflict(f"plan {changes.plan_id} is no longer pending; nothing was applied")


def _pending_of(c: Any, scope_key: str) -> str | None:
    row = c.execute(
        "SELECT id FROM pending_plans WHERE scope_key = ? AND status = 'pending'", (scope_key,)
    ).fetchone()
    return str(row[0]) if row else None


def _plan_from_row(db: Database, r: Sequence[Any]) -> PendingPlan:
    data = r[7] if isinstance(r[7], dict) else json.loads(r[7])
    return PendingPlan(
        id=r[0],
        scope=db.decode.scope(r[1]),
        cycle_id=r[2],
        status=PlanStatus(r[3]),
        created_at=db.dialect.at(r[4]),
        settled_at=db.dialect.when(r[5]),
        reason=r[6],
        changes=load_changeset(data),
    )


def put_plan(db: Database, plan: PendingPlan) -> None:
    d = db.dialect
    try:
        with db.write() as c:
            db.ensure_scopes(c, [plan.scope], plan.created_at)
            waiting = _pending_of(c, plan.scope.key)
            if waiting is not None:
                raise PlanPending(waiting, plan.scope.key)
            c.execute(
                f"INSERT INTO pending_plans ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?)",
                (
                    plan.id,
                    plan.scope.key,
                    plan.cycle_id,
                    str(plan.status),
                    d.ts(plan.created_at),
                    d.ts(plan.settled_at),
                    plan.reason,
                    json.dumps(dump_changeset(plan.changes), ensure_ascii=False),
                ),
            )
    except d.duplicate as exc:  # a concurrent review of the scope got there first
        raise Conflict(f"plan {plan.id} could not be stored: {exc}") from exc


def plan(db: Database, plan_id: str) -> PendingPlan:
    rows = db.read(f"SELECT {_COLUMNS} FROM pending_plans WHERE id = ?", (plan_id,))
    if not rows:
        raise NotFound(f"no plan {plan_id}")
    return _plan_from_row(db, rows[0])


def plans(
    db: Database, scope: Scope | None = None, status: PlanStatus | None = None, limit: int = 50
) -> list[PendingPlan]:
    where, params = [], []
    if scope is not None:
        where.append("scope_key = ?")
        params.append(scope.key)
    if status is not None:
        where.append("status = ?")
        params.append(str(status))
    clause = f" WHERE {' AND '.join(where)}" if where else ""
    rows = db.read(
        f"SELECT {_COLUMNS} FROM pending_plans{clause} ORDER BY created_at DESC, id DESC LIMIT ?",
        [*params, limit],
    )
    return [_plan_from_row(db, r) for r in rows]


def settle_plan(
    db: Database, plan_id: str, status: PlanStatus, at: datetime, reason: str | None = None
) -> PendingPlan:
    with db.write() as c:
        cur = c.execute(
            "UPDATE pending_plans SET status = ?, settled_at = ?, reason = ?"
            " WHERE id = ? AND status = 'pending'",
            (str(status), db.dialect.ts(at), reason, plan_id),
        )
        changed = cur.rowcount == 1
    settled = plan(db, plan_id)
    if not changed:
        raise Conflict(f"plan {plan_id} is {settled.status}, not pending")
    return settled
