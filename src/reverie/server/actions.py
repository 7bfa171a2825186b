"""The console's actions over HTTP: undo a cycle, restore a page revision, edit a page.

Each needs a ``write`` key for the scope of the object it changes; an object of a scope the key
does not reach answers 404 like a missing one, and a read key that reaches it 403 (the
convention of :mod:`reverie.server.auth`). Every action is one committed, undoable change:

* ``POST /v1/cycles/{id}/undo`` restores every page the cycle touched and makes its episodes
  eligible again (409 ``undo_refused`` with the reason when it cannot);
* ``POST /v1/pages/{id}/restore`` writes a new revision with the content of an old one, pinned;
* ``POST /v1/pages/{id}/edit`` is a person's edit, the same code path as an edit of the
  Markdown mirror (:mod:`reverie.memory.edits`): a pinned ``human`` revision, refused with 409
  when the page changed since the revision the person read.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from reverie.keys import ApiKey
from reverie.models import Page, PageKind, Scope
from reverie.server.auth import Brain, Writer, ensure_visible, scope_for

__all__ = ["ClaimIn", "EditIn", "RestoreIn", "actions_router"]

actions_router = APIRouter(prefix="/v1")


class RestoreIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    revision: int = Field(ge=1, description="The revision whose content comes back.")


class ClaimIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, max_length=4000)
    episode_ids: list[str] = Field(
        default_factory=list,
        max_length=1000,
        description="Episodes it cites; none: the episode that records this edit.",
    )


class EditIn(BaseModel):
    """A person's edit; each field left out stays as it is."""

    model_config = ConfigDict(extra="forbid")

    revision: int = Field(ge=1, description="The revision the person read and edited.")
    title: str | None = Field(default=None, min_length=1, max_length=200)
    kind: PageKind | None = None
    claims: list[ClaimIn] | None = Field(default=None, min_length=1, max_length=200)


def _writable(key: ApiKey, scope: Scope, what: str) -> None:
    """404 unless ``key`` reaches ``scope``; 403 when it does but only reads."""
    ensure_visible(key, scope, what)
    scope_for(key, scope, write=True)


@actions_router.post("/cycles/{cycle_id}/undo", tags=["cycles"])
def undo_cycle(cycle_id: str, rv: Brain, key: Writer) -> dict[str, Any]:
    """Undo a committed cycle: its pages go back a revision, its episodes become eligible."""
    _writable(key, rv.cycle(cycle_id).scope, f"cycle {cycle_id}")
    return asdict(rv.undo(cycle_id))


def _page_out(rv: Any, page_id: str) -> dict[str, Any]:
    page: Page = rv.page(page_id)
    return page.model_dump(mode="json")


@actions_router.post("/pages/{page_id}/restore", tags=["pages"])
def restore_page(page_id: str, body: RestoreIn, rv: Brain, key: Writer) -> dict[str, Any]:
    """A new revision with the content of ``revision``, pinned; undo it like a cycle."""
    _writable(key, rv.page(page_id).scope, f"page {page_id}")
    cycle = rv.restore(page_id, body.revision)
    return {"cycle_id": cycle.id, "page": _page_out(rv, page_id)}


@actions_router.post("/pages/{page_id}/edit", tags=["pages"])
def edit_page(page_id: str, body: EditIn, rv: Brain, key: Writer) -> dict[str, Any]:
    """A person's edit of the page as a pinned ``human`` revision (``cycle_id`` null when it
    changed nothing); 409 when the page changed since ``revision``."""
    _writable(key, rv.page(page_id).scope, f"page {page_id}")
    claims = None if body.claims is None else [(c.text, c.episode_ids) for c in body.claims]
    report = rv.edit_page(
        page_id,
        revision=body.revision,
        title=body.title,
        kind=str(body.kind) if body.kind is not None else None,
        claims=claims,
    )
    return {**asdict(report), "page": _page_out(rv, page_id)}
