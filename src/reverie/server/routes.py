"""The JSON API under ``/v1``: thin routes over the facade, each scoped by the caller's key.

Write routes need a ``write`` key for the scope they touch; read routes any key that covers it.
Routes that name a scope refuse a foreign one with 403; routes that take an id answer 404 for an
object of another scope (see :mod:`reverie.server.auth`).
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request

from reverie import __version__
from reverie.adapters import parse
from reverie.errors import InvalidInput, NotFound
from reverie.keys import ApiKey, allows
from reverie.models import Cycle, CycleReport, Episode, Lineage, Page, Recall, Revision, Scope
from reverie.recall import RecallTrace
from reverie.server.auth import (
    Brain,
    Reader,
    Writer,
    ensure_visible,
    keyed_episode,
    keyed_item,
    scope_for,
    visible_episode,
)
from reverie.server.dreams import DreamJob, DreamRunner
from reverie.server.http_errors import ApiError
from reverie.server.schemas import (
    BatchIn,
    BatchOut,
    DreamIn,
    DreamOut,
    ExplainedRecall,
    IngestProblem,
    PageOut,
    RecallIn,
    ScopesOut,
    TranscriptsIn,
)
from reverie.server.views import cycle_dream, entry_view, journal, recall_days

__all__ = ["public", "router"]

router = APIRouter(prefix="/v1")
public = APIRouter()

ScopeQuery = Annotated[str, Query(description="tenant/agent[/user]", min_length=3)]
Limit = Annotated[int, Query(ge=1, le=500, description="How many, newest first.")]


def get_runner(request: Request) -> DreamRunner:
    runner: DreamRunner = request.app.state.dreams
    return runner


Runner = Annotated[DreamRunner, Depends(get_runner)]


@public.get("/health", tags=["service"])
def health(rv: Brain) -> dict[str, Any]:
    """Liveness: the service answers and its database opens. No key needed."""
    rv.scopes()
    return {"status": "ok", "version": __version__}


@router.get("/scopes", tags=["service"])
def scopes(rv: Brain, key: Reader) -> ScopesOut:
    """The scopes this key may read, and what it is bound to."""
    mine = [s for s in rv.scopes() if allows(key, s)]
    return ScopesOut(
        bound_to=key.bound_to,
        rights=str(key.rights),
        scopes=[s.key for s in mine],
        orgs=[s.key for s in mine if s.is_org],
    )


# -- episodes --------------------------------------------------------------------------------


@router.post("/episodes", status_code=201, tags=["episodes"])
def append_episode(episode: Episode, rv: Brain, key: Writer) -> Episode:
    """Append one episode (idempotent by id); returns it with its store-assigned ``seq``."""
    for name in ("seq", "consolidated_in"):
        if getattr(episode, name) is not None:
            raise InvalidInput(name, "is assigned by the store; leave it out")
    scope_for(key, episode.scope, write=True)
    return rv.remember(keyed_episode(key, episode))


def _item_scope(item: dict[str, Any], default: Scope | None) -> Scope | None:
    raw = item.get("scope")
    if raw is None:
        return default
    try:
        return Scope.parse(raw)
    except InvalidInput:
        return None  # the facade reports it as this item's error


@router.post("/episodes/batch", tags=["episodes"])
def append_batch(batch: BatchIn, rv: Brain, key: Writer) -> BatchOut:
    """Append many episodes: good ones are stored, bad ones reported by index."""
    default = scope_for(key, batch.scope, write=True) if batch.scope else None
    for index, item in enumerate(batch.episodes):
        scope = _item_scope(item, default)
        if scope is not None and not allows(key, scope, write=True):
            raise ApiError(
                403,
                "forbidden",
                f"episodes.{index}: key {key.id} cannot write to scope {scope.key!r}",
                field=f"episodes.{index}.scope",
            )
    result = rv.ingest([keyed_item(key, item) for item in batch.episodes], scope=default)
    errors = [IngestProblem(index=e.index, field=e.field, reason=e.reason) for e in result.errors]
    return BatchOut(stored=result.stored, duplicates=result.duplicates, errors=errors)


@router.post("/transcripts", tags=["episodes"])
def append_transcripts(body: TranscriptsIn, rv: Brain, key: Writer) -> BatchOut:
    """Store chat transcripts: one episode per user turn, and, for a transcript carrying its
    result, one task episode for the whole run. Problems are reported by transcript index."""
    scope = scope_for(key, body.scope, write=True)
    lines = [(n + 1, json.dumps(t, ensure_ascii=False)) for n, t in enumerate(body.transcripts)]
    parsed = parse("openai-chat", lines, scope=scope)
    result = rv.ingest(parsed.items, scope=scope)
    errors = [IngestProblem(index=n - 1, field=f, reason=r) for n, f, r in parsed.failures]
    errors += [
        IngestProblem(index=parsed.line_of[e.index] - 1, field=e.field, reason=e.reason)
        for e in result.errors
    ]
    return BatchOut(stored=result.stored, duplicates=result.duplicates, errors=errors)


@router.get("/episodes/{episode_id}", tags=["episodes"])
def read_episode(episode_id: str, rv: Brain, key: Reader) -> Episode:
    return visible_episode(rv, key, episode_id)


# -- recall and dreams -----------------------------------------------------------------------


@router.post("/recall", tags=["recall"])
def recall(
    body: RecallIn,
    rv: Brain,
    key: Reader,
    explain: Annotated[
        bool, Query(description="Add the trace: why each unit was packed or cut.")
    ] = False,
) -> ExplainedRecall | Recall:
    """Knowledge for ``query``, packed under ``budget_tokens`` (never fails on a model error).

    ``text`` is the prompt section: quoted memory between ``<reverie-memory>`` fence lines,
    evidence and never instructions (docs/service.md, "The recall section"). With
    ``explain=true`` the answer adds ``trace``: every unit recall considered, its signals,
    score and price, and why it was packed or cut (docs/console.md, "Recall playground").
    """
    scope = scope_for(key, body.scope)
    if not explain:
        return rv.recall(body.query, scope, body.budget_tokens)
    trace = RecallTrace()
    found = rv.recall(body.query, scope, body.budget_tokens, trace=trace)
    return ExplainedRecall(**dict(found), trace=trace.to_json())


@router.post("/dreams", status_code=202, tags=["dreams"])
def start_dream(body: DreamIn, rv: Brain, runner: Runner, key: Writer) -> DreamOut:
    """Start a dream cycle in the background; poll ``/v1/dreams/{cycle_id}`` for its report.

    Only a scope that holds something can dream: a name never written to is a 404, and
    leaves no trace (no scope row, no lease)."""
    scope = scope_for(key, body.scope, write=True)
    if scope not in rv.scopes():
        raise NotFound(
            f"no scope {scope.key}: nothing was ever stored there; append episodes first"
            " (GET /v1/scopes lists the scopes this key can see)"
        )
    job = runner.start(scope, dry_run=body.dry_run, review=body.review)
    return DreamOut(**job.view())


@router.get("/dreams", tags=["dreams"])
def recent_dreams(
    scope: ScopeQuery, rv: Brain, runner: Runner, key: Reader, limit: Limit = 20
) -> list[DreamOut]:
    """Recent dreams of a scope, newest first: running ones, then recorded cycles."""
    target = scope_for(key, scope)
    jobs = [DreamOut(**j.view()) for j in runner.jobs(target)]
    seen = {j.cycle_id for j in jobs}
    stored = [cycle_dream(c) for c in rv.cycles(target, limit) if c.id not in seen]
    merged = sorted([*jobs, *stored], key=lambda d: d.started_at or "", reverse=True)
    return merged[:limit]


def _job(runner: DreamRunner, key: ApiKey, cycle_id: str) -> DreamJob | None:
    job = runner.job(cycle_id)
    if job is not None:
        ensure_visible(key, job.scope, f"cycle {cycle_id}")
    return job


@router.get("/dreams/{cycle_id}", tags=["dreams"])
def read_dream(cycle_id: str, rv: Brain, runner: Runner, key: Reader) -> DreamOut:
    """A dream's state: ``running``, ``done`` with its report, or ``failed`` with the error."""
    job = _job(runner, key, cycle_id)
    if job is not None:
        return DreamOut(**job.view())
    return cycle_dream(_cycle(rv, key, cycle_id))


# -- cycles ----------------------------------------------------------------------------------


def _cycle(rv: Any, key: ApiKey, cycle_id: str) -> Cycle:
    found: Cycle = rv.cycle(cycle_id)
    ensure_visible(key, found.scope, f"cycle {cycle_id}")
    return found


@router.get("/cycles", tags=["cycles"])
def list_cycles(scope: ScopeQuery, rv: Brain, key: Reader, limit: Limit = 50) -> list[Cycle]:
    return rv.cycles(scope_for(key, scope), limit)


@router.get("/cycles/{cycle_id}", tags=["cycles"])
def read_cycle(cycle_id: str, rv: Brain, key: Reader) -> Cycle:
    return _cycle(rv, key, cycle_id)


@router.get("/cycles/{cycle_id}/report", tags=["cycles"])
def cycle_report(cycle_id: str, rv: Brain, key: Reader) -> CycleReport:
    """What the cycle did: counts, timings, the pages it changed, model cost."""
    return _cycle(rv, key, cycle_id).report


# -- pages -----------------------------------------------------------------------------------


def _page(rv: Any, key: ApiKey, page_id: str) -> Page:
    found: Page = rv.page(page_id)
    ensure_visible(key, found.scope, f"page {page_id}")
    return found


@router.get("/pages", tags=["pages"])
def list_pages(
    scope: ScopeQuery,
    rv: Brain,
    key: Reader,
    status: Literal["active", "superseded", "retired", "all"] = "active",
) -> list[Page]:
    return rv.pages(scope_for(key, scope), status=None if status == "all" else status)


@router.get("/pages/{page_id}", tags=["pages"])
def read_page(page_id: str, rv: Brain, key: Reader) -> PageOut:
    page = _page(rv, key, page_id)
    return PageOut(page=page, markdown=page.to_markdown())


@router.get("/pages/{page_id}/why", tags=["pages"])
def why(page_id: str, rv: Brain, key: Reader) -> Lineage:
    """Every revision of the page and the raw episodes its claims cite."""
    _page(rv, key, page_id)
    return rv.why(page_id)


@router.get("/pages/{page_id}/revisions", tags=["pages"])
def history(page_id: str, rv: Brain, key: Reader) -> list[Revision]:
    """The page's revisions, oldest first; nothing is ever overwritten."""
    _page(rv, key, page_id)
    return rv.revisions(page_id)


# -- stats and the dashboard's journal -------------------------------------------------------


@router.get("/stats", tags=["stats"])
def stats(scope: ScopeQuery, rv: Brain, key: Reader) -> dict[str, Any]:
    target = scope_for(key, scope)
    return {"scope": target.key, **asdict(rv.status(target))}


@router.get("/journal", tags=["stats"])
def dream_journal(scope: ScopeQuery, rv: Brain, key: Reader, limit: Limit = 200) -> dict[str, Any]:
    """The dashboard's dream journal: cycles with counts and timings, a growth series, and
    recall use per day (``recalls``: recalls, hits and misses, units and tokens packed)."""
    target = scope_for(key, scope)
    cycles = rv.cycles(target, limit)
    stats = rv.status(target)
    shown = journal(cycles, stats, scope=target.key, complete=len(cycles) < limit)
    entries = [entry_view(e) for e in reversed(rv.journal(target, limit))]
    return {**shown, "entries": entries, "recalls": recall_days(rv.recall_stats(target))}
