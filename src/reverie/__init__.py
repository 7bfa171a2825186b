"""Reverie: a sleep cycle for AI agents.

Agents append episodes; a dream cycle distills them into cited pages; recall packs those pages
into a prompt under a token budget. Importing this package does no I/O and starts nothing.
"""

from __future__ import annotations

from reverie.config import Config, DreamConfig, RecallConfig
from reverie.engine import IngestResult, Reverie, UndoReport
from reverie.errors import (
    ArchiveUnreadable,
    Conflict,
    InvalidInput,
    InvalidScope,
    NotFound,
    PlanRejected,
    ReverieError,
    ScopesFailed,
    StoreError,
    UndoRefused,
)
from reverie.models import (
    Citation,
    Claim,
    Cycle,
    CycleReport,
    Episode,
    Lineage,
    Outcome,
    Page,
    PageKind,
    PageStatus,
    Recall,
    RecallItem,
    Revision,
    Scope,
)

__all__ = [
    "ArchiveUnreadable",
    "Citation",
    "Claim",
    "Config",
    "Conflict",
    "Cycle",
    "CycleReport",
    "DreamConfig",
    "Episode",
    "IngestResult",
    "InvalidInput",
    "InvalidScope",
    "Lineage",
    "NotFound",
    "Outcome",
    "Page",
    "PageKind",
    "PageStatus",
    "PlanRejected",
    "Recall",
    "RecallConfig",
    "RecallItem",
    "Reverie",
    "ReverieError",
    "Revision",
    "Scope",
    "ScopesFailed",
    "StoreError",
    "UndoRefused",
    "UndoReport",
]

__version__ = "0.1.0"
