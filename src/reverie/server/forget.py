"""Erasure over HTTP (docs/privacy.md): ``POST /v1/forget`` and ``GET /v1/forget/{id}``.

Both need a key with ``admin`` rights — a ``write`` key never erases — and reach only what the
key is bound to: a request naming no place is bounded to the key's tenant (or agent); one
naming a scope, agent or tenant outside it is refused with 403; episode ids outside it are
reported as not found, exactly like ids that do not exist, so a key learns nothing of another
tenant. ``apply`` is false by default: the answer is the dry run's receipt.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from reverie.errors import NotFound
from reverie.keys import ApiKey, allows
from reverie.models import Scope
from reverie.server.auth import Admin, Brain, scope_for
from reverie.server.http_errors import ApiError

__all__ = ["ForgetIn", "forget_router"]

forget_router = APIRouter(prefix="/v1", tags=["erasure"])


class ForgetIn(BaseModel):
    """What to erase (at most one of episodes, page, subject, older_than) and where (at most one
    of scope, agent, tenant; default: all the key may reach): the keywords of
    :meth:`reverie.Reverie.forget`."""

    model_config = ConfigDict(extra="forbid")

    episodes: list[str] = Field(default_factory=list, max_length=10_000)
    page: str | None = None
    subject: str | None = Field(default=None, max_length=1000)
    older_than: str | None = Field(default=None, description="A duration such as 400d.")
    scope: str | None = None
    agent: str | None = Field(default=None, description="tenant/agent: it and all its users.")
    tenant: str | None = None
    apply: bool = False
    reason: str = Field(default="", max_length=2000)
    request_id: str | None = Field(default=None, max_length=200)
    vacuum: bool = Field(
        default=False, description="Also VACUUM FULL the tables left holding old row versions."
    )


_PLACES = {"scope", "agent", "tenant"}


def _refuse(key: ApiKey, place: str) -> ApiError:
    return ApiError(
        403, "forbidden", f"key {key.id} is bound to {key.bound_to!r}; it cannot erase {place!r}"
    )


def _place(key: ApiKey, body: ForgetIn) -> dict[str, Any]:
    """The place to erase in, checked against the key's binding (default: the binding)."""
    if body.scope is not None:
        return {"scope": scope_for(key, body.scope)}
    if body.agent is not None:
        agent = Scope.parse(body.agent)
        if not allows(key, agent, admin=True):
            raise _refuse(key, body.agent)
        return {"agent": body.agent}
    if body.tenant is not None:
        if body.tenant != key.tenant or key.agent is not None:
            raise _refuse(key, body.tenant)
        return {"tenant": body.tenant}
    if key.agent is not None:
        return {"agent": f"{key.tenant}/{key.agent}"}
    return {"tenant": key.tenant}


@forget_router.post("/forget")
def forget(body: ForgetIn, rv: Brain, key: Admin) -> dict[str, Any]:
    """Erase (with ``apply``) or show what would be erased; the receipt."""
    named = body.scope or body.agent or body.tenant
    if not (body.episodes or body.page or body.subject or body.older_than or named):
        raise ApiError(400, "invalid_input", "name what to erase", field="target")
    what = body.model_dump(exclude=_PLACES)  # the rest of the body: forget's own keywords
    receipt = rv.forget(**what, **_place(key, body))
    return receipt.to_json()


@forget_router.get("/forget/{erasure_id}")
def read_receipt(erasure_id: str, rv: Brain, key: Admin) -> dict[str, Any]:
    """A stored receipt; 404 unless the place its request named is the key's to erase, and so
    is every agent scope it touched (a bound erasure's own org copies belong to the erasure).
    A receipt that touched nothing is still its maker's."""
    receipt = rv.erasure(erasure_id)
    scopes = [Scope.parse(s) for s in receipt.details.get("scopes") or []]
    touched = all(allows(key, s, admin=True) for s in scopes if not s.is_org)
    named = _reaches(key, receipt.request)
    if not (touched and (named if named is not None else bool(scopes))):
        raise NotFound(f"no erasure receipt {erasure_id}")
    return receipt.to_json()


def _reaches(key: ApiKey, request: Mapping[str, Any]) -> bool | None:
    """Whether the place an erasure request named lies within ``key``'s binding; None when it
    named none (an erasure run in-process over the whole store)."""
    for place in ("scope", "agent"):
        if isinstance(named := request.get(place), str):
            return allows(key, Scope.parse(named), admin=True)
    if "tenant" in request:
        return request["tenant"] == key.tenant and key.agent is None
    return None
