"""Who is calling, and may they touch this scope?

Every route but ``/health`` and the dashboard's static shell depends on :func:`current_key`.
A key names a tenant (and optionally one agent) and ``read``, ``write`` or ``admin`` rights
(:mod:`reverie.keys`); erasure needs ``admin``. A scope named in the request that the key does
not cover is refused with 403; an object looked up by id (page, cycle, episode) that lies
outside the key's scope is answered with the same 404 as one that does not exist, so ids of
other tenants cannot be probed. An agent-bound key's episode ids live in its agent's
namespace (:func:`reverie.keys.episode_id_for`), so sibling agents' ids cannot be probed either.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Header, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from reverie.engine import Reverie
from reverie.errors import InvalidInput, NotFound
from reverie.keys import ApiKey, Rights, allows, episode_id_for
from reverie.models import Episode, Scope, ScopeLike
from reverie.models.scope import NAME
from reverie.server.http_errors import ApiError
from reverie.server.ratelimit import RateLimiter, rate_limited, route_class

__all__ = [
    "Admin",
    "Brain",
    "Reader",
    "Writer",
    "admin_key",
    "current_key",
    "ensure_visible",
    "get_reverie",
    "keyed_episode",
    "keyed_item",
    "scope_for",
    "visible_episode",
    "writer_key",
]

_bearer = HTTPBearer(auto_error=False, description="An API key from `reverie keys create`.")


def get_reverie(request: Request) -> Reverie:
    rv: Reverie = request.app.state.reverie
    return rv


Brain = Annotated[Reverie, Depends(get_reverie)]


def current_key(
    request: Request,
    rv: Brain,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    x_api_key: Annotated[str | None, Header(description="Alternative to the bearer token.")] = None,
) -> ApiKey:
    """The active key presented as ``Authorization: Bearer ...`` or ``X-API-Key``; else 401."""
    token = credentials.credentials if credentials else x_api_key
    if not token:
        raise ApiError(
            401,
            "unauthorized",
            "send an API key as 'Authorization: Bearer rvk_...' or 'X-API-Key: rvk_...'"
            " (create one with `reverie keys create`)",
        )
    key = rv.keys.authenticate(token)
    if key is None:
        raise ApiError(401, "unauthorized", "this API key is not valid or has been revoked")
    _spend(request, key, token)
    return key


def _spend(request: Request, key: ApiKey, token: str) -> None:
    """Charge the key's bucket for this route's class unless the middleware already did, and
    teach the limiter the token; 429 when the bucket is empty."""
    limiter: RateLimiter | None = getattr(request.app.state, "rate_limiter", None)
    if limiter is None or getattr(request.state, "rate_charged", False):
        return
    limiter.learn(token, key.id)
    route = route_class(request.method, request.url.path)
    wait = limiter.take(key.id, route)
    if wait <= 0.0:
        return
    seconds = RateLimiter.retry_after(wait)
    body = rate_limited(key.id, route, limiter.limits.of(route), seconds)["error"]
    raise ApiError(
        429,
        "rate_limited",
        body["message"],
        headers={"Retry-After": str(seconds)},
        retry_after=seconds,
        route_class=route,
    )


Reader = Annotated[ApiKey, Depends(current_key)]


def writer_key(key: Reader) -> ApiKey:
    if not key.rights.includes(Rights.WRITE):
        raise ApiError(
            403, "forbidden", f"key {key.id} is read-only; this call needs a key with write rights"
        )
    return key


Writer = Annotated[ApiKey, Depends(writer_key)]


def admin_key(key: Reader) -> ApiKey:
    if not key.rights.includes(Rights.ADMIN):
        raise ApiError(
            403,
            "forbidden",
            f"key {key.id} has {key.rights} rights; erasure needs a key with admin rights"
            " (reverie keys create --rights admin)",
        )
    return key


Admin = Annotated[ApiKey, Depends(admin_key)]


def scope_for(key: ApiKey, value: ScopeLike, *, write: bool = False) -> Scope:
    """Parse a scope the caller named and refuse it (403) unless ``key`` covers it."""
    scope = Scope.parse(value)
    if not allows(key, scope, write=write):
        raise ApiError(
            403,
            "forbidden",
            f"key {key.id} is bound to {key.bound_to!r}; it cannot access scope {scope.key!r}",
        )
    return scope


def ensure_visible(key: ApiKey, scope: Scope, what: str) -> None:
    """Raise the not-found error for ``what`` unless ``key`` covers ``scope``."""
    if not allows(key, scope):
        raise NotFound(f"no {what}")


def keyed_episode(key: ApiKey, episode: Episode) -> Episode:
    """``episode`` with the id it is stored under for ``key`` (an id it chose, not one derived
    from its content, which names its scope already)."""
    if "id" not in episode.model_fields_set:
        return episode
    stored = episode_id_for(key, episode.id)
    if not NAME.match(stored):
        raise InvalidInput("id", f"stored as {stored!r} for key {key.id}: over 128 characters")
    return episode.model_copy(update={"id": stored})


def keyed_item(key: ApiKey, item: dict[str, Any]) -> dict[str, Any]:
    """A batch item with the id it is stored under for ``key`` (the item is validated later)."""
    sent = item.get("id")
    return {**item, "id": episode_id_for(key, sent)} if isinstance(sent, str) else item


def visible_episode(rv: Reverie, key: ApiKey, episode_id: str) -> Episode:
    """The episode ``key`` names ``episode_id``: its namespaced id first, then the id as sent;
    one the key does not cover answers as one that does not exist."""
    for candidate in dict.fromkeys((episode_id_for(key, episode_id), episode_id)):
        try:
            episode = rv.episode(candidate, tenant=key.tenant)  # ids are the tenant's own
        except NotFound:
            continue
        if allows(key, episode.scope):
            return episode
    raise NotFound(f"no episode {episode_id}")
