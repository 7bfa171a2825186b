"""The records Reverie stores and returns (pydantic v2), one concept per module.

An :class:`Episode` (:mod:`.episode`) is raw, immutable evidence; a :class:`Page`
(:mod:`.page`) is distilled knowledge whose every change is a content-hashed :class:`Revision`;
a :class:`Claim` is one cited line of a page. A :class:`Scope` (:mod:`.scope`) says whose they
are; :mod:`.cycle` holds what a dream cycle did, :mod:`.recall` what a read returns, and
:mod:`.base` the time and parse helpers they share. Input errors surface as
:class:`reverie.errors.InvalidInput` naming the field and the reason.

Import the records from here (``from reverie.models import Episode``), not from the modules.
"""

from __future__ import annotations

from reverie.models.base import now_utc as now_utc
from reverie.models.base import parse_model, utc
from reverie.models.cycle_report import (
    Cycle,
    CycleReport,
    CycleStatus,
    Insight,
    PageChange,
    Recommendation,
)
from reverie.models.episode import Episode, Outcome, check_metadata
from reverie.models.episode import derive_importance as derive_importance
from reverie.models.page import ACTIONABLE_ROLES as ACTIONABLE_ROLES
from reverie.models.page import (
    CONTENT_FIELDS,
    PINNABLE,
    Claim,
    ClaimRole,
    Page,
    PageKind,
    PageStatus,
    PageSupport,
    Revision,
    meta_fields,
    recall_weight,
    revision_content,
    revision_hash,
    revision_meta,
)
from reverie.models.page import TEACHING_ROLES as TEACHING_ROLES
from reverie.models.page import THIN_FIX as THIN_FIX
from reverie.models.page import render_body as render_body
from reverie.models.recall import Lineage, Recall, RecallItem
from reverie.models.scope import ORG_AGENT, Scope, ScopeLike

__all__ = [
    "CONTENT_FIELDS",
    "ORG_AGENT",
    "PINNABLE",
    "Claim",
    "ClaimRole",
    "Cycle",
    "CycleReport",
    "CycleStatus",
    "Episode",
    "Insight",
    "Lineage",
    "Outcome",
    "Page",
    "PageChange",
    "PageKind",
    "PageStatus",
    "PageSupport",
    "Recall",
    "RecallItem",
    "Recommendation",
    "Revision",
    "Scope",
    "ScopeLike",
    "check_metadata",
    "meta_fields",
    "parse_model",
    "recall_weight",
    "revision_content",
    "revision_hash",
    "revision_meta",
    "utc",
]
