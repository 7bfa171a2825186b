"""Review mode over HTTP (docs/review.md): the plans ``POST /v1/dreams {"review": true}`` held.

``GET /v1/plans`` lists a scope's plans, ``GET /v1/plans/{id}`` shows one with the diff of every
page it would change and the episodes it cites, ``POST …/apply`` commits it exactly as it was
made (409 ``plan_stale`` when a page, the checkpoint or an episode moved since: nothing is
applied and the plan is marked stale) and ``POST …/reject`` sets it aside (its episodes stay
eligible). Reading needs any key that covers the plan's scope, applying or rejecting a write
key; a plan of another scope answers 404 like a missing one.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from reverie.keys import ApiKey
from reverie.models import CycleReport
from reverie.server.auth import Brain, Reader, Writer, ensure_visible, scope_for
from reverie.server.schemas import RejectIn
from reverie.store.records import PendingPlan

__all__ = ["plans_router"]

plans_router = APIRouter(prefix="/v1", tags=["review"])

Status = Annotated[
    str, Query(description="pending, applied, rejected, stale, or all", pattern="^[a-z]+$")
]


def _plan(rv: Any, key: ApiKey, plan_id: str, *, write: bool = False) -> PendingPlan:
    """The plan, 404 unless ``key`` covers its scope; 403 when it only reads and must write."""
    plan: PendingPlan = rv.store.plan(plan_id)
    ensure_visible(key, plan.scope, f"plan {plan_id}")
    if write:
        scope_for(key, plan.scope, write=True)
    return plan


@plans_router.get("/plans")
def list_plans(
    scope: Annotated[str, Query(description="tenant/agent[/user]", min_length=3)],
    rv: Brain,
    key: Reader,
    status: Status = "pending",
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> list[dict[str, Any]]:
    """A scope's plans held for review, newest first (``status=all``: whatever became of them)."""
    wanted = None if status == "all" else status
    return [p.summary() for p in rv.plans(scope_for(key, scope), status=wanted, limit=limit)]


@plans_router.get("/plans/{plan_id}")
def read_plan(plan_id: str, rv: Brain, key: Reader) -> dict[str, Any]:
    """A plan with the diff of every page it would change and the episodes it cites."""
    _plan(rv, key, plan_id)
    review: dict[str, Any] = rv.plan(plan_id).to_json()
    return review


@plans_router.post("/plans/{plan_id}/apply")
def apply_plan(plan_id: str, rv: Brain, key: Writer) -> CycleReport:
    """Commit the plan as it was made; 409 when it went stale (nothing applied)."""
    _plan(rv, key, plan_id, write=True)
    report: CycleReport = rv.apply_plan(plan_id)
    return report


@plans_router.post("/plans/{plan_id}/reject")
def reject_plan(
    plan_id: str, rv: Brain, key: Writer, body: RejectIn | None = None
) -> dict[str, Any]:
    """Set the plan aside; its episodes stay eligible for the next cycle."""
    _plan(rv, key, plan_id, write=True)
    rejected: PendingPlan = rv.reject_plan(plan_id, reason=body.reason if body else None)
    return rejected.summary()
