"""Reverie: a sleep cycle for AI agents.

Agents append episodes; a dream cycle distills them into cited pages; recall packs those pages
into a prompt under a token budget. Importing this package does no I/O and starts nothing.

The public names load on first use (a module ``__getattr__``), so ``import reverie`` costs a
few milliseconds and ``from reverie import Reverie`` loads only what the facade needs; a type
checker reads them from the ``TYPE_CHECKING`` block below.
"""

from __future__ import annotations

import importlib
import typing

if typing.TYPE_CHECKING:
    from reverie.api.items import Deletion, MemoryEvent, MemoryItem, Retirement
    from reverie.config import Config, DreamConfig, IdentityConfig, RecallConfig
    from reverie.engine import Reverie
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
    from reverie.memory.undo import UndoReport
    from reverie.models import (
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
    from reverie.runtime.aio import AsyncReverie

_HOMES = {
    "reverie.api.items": ("Deletion", "MemoryEvent", "MemoryItem", "Retirement"),
    "reverie.config": ("Config", "DreamConfig", "IdentityConfig", "RecallConfig"),
    "reverie.engine": ("Reverie",),
    "reverie.errors": (
        "ArchiveUnreadable",
        "Conflict",
        "InvalidInput",
        "InvalidScope",
        "NotFound",
        "PlanRejected",
        "ReverieError",
        "ScopesFailed",
        "StoreError",
        "UndoRefused",
    ),
    "reverie.intake": ("IngestResult",),
    "reverie.memory.undo": ("UndoReport",),
    "reverie.models": (
        "Claim",
        "Cycle",
        "CycleReport",
        "Episode",
        "Lineage",
        "Outcome",
        "Page",
        "PageKind",
        "PageStatus",
        "Recall",
        "RecallItem",
        "Revision",
        "Scope",
    ),
    "reverie.runtime.aio": ("AsyncReverie",),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = [
    "ArchiveUnreadable",
    "AsyncReverie",
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


def __getattr__(name: str) -> typing.Any:
    """A public name, imported from its home module on first use and kept here after."""
    module = _HOME_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'reverie' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOME_OF})
