"""Recall from the tenant's org brain: searched only when asked, and labelled.

``RecallConfig.include_org`` (``Reverie.recall(..., include_org=True)``) adds the claims of the
org brain (``tenant/_org``, written only by promotion, :mod:`reverie.dream.promote`) to an
agent's recall. They are scored like the agent's own claims, and marked: their ``page_kind``
reads ``org <kind>``, so the rendered line says ``[org lesson]``. Org copies of the agent's own
pages are left out — the agent already holds the source. Without the option no org page is
ever read (DESIGN invariant 7; ``tests/dream/test_promote.py``).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from reverie.config import RecallConfig
from reverie.models import RecallItem, Scope
from reverie.recall.query import stem
from reverie.recall.units import QueryTerms, claim_units
from reverie.store.base import Store

if TYPE_CHECKING:
    from reverie.recall.trace import RecallTrace

__all__ = ["ORG_LABEL", "org_units"]

ORG_LABEL = "org"


def org_units(
    store: Store,
    scope: Scope,
    terms: list[str],
    config: RecallConfig,
    now: datetime,
    statuses: tuple[str, ...],
    *,
    trace: RecallTrace | None = None,
) -> list[RecallItem]:
    """Claim units of ``scope``'s org brain for ``terms`` (not copies of ``scope``'s pages)."""
    own = f"promoted|{scope.key}|"
    hits = store.search_pages(scope.org, terms, config.page_candidates, statuses)
    hits = [(p, s) for p, s in hits if not p.topic_key.startswith(own)]
    query = QueryTerms([stem(t) for t in terms], config.min_term_coverage)
    units = claim_units(hits, query, now, trace=trace, path=ORG_LABEL)
    return [
        u.model_copy(update={"page_kind": f"{ORG_LABEL} {u.page_kind or 'page'}"}) for u in units
    ]
