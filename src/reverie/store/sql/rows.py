"""Columns and row shapes every SQL module of the store shares: functions of values only."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from datetime import datetime
from json.encoder import encode_basestring
from typing import Any

from reverie.hashing import canonical_json
from reverie.models import Episode, Revision, revision_meta
from reverie.store.records import BundleInfo
from reverie.store.sql.dialect import Dialect

__all__ = [
    "BUNDLE_COLUMNS",
    "CLAIMS_AT",
    "CYCLE_COLUMNS",
    "EPISODE_COLUMNS",
    "INSERT_CITATION",
    "LEAN_REVISION_COLUMNS",
    "PAGE_SELECT",
    "PROMOTION_COLUMNS",
    "REVISION_COLUMNS",
    "bundle_row",
    "citation_rows",
    "episode_rows",
    "episode_search_text",
    "fts_phrase",
    "marks",
    "prefixed",
    "revision_row",
    "scope_token",
]

EPISODE_COLUMNS = (
    "seq, id, scope_key, session_id, created_at, situation, action, outcome, outcome_details,"
    " error, lesson, importance, category, tools, entities, metadata, consolidated_in"
)
INSERT_COLUMNS = EPISODE_COLUMNS + ", tenant, fingerprint, inserted_at"
"""The columns :func:`episode_rows` fills, in its order (``tenant``: the scope's, which with
the id is what makes an episode unique)."""
REVISION_COLUMNS = (
    "page_id, number, hash, title, kind, claims, confidence, status, valid_from, valid_until,"
    " superseded_by, cycle_id, author, reason, created_at, meta"
)
CLAIMS_AT = 5
"""Where ``claims`` sits in :data:`REVISION_COLUMNS`."""
LEAN_REVISION_COLUMNS = [c.strip() for c in REVISION_COLUMNS.split(",") if c.strip() != "claims"]
"""Every revision column but the (possibly large) claims, in :data:`REVISION_COLUMNS` order."""
PROMOTION_COLUMNS = (
    "org_page_id, source_page_id, source_scope, source_revision, promoted_at, updated_at, cycle_id"
)
CYCLE_COLUMNS = (
    "id, scope_key, status, started_at, finished_at, checkpoint_before, checkpoint_after,"
    " report, undone_at"
)


def prefixed(alias: str, columns: str) -> str:
    """``columns`` (comma-separated) each qualified by the table ``alias``."""
    return ", ".join(f"{alias}.{c.strip()}" for c in columns.split(","))


PAGE_SELECT = (
    "SELECT p.id, p.scope_key, p.topic_key, p.created_at, p.updated_at, "
    + prefixed("r", REVISION_COLUMNS)
    + " FROM pages p JOIN revisions r ON r.page_id = p.id AND r.number = p.current_revision"
)
"""A page with its current revision: what :meth:`~reverie.store.sql.database.Rows.page` decodes."""


def marks(count: int) -> str:
    """``count`` placeholders, comma-separated."""
    return ",".join("?" * count)


def scope_token(scope_key: str) -> str:
    """An opaque FTS token that stands for one scope inside a MATCH expression."""
    return "s" + hashlib.sha1(scope_key.encode("utf-8")).hexdigest()[:24]


def fts_phrase(term: str) -> str:
    """Quote one term for an FTS5 MATCH (no operator inside a term survives quoting)."""
    return '"' + term.replace('"', '""') + '"'


def episode_search_text(e: Episode) -> str:
    """What full-text search sees of an episode: its text plus category, tools and entities."""
    extra = " ".join([e.category or "", *e.tools, *e.entities])
    return f"{e.text}\n{extra}".strip()


def _strings(values: list[str]) -> str:
    """A list of strings as :func:`reverie.hashing.canonical_json` writes it, without the
    encoder's per-call set-up (this runs twice for every episode stored)."""
    return "[" + ",".join(map(encode_basestring, values)) + "]"


def episode_rows(
    episodes: Iterable[Episode], d: Dialect, inserted_at: datetime
) -> Iterator[tuple[Any, ...]]:
    """The values of :data:`INSERT_COLUMNS` for each new episode, received at ``inserted_at``."""
    inserted = d.ts(inserted_at)
    for e in episodes:
        yield (
            e.seq,
            e.id,
            e.scope.key,
            e.session_id,
            d.ts(e.created_at),
            e.situation,
            e.action,
            str(e.outcome),
            e.outcome_details,
            e.error,
            e.lesson,
            e.importance,
            e.category,
            _strings(e.tools),
            _strings(e.entities),
            canonical_json(e.metadata) if e.metadata else "{}",
            None,  # a new episode is unconsolidated: only a commit marks it
            e.scope.tenant,
            e.fingerprint(),
            inserted,
        )


def revision_row(rev: Revision, d: Dialect) -> tuple[Any, ...]:
    """The values of :data:`REVISION_COLUMNS` for a new revision."""
    return (
        rev.page_id,
        rev.number,
        rev.hash,
        rev.title,
        str(rev.kind),
        json.dumps([cl.stored() for cl in rev.claims], ensure_ascii=False),
        rev.confidence,
        str(rev.status),
        d.ts(rev.valid_from),
        d.ts(rev.valid_until),
        rev.superseded_by,
        rev.cycle_id,
        rev.author,
        rev.reason,
        d.ts(rev.created_at),
        revision_meta(rev),
    )


INSERT_CITATION = "INSERT INTO citations (page_id, revision, tenant, episode_id) VALUES (?,?,?,?)"


def citation_rows(tenant: str, rev: Revision) -> list[tuple[str, int, str, str]]:
    """The citation rows of ``rev``, a revision of a page of ``tenant``: a page cites episodes
    of its own tenant (an org page those of its tenant's scopes), so ``(tenant, episode id)``
    names each one."""
    return [(rev.page_id, rev.number, tenant, e) for e in rev.citations]


BUNDLE_COLUMNS = "hash, scope_key, episodes, bytes, first_seq, last_seq, created_at, restored_at"


def bundle_row(d: Dialect, bundle: BundleInfo) -> tuple[Any, ...]:
    """``bundle`` as a row of :data:`BUNDLE_COLUMNS` in ``d``'s values."""
    return (
        bundle.hash,
        bundle.scope.key,
        bundle.episodes,
        bundle.bytes,
        bundle.first_seq,
        bundle.last_seq,
        d.ts(bundle.created_at),
        d.ts(bundle.restored_at),
    )
