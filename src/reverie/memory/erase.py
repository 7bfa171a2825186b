"""Running an erasure: the dry run, the apply, and the file work after the commit.

Crash safety (DESIGN invariant 2 holds for erasure too):

1. plan (reads only) — a crash changes nothing;
2. write the rebuilt archive bundles under their new names and read them back — a crash leaves
   extra files no index names, which hold none of the erased text;
3. :meth:`~reverie.store.base.BrainStore.erase`: one transaction, receipt included — a crash
   inside it leaves everything as it was;
4. remove the old bundle files, rewrite the Markdown mirrors the store knows of, and scrub the
   database files (SQLite: VACUUM, WAL truncated; PostgreSQL, when asked: ``VACUUM FULL`` of
   the tables the transaction left old row versions in), then mark the receipt finished.

A crash in step 4 leaves the erasure applied and its receipt unfinished: the store is
consistent, and what is still due (``Receipt.pending``) is done by :func:`finish_pending`, which
every applied erasure runs first and ``reverie forget --resume`` runs alone. Each part of step 4
can run again without harm.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from reverie.dream.archive import Archive
from reverie.memory.claude_code import KIND as CLAUDE_CODE
from reverie.memory.claude_code import export_claude_code
from reverie.memory.forget import ForgetPlan, ForgetRequest, plan_forget
from reverie.memory.mirror import JOURNAL, export_markdown
from reverie.models import Scope
from reverie.store.base import BrainStore, StepHook
from reverie.store.records import Erased, Erasure, Receipt, Tombstone

__all__ = ["finish", "finish_pending", "forget"]


def _ignore(_step: str) -> None:
    return None


def forget(
    store: BrainStore,
    request: ForgetRequest,
    now: datetime,
    *,
    apply: bool = False,
    on_step: StepHook | None = None,
) -> Receipt:
    """Erase what ``request`` reaches (``apply``), or say exactly what that would do; the
    receipt (stored when applied)."""
    step = on_step or _ignore
    if apply:
        finish_pending(store, now, step)
    plan = plan_forget(store, request, now)
    step("erase-planned")
    if not apply:
        return _dry_receipt(plan.erasure, store.erase(plan.erasure, apply=False))
    _write_bundles(store, plan)
    step("erase-bundles-written")
    store.erase(plan.erasure, apply=True, on_step=step)
    finish(store, store.erasure_receipt(plan.erasure.id), now, step)
    return store.erasure_receipt(plan.erasure.id)


def _dry_receipt(e: Erasure, erased: Erased) -> Receipt:
    tombstones = [
        Tombstone(e.id, w.revision.page_id, w.revision.number, w.scope, w.hash_before,
                  w.revision.hash, e.at, e.reason, e.request_id)
        for w in e.rewrites
    ] + [
        Tombstone(e.id, d.page_id, number, d.scope, digest, None, e.at, e.reason, e.request_id)
        for d in e.drops
        for number, digest in d.revisions
    ]  # fmt: skip
    counts = {k: v for k, v in {**erased.counts, "tombstones": len(tombstones)}.items() if v}
    return Receipt(
        id=e.id,
        request_id=e.request_id,
        created_at=e.at,
        request=e.request,
        counts=dict(sorted(counts.items())),
        details={**e.details, "pending": dict(e.pending), **erased.recorded()},
        applied=False,
        tombstones=tombstones,
    )


def _write_bundles(store: BrainStore, plan: ForgetPlan) -> None:
    """Write each rebuilt bundle and read it back before the transaction names it."""
    if not plan.bundle_data:
        return
    archive = Archive(store)
    for bundle_hash, data in sorted(plan.bundle_data.items()):
        archive.files.write(bundle_hash, data)
        archive.fetch(bundle_hash)  # hashes to its name and parses, or raises


def finish(store: BrainStore, receipt: Receipt, now: datetime, step: StepHook = _ignore) -> bool:
    """Do the file work due after ``receipt``'s commit; True once it is all done."""
    pending = receipt.pending
    if not receipt.applied or receipt.finished_at is not None:
        return True
    _remove_bundles(store, pending.get("bundle_files") or [])
    step("erase-files")
    for directory, scope_key, *kind in pending.get("mirrors") or []:
        _rewrite(store, Path(directory), Scope.parse(scope_key), kind[0] if kind else "markdown")
    step("erase-mirror")
    vacuum = receipt.details.get("residue", {}).get("tables") if pending.get("vacuum") else ()
    if pending.get("scrub") and not store.scrub_free_space(vacuum or ()):
        return False
    step("erase-scrubbed")
    store.finish_erasure(receipt.id, now)
    return True


def _rewrite(store: BrainStore, folder: Path, scope: Scope, kind: str) -> None:
    """Export ``scope`` again into a folder an earlier export wrote, in the same layout."""
    if not folder.is_dir():
        return
    if kind == CLAUDE_CODE:
        export_claude_code(store, scope, folder)
    else:
        export_markdown(store, scope, folder, journal=(folder / JOURNAL).exists())


def _remove_bundles(store: BrainStore, paths: Sequence[str]) -> None:
    """Remove old bundle files, unless a bundle the store still indexes has that name."""
    if not paths:
        return
    kept = {b.file_name for b in store.archive_bundles()}
    for path in paths:
        if Path(path).name not in kept:
            Path(path).unlink(missing_ok=True)


def finish_pending(store: BrainStore, now: datetime, step: StepHook = _ignore) -> list[Receipt]:
    """Finish every applied erasure whose file work a crash interrupted; the receipts still
    unfinished afterwards (a reader kept SQLite's WAL from being reset)."""
    left = []
    for receipt in reversed(store.erasure_receipts(unfinished=True, limit=1000)):
        if not finish(store, receipt, now, step):
            left.append(store.erasure_receipt(receipt.id))
    return left
