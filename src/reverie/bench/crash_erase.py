"""The crash harness's erasure kill points, and what an erasure must leave after any of them.

After every cycle a lane's child erases a few episodes (every stored episode whose ``seq`` is
a multiple of :data:`EVERY`), announcing ``erasing <id>`` for each first and ``phase <step>`` at
every step of the erasure (:data:`ERASE_TARGETS`): planned, the rebuilt bundles written, inside
the transaction (revisions, pages, episodes, derived text, receipt), then the file work after the
commit (old bundles removed, mirror rewritten, database scrubbed).

:func:`check_erasures` is DESIGN invariant 2 for erasure — the whole erasure or none of it: an
episode announced for erasure is either named by a stored receipt and gone from everywhere (the
episodes, every revision's citations, the archive index, and, once the receipt is finished, the
bundle files on disk), or still stored. A receipt left unfinished by a kill is finished by the
next erasure, or when the harness settles.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from reverie.dream.archive import archive_root
from reverie.memory.erasure import ForgetRequest, forget
from reverie.models import Scope
from reverie.store.sqlite import SQLiteStore

__all__ = [
    "ERASE_TARGETS",
    "EVERY",
    "check_erasures",
    "erase_some",
    "erased_ids",
    "stale_revisions",
    "tombstoned",
]

ERASE_TARGETS = (
    "erase-planned", "erase-bundles-written", "erase-revisions", "erase-pages",
    "erase-episodes", "erase-derived", "erase-receipt", "erase-files", "erase-mirror",
    "erase-scrubbed",
)  # fmt: skip
"""Where a round may kill an erasure: before, inside and after its transaction."""
EVERY = 9


def erase_some(
    store: SQLiteStore, scope: Scope, now: datetime, announce: Callable[[str], None]
) -> None:
    """Erase the scope's stored episodes whose seq is a multiple of :data:`EVERY`."""
    chosen = [e.id for e in store.recent_episodes(scope, 10_000_000) if (e.seq or 0) % EVERY == 0]
    if not chosen:
        return
    for episode_id in chosen:
        print(f"erasing {episode_id}", flush=True)
    request = ForgetRequest(episodes=tuple(sorted(chosen)), scope=scope, reason="crash lane")
    forget(store, request, now, apply=True, on_step=announce)


def erased_ids(store: SQLiteStore) -> set[str]:
    """Every episode a stored receipt names as erased."""
    return {e for r in store.erasure_receipts(limit=1_000_000) for e in r.details["episodes"]}


def tombstoned(store: SQLiteStore) -> set[tuple[str, int, str]]:
    """``(page, revision, hash before)`` of every revision an erasure rewrote or deleted."""
    found: set[tuple[str, int, str]] = set()
    for receipt in store.erasure_receipts(limit=1_000_000):
        full = store.erasure_receipt(receipt.id)
        found |= {(t.page_id, t.revision, t.hash_before) for t in full.tombstones}
    return found


def stale_revisions(store: SQLiteStore) -> set[tuple[str, int, str]]:
    """Revisions a mirror file may still name: those of erasures whose file work (the mirror
    rewrite among it) a kill interrupted."""
    unfinished = store.erasure_receipts(unfinished=True, limit=1_000_000)
    if not unfinished:
        return set()
    return tombstoned(store)


def check_erasures(store: SQLiteStore, scope: Scope, announced: set[str]) -> list[str]:
    """Every violation of "the whole erasure or none of it" (see the module docstring)."""
    problems: list[str] = []
    erased = erased_ids(store)
    stored = {e.id for e in store.recent_episodes(scope, 10_000_000)}
    if half := (announced - erased) - stored:
        problems.append(f"{len(half)} episode(s) gone with no receipt, e.g. {sorted(half)[:3]}")
    if left := erased & stored:
        problems.append(f"{len(left)} erased episode(s) still stored, e.g. {sorted(left)[:3]}")
    if cited := store.pages_citing_any(erased, tenant=scope.tenant):
        problems.append(f"{len(cited)} page(s) still cite erased episodes, e.g. {cited[:3]}")
    if indexed := store.archive_locations(erased, tenant=scope.tenant):
        problems.append(f"{len(indexed)} erased episode(s) still in the archive index")
    if not store.erasure_receipts(unfinished=True, limit=1):
        problems += _bundle_files_holding(store, erased)
    return problems


def _bundle_files_holding(store: SQLiteStore, erased: set[str]) -> list[str]:
    """Bundle files on disk that still hold an erased episode (none, once all is finished)."""
    root = archive_root(store)
    problems = []
    for path in sorted(root.glob("*.jsonl.gz")) if root.is_dir() else []:
        try:
            lines = gzip.decompress(path.read_bytes()).decode().splitlines()
        except (OSError, EOFError, UnicodeDecodeError):
            continue  # a torn file is check_archive's to report
        held = {json.loads(line)["id"] for line in lines if line} & erased
        if held:
            problems.append(
                f"bundle file {Path(path).name[:12]} still holds erased {sorted(held)[:2]}"
            )
    return problems
