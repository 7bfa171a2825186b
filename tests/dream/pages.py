"""Pages as an earlier cycle left them: built in memory, or committed with their episodes
consolidated, for tests of what the next cycle makes of them."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from reverie import Reverie
from reverie.models import (
    Claim,
    Page,
    PageKind,
    PageStatus,
    PageSupport,
    Revision,
    Scope,
    revision_hash,
)
from reverie.models.plan import page_id_for
from reverie.store.base import Changeset, PageWrite


def revision(
    page_id: str,
    title: str,
    claims: Sequence[Claim],
    at: datetime,
    support: PageSupport | None = None,
) -> Revision:
    """The first revision of ``page_id``, its hash over its content."""
    fields: dict[str, Any] = {
        "title": title,
        "kind": PageKind.LESSON,
        "claims": tuple(claims),
        "confidence": 0.8,
        "status": PageStatus.ACTIVE,
        "valid_from": None,
        "valid_until": None,
        "superseded_by": None,
        "support": support,
    }
    identity = {"page_id": page_id, "number": 1, "created_at": at}
    return Revision.model_validate({**fields, **identity, "hash": revision_hash(**fields)})


def page(scope: Scope, topic_key: str, rev: Revision) -> Page:
    """A page holding ``rev``, not stored."""
    return Page.model_validate(
        {
            "id": rev.page_id,
            "scope": scope,
            "topic_key": topic_key,
            "revision": rev,
            "created_at": rev.created_at,
            "updated_at": rev.created_at,
        }
    )


def store_page(
    rv: Reverie,
    scope: Scope,
    topic_key: str,
    title: str,
    claims: Sequence[Claim],
    at: datetime,
    support: PageSupport | None = None,
) -> Page:
    """A page committed as an earlier cycle wrote it: the episodes it cites consolidated, the
    checkpoint past them."""
    cited = sorted({e for c in claims for e in c.episode_ids})
    head = rv.store.checkpoint(scope)
    seqs = [ep.seq or 0 for ep in rv.store.episodes(cited, tenant=scope.tenant)]
    rev = revision(page_id_for(scope, topic_key), title, claims, at, support)
    rv.store.commit(
        Changeset(
            scope=scope,
            expected_checkpoint=head,
            checkpoint=max([head, *seqs]),
            page_writes=[PageWrite(scope, topic_key, rev, expected_revision=None)],
            marks=cited,
            mark_cycle="cy_before",
            at=datetime.now(UTC),
        )
    )
    return rv.store.page(rev.page_id)
