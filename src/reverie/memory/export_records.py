"""The store's record of where a scope's text was written out, so that an erasure reaches it.

Markdown mirrors and Claude Code folders are rewritten by an erasure at once; training files are
out of reach and listed on its receipt (docs/privacy.md). A brain opened read-only cannot keep
the record: nothing can be erased from it either, and an erasure made later, with write access,
rewrites an unrecorded mirror on its next export (its erased files carry tombstones).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from reverie.errors import StoreReadOnly
from reverie.models import Scope
from reverie.store.base import BrainStore

__all__ = ["record_export"]


def record_export(
    store: BrainStore, target: Path, kind: str, scopes: Sequence[Scope], at: datetime | None
) -> None:
    """Record that ``scopes`` were exported to ``target`` (a folder or a file) at ``at``;
    nothing when ``at`` is None or the store is read-only."""
    if at is None or not scopes:
        return
    try:
        store.record_export(str(target.resolve()), kind, scopes, at)
    except StoreReadOnly:
        return
