"""Request and response bodies of the HTTP API that are not core models.

Core records (:class:`reverie.Episode`, :class:`reverie.Page`, :class:`reverie.Cycle`, ...) are
returned as they are, so the OpenAPI schema documents the same fields the library does.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from reverie.models import Page, Recall

__all__ = [
    "MAX_BATCH",
    "BatchIn",
    "BatchOut",
    "DreamIn",
    "DreamOut",
    "ExplainedRecall",
    "IngestProblem",
    "PageOut",
    "RecallIn",
    "ScopesOut",
]

MAX_BATCH = 5000
MAX_QUERY = 4000


class BatchIn(BaseModel):
    """Many episodes at once; each is validated on its own, and bad ones are reported."""

    model_config = ConfigDict(extra="forbid")

    episodes: list[dict[str, Any]] = Field(
        min_length=1, max_length=MAX_BATCH, description=f"At most {MAX_BATCH} episodes."
    )
    scope: str | None = Field(
        default=None, description="tenant/agent[/user] for episodes that name no scope."
    )


class TranscriptsIn(BaseModel):
    """Chat transcripts (``{"messages": [...]}``, optionally with the run's ``outcome``,
    ``reward`` or ``feedback``), read by the ``openai-chat`` adapter into episodes of
    ``scope``."""

    model_config = ConfigDict(extra="forbid")

    transcripts: list[dict[str, Any]] = Field(
        min_length=1, max_length=MAX_BATCH, description=f"At most {MAX_BATCH} transcripts."
    )
    scope: str = Field(description="tenant/agent[/user] the episodes are stored in.")


class IngestProblem(BaseModel):
    index: int = Field(description="0-based position in 'episodes'.")
    field: str
    reason: str


class BatchOut(BaseModel):
    stored: int
    duplicates: int
    errors: list[IngestProblem]


class RecallIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=MAX_QUERY)
    scope: str = Field(description="tenant/agent[/user]")
    budget_tokens: int | None = Field(default=None, ge=0, le=100_000)


class ExplainedRecall(Recall):
    """A recall with its trace (``POST /v1/recall?explain=true``, :mod:`reverie.recall.trace`)."""

    trace: dict[str, Any] = Field(
        description="terms and their weights, the floor, the budget, and every unit considered:"
        " its path, signals, score, price, decision (packed or cut) and the reason."
    )


class DreamIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    scope: str = Field(description="tenant/agent[/user]")
    dry_run: bool = False
    review: bool = Field(
        default=False,
        description="Hold the cycle's changes as a plan to review (/v1/plans) instead of"
        " committing them.",
    )


class RejectIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reason: str | None = Field(default=None, max_length=2000, description="Why, for the log.")


class DreamOut(BaseModel):
    """A dream the service started (or finished): poll ``/v1/dreams/{cycle_id}``."""

    cycle_id: str
    scope: str
    state: str = Field(description="running, done or failed")
    dry_run: bool
    review: bool = False
    started_at: str | None
    finished_at: str | None
    report: dict[str, Any] | None
    error: str | None


class PageOut(BaseModel):
    """A page with its current revision rendered as markdown."""

    page: Page
    markdown: str


class ScopesOut(BaseModel):
    """The scopes a key may read; ``orgs``: those of them that are org brains (``tenant/_org``,
    internal: no agent writes there, promotion copies what the tenant's agents learnt alike)."""

    bound_to: str
    rights: str
    scopes: list[str]
    orgs: list[str] = []
