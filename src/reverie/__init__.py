"""Reverie: a sleep cycle for AI agents.

Agents append episodes; a dream cycle distills them into cited pages; recall packs those pages
into a prompt under a token budget. Importing this package does no I/O and starts nothing.
"""

from __future__ import annotations

import typing

from reverie.api.items import Deletion, MemoryEvent, MemoryItem, Retirement
from reverie.config import Config, DreamConfig, IdentityConfig, RecallConfig
from reverie.engine import Reverie, UndoReport
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
from reverie.intake import IngestResult
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
    "AsyncReverie",
    "Citation",
    "Claim",
    "Config",
    "Conflict",
    "Cycle",
    "CycleReport",
    "Deletion",
    "DreamConfig",
    "Episode",
    "IdentityConfig",
    "IngestResult",
    "InvalidInput",
    "InvalidScope",
    "Lineage",
    "MemoryEvent",
    "MemoryItem",
    "NotFound",
    "Outcome",
    "Page",
    "PageKind",
    "PageStatus",
    "PlanRejected",
    "Recall",
    "RecallConfig",
    "RecallItem",
    "Retirement",
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

if typing.TYPE_CHECKING:
    from reverie.runtime.aio import AsyncReverie


def __getattr__(name: str) -> typing.Any:
    """``AsyncReverie`` loads with its event-loop machinery on first use, not on import."""
    if name == "AsyncReverie":
        from reverie.runtime.aio import AsyncReverie  # noqa: PLC0415 (lazy: asyncio, threads)

        return AsyncReverie
    raise AttributeError(f"module 'reverie' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), "AsyncReverie"})
