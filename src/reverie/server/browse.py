"""Browsing a brain's evidence over HTTP: the episode list and the pages that cite an episode.

``GET /v1/episodes`` searches a scope's episodes by their words and filters them
(:mod:`reverie.memory.browse`); ``GET /v1/episodes/{id}/pages`` answers the question a page's
citations ask the other way round: which pages stand on this episode. Any key that covers the
scope reads them; an episode of another scope answers 404 like a missing one.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query

from reverie.memory.browse import EpisodeFilter
from reverie.server.auth import Brain, Reader, scope_for, visible_episode

__all__ = ["browse_router"]

browse_router = APIRouter(prefix="/v1", tags=["episodes"])


@browse_router.get("/episodes")
def list_episodes(  # noqa: PLR0913 (the query parameters of one search form)
    scope: Annotated[str, Query(description="tenant/agent[/user]", min_length=3)],
    rv: Brain,
    key: Reader,
    q: Annotated[str, Query(max_length=1000, description="Words to search for.")] = "",
    outcome: Annotated[str | None, Query(description="success, failure, ...")] = None,
    since: Annotated[datetime | None, Query(description="Created at or after (ISO).")] = None,
    until: Annotated[datetime | None, Query(description="Created at or before (ISO).")] = None,
    consolidated: Annotated[bool | None, Query(description="Consolidated by a cycle?")] = None,
    tool: Annotated[str | None, Query(max_length=200)] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> dict[str, Any]:
    """Episodes matching the words and filters: best text matches first, else newest first;
    ``matched`` counts them among the candidates looked at, ``complete`` says whether those
    were all of the scope's (docs/console.md)."""
    wanted = EpisodeFilter(q, outcome or None, since, until, consolidated, tool or None)
    found = rv.browse_episodes(scope_for(key, scope), wanted, limit=limit)
    return {
        "episodes": [e.model_dump(mode="json") for e in found.episodes],
        "matched": found.matched,
        "complete": found.complete,
    }


@browse_router.get("/episodes/{episode_id}/pages")
def citing_pages(episode_id: str, rv: Brain, key: Reader) -> list[dict[str, Any]]:
    """The active pages whose current revision cites the episode."""
    episode = visible_episode(rv, key, episode_id)
    return [p.model_dump(mode="json") for p in rv.pages_citing(episode.id, tenant=key.tenant)]
