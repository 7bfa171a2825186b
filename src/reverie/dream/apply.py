"""Turning validated plan operations into page writes (pure).

Every write is a new revision carrying the number it expects to replace, so the store can refuse
it if the page moved since it was read. An operation whose result hashes the same as the page's
current revision writes nothing (a cycle with nothing new changes nothing).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from reverie.models import (
    Claim,
    Page,
    PageChange,
    PageKind,
    PageStatus,
    PageSupport,
    Revision,
    Scope,
    revision_hash,
)
from reverie.models.plan import (
    CreatePage,
    MergePages,
    Operation,
    RetirePage,
    RevisePage,
    SupersedePage,
    page_id_for,
)
from reverie.store.base import PageWrite

__all__ = ["WriteContext", "next_revision", "operation_writes", "revision_from"]


@dataclass(frozen=True)
class WriteContext:
    scope: Scope
    cycle_id: str
    now: datetime
    pages: dict[str, Page]
    author: str = "cycle"


def revision_from(  # noqa: PLR0913 (keyword-only: the fields of a revision)
    page_id: str,
    number: int,
    ctx: WriteContext,
    *,
    title: str,
    kind: PageKind,
    claims: tuple[Claim, ...],
    confidence: float,
    status: PageStatus = PageStatus.ACTIVE,
    valid_from: datetime | None = None,
    valid_until: datetime | None = None,
    superseded_by: str | None = None,
    reason: str | None = None,
    support: PageSupport | None = None,
    pins: tuple[str, ...] = (),
) -> Revision:
    """Build a revision and its content hash."""
    content = {
        "title": title,
        "kind": kind,
        "claims": claims,
        "confidence": round(confidence, 4),
        "status": status,
        "valid_from": valid_from,
        "valid_until": valid_until,
        "superseded_by": superseded_by,
        "support": support,
        "pins": pins,
    }
    return Revision(
        page_id=page_id,
        number=number,
        hash=revision_hash(**content),
        cycle_id=ctx.cycle_id,
        author=ctx.author,
        reason=reason,
        created_at=ctx.now,
        **content,
    )


def next_revision(ctx: WriteContext, page: Page, **changes: object) -> Revision:
    """A new revision of ``page``: its current content with ``changes`` applied."""
    fields = page.revision.content_fields() | changes
    return revision_from(page.id, page.revision.number + 1, ctx, **fields)


def _write(ctx: WriteContext, page: Page | None, topic_key: str, rev: Revision) -> PageWrite:
    return PageWrite(
        scope=ctx.scope,
        topic_key=topic_key,
        revision=rev,
        expected_revision=page.revision.number if page else None,
    )


def _content(op: CreatePage | RevisePage | MergePages) -> dict[str, object]:
    return {
        "title": op.title,
        "kind": op.kind,
        "claims": op.claims,
        "confidence": op.confidence,
        "status": PageStatus.ACTIVE,
        "valid_from": op.valid_from,
        "valid_until": None,
        "superseded_by": None,
        "reason": None,
        "support": op.support,
        "pins": op.pins,
    }


def _create(op: CreatePage, ctx: WriteContext) -> list[tuple[str, PageWrite]]:
    page_id = page_id_for(ctx.scope, op.topic_key)
    rev = revision_from(page_id, 1, ctx, **_content(op))  # type: ignore[arg-type]
    return [("created", _write(ctx, None, op.topic_key, rev))]


def _revise(op: RevisePage | MergePages, ctx: WriteContext) -> list[tuple[str, PageWrite]]:
    page = ctx.pages[op.page_id]
    rev = next_revision(ctx, page, **_content(op))
    out: list[tuple[str, PageWrite]] = []
    if rev.hash != page.revision.hash:
        action = "merged" if isinstance(op, MergePages) else "revised"
        out.append((action, _write(ctx, page, page.topic_key, rev)))
    if isinstance(op, MergePages):
        for source_id in op.sources:
            source = ctx.pages[source_id]
            gone = next_revision(
                ctx,
                source,
                status=PageStatus.SUPERSEDED,
                superseded_by=page.id,
                valid_until=ctx.now,
                reason=f"merged into {page.id}",
            )
            out.append(("superseded", _write(ctx, source, source.topic_key, gone)))
    return out


def _end(op: SupersedePage | RetirePage, ctx: WriteContext) -> list[tuple[str, PageWrite]]:
    page = ctx.pages[op.page_id]
    if isinstance(op, SupersedePage):
        rev = next_revision(
            ctx,
            page,
            status=PageStatus.SUPERSEDED,
            superseded_by=op.by,
            valid_until=op.valid_until or ctx.now,
            reason=op.reason,
        )
        return [("superseded", _write(ctx, page, page.topic_key, rev))]
    rev = next_revision(ctx, page, status=PageStatus.RETIRED, reason=op.reason)
    return [("retired", _write(ctx, page, page.topic_key, rev))]


def operation_writes(op: Operation, ctx: WriteContext) -> list[tuple[str, PageWrite]]:
    """The ``(action, write)`` pairs for one validated operation; empty when nothing changes."""
    if isinstance(op, CreatePage):
        return _create(op, ctx)
    if isinstance(op, RevisePage | MergePages):
        return _revise(op, ctx)
    return _end(op, ctx)


def change_of(action: str, write: PageWrite, episodes: int) -> PageChange:
    return PageChange(
        page_id=write.revision.page_id,
        title=write.revision.title,
        action=action,
        revision_before=write.expected_revision,
        revision_after=write.revision.number,
        episodes=episodes,
    )
