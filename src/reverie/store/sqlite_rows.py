"""Row plumbing shared by the SQLite store and its mixins: timestamps, FTS tokens, columns,
revision decoding. No state, no connection: functions of values only."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

from reverie.models import Claim, Episode, PageKind, PageStatus, Revision, meta_fields

__all__ = [
    "CHUNK",
    "CLAIMS_AT",
    "EPISODE_COLUMNS",
    "LEAN_REVISION_COLUMNS",
    "REVISION_COLUMNS",
    "chunks",
    "decode_revision",
    "episode_search_text",
    "fts_phrase",
    "iso",
    "parse_dt",
    "scope_token",
]

CHUNK = 500
EPISODE_COLUMNS = (
    "seq, id, scope_key, session_id, created_at, situation, action, outcome, outcome_details,"
    " error, lesson, importance, category, tools, entities, metadata, consolidated_in"
)
REVISION_COLUMNS = (
    "page_id, number, hash, title, kind, claims, confidence, status, valid_from, valid_until,"
    " superseded_by, cycle_id, author, reason, created_at, meta"
)
CLAIMS_AT = 5
"""Where ``claims`` sits in :data:`REVISION_COLUMNS`."""
LEAN_REVISION_COLUMNS = [c.strip() for c in REVISION_COLUMNS.split(",") if c.strip() != "claims"]
"""Every revision column but the (possibly large) claims, in :data:`REVISION_COLUMNS` order."""


def scope_token(scope_key: str) -> str:
    """An opaque FTS token that stands for one scope inside a MATCH expression."""
    return "s" + hashlib.sha1(scope_key.encode("utf-8")).hexdigest()[:24]


def iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def parse_dt(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def chunks(items: Sequence[Any], size: int = CHUNK) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def fts_phrase(term: str) -> str:
    """Quote one term for an FTS5 MATCH (no operator inside a term survives quoting)."""
    return '"' + term.replace('"', '""') + '"'


def decode_revision(r: Sequence[Any]) -> Revision:
    claims = tuple(Claim.from_stored(c) for c in json.loads(r[5]))
    return Revision.model_construct(
        page_id=r[0],
        number=r[1],
        hash=r[2],
        title=r[3],
        kind=PageKind(r[4]),
        claims=claims,
        confidence=r[6],
        status=PageStatus(r[7]),
        valid_from=parse_dt(r[8]),
        valid_until=parse_dt(r[9]),
        superseded_by=r[10],
        cycle_id=r[11],
        author=r[12],
        reason=r[13],
        created_at=datetime.fromisoformat(r[14]),
        **meta_fields(r[15]),
    )


def episode_search_text(e: Episode) -> str:
    """What full-text search sees of an episode: its text plus category, tools and entities."""
    extra = " ".join([e.category or "", *e.tools, *e.entities])
    return f"{e.text}\n{extra}".strip()
