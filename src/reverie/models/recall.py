"""What reading memory returns: a :class:`Recall` for a prompt, and a :class:`Lineage`.

A recall's ``text`` goes into a prompt and its :class:`RecallItem` list explains it; a lineage is
every revision of a page and the raw episodes its claims cite.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from reverie.models.episode import Episode
from reverie.models.page import Page, Revision
from reverie.models.scope import Scope

__all__ = ["Lineage", "Recall", "RecallItem"]


class RecallItem(BaseModel):
    """One unit packed into a recall: a page claim or an episode excerpt."""

    model_config = ConfigDict(extra="forbid")

    kind: str  # "page" | "episode"
    id: str
    title: str
    text: str
    score: float
    tokens: int
    citations: list[str]
    created_at: datetime | None = None
    status: str | None = None
    page_kind: str | None = None
    role: str | None = None
    """A page claim's role (lesson, fix, anecdote, ...), when it has one."""
    support: int | None = None
    """How many episodes back a page claim, when its page counts them."""
    ref: int | None = None
    """Its reference in the section's text (``[1]``): the source's place among the section's
    sources (pages and episodes, in order of first appearance); set on a recall's items."""


class Recall(BaseModel):
    """What recall returns: ``text`` goes into a prompt, ``items`` explain it.

    ``text`` is Reverie's header, then the items as quoted lines between ``<reverie-memory>``
    and ``</reverie-memory>`` that stored text cannot close (:mod:`reverie.recall.render`);
    ``items`` hold the raw stored text, unescaped, and resolve each line's ``[n]`` reference
    (``RecallItem.ref``) to its full ids and citations.
    """

    model_config = ConfigDict(extra="forbid")

    query: str
    scope: Scope
    budget_tokens: int
    used_tokens: int
    items: list[RecallItem]
    text: str
    warning: str | None = None

    def __bool__(self) -> bool:
        return bool(self.items)


class Lineage(BaseModel):
    """``why PAGE``: every revision of a page and the raw episodes its claims cite."""

    model_config = ConfigDict(extra="forbid")

    page: Page
    revisions: list[Revision]
    episodes: list[Episode]
    cited_pages: list[str] = Field(default_factory=list)
