"""Revisions over time: exact bytes, verification, and restore (docs/memory.md).

A revision's *bytes* are the canonical JSON of what a reader sees of it (title, kind, claims,
confidence, status, validity, successor); its ``hash`` is ``sha256:`` of those bytes. Nothing
rewrites a stored revision but an erasure (docs/privacy.md), so :func:`verify` re-derives every
hash from the stored fields and names any revision that no longer matches, or any gap in a
page's numbering. A revision an erasure rewrote must match its tombstone's after-hash: it is
reported as erased, not as corrupt.

A retirement asked for by a caller (the conventional ``delete``, docs/api.md) is the same kind of
change: a new revision with status ``retired``, recorded as a one-page cycle, so the page stays
readable in ``why`` and ``history`` and ``undo`` brings it back.

A restore is a change like any other: a new revision with the content of an old one, recorded as
a one-page cycle (author ``restore``), so ``reverie undo`` takes it back and an undo of an earlier
cycle that touched the page refuses while the restore stands. A person chose that content, so
every claim it brings back is pinned and so are its title and kind
(:mod:`reverie.dream.pins`): later cycles revise around them, never drop or rewrite them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from reverie.dream.apply import WriteContext, change_of, next_revision
from reverie.dream.cycle import new_cycle_id
from reverie.dream.journal import entry
from reverie.dream.pins import pin_all
from reverie.errors import InvalidInput, NotFound
from reverie.hashing import canonical_json, content_hash
from reverie.models import (
    PINNABLE,
    Cycle,
    CycleReport,
    CycleStatus,
    Page,
    PageStatus,
    Revision,
    Scope,
)
from reverie.store.base import BrainStore, Changeset, PageWrite

__all__ = [
    "VerifyReport",
    "one_page_change",
    "pick_revision",
    "plan_restore",
    "plan_retire",
    "revision_bytes",
    "verify",
]


def revision_bytes(rev: Revision) -> bytes:
    """The exact bytes ``rev.hash`` is the sha256 of."""
    return canonical_json(rev.content()).encode("utf-8")


@dataclass
class VerifyReport:
    pages: int = 0
    revisions: int = 0
    problems: list[str] = field(default_factory=list)
    integrity: str = "ok"
    """What the database's own integrity check said of its file (``ok`` when sound)."""
    erased: int = 0
    """Revisions an erasure rewrote that hold exactly what it wrote (their tombstones agree)."""
    unfinished: list[str] = field(default_factory=list)
    """Erasures whose file work after the commit is still due (``reverie forget --resume``)."""

    @property
    def ok(self) -> bool:
        return not self.problems


def _check_page(revisions: Sequence[Revision], current: Revision) -> list[str]:
    problems = []
    for i, rev in enumerate(revisions, 1):
        if rev.number != i:
            problems.append(f"page {rev.page_id}: revision {rev.number} found where {i} belongs")
        derived = content_hash(revision_bytes(rev))
        if derived != rev.hash:
            problems.append(
                f"page {rev.page_id} revision {rev.number}: stored hash {rev.hash} but its"
                f" content hashes to {derived}"
            )
    if revisions and revisions[-1].hash != current.hash:
        problems.append(f"page {current.page_id}: current revision is not the newest one")
    return problems


def _integrity(store: BrainStore) -> str:
    try:
        return store.integrity_check()
    except Exception as exc:  # a file too damaged to check is the answer, not a crash
        return f"{type(exc).__name__}: {exc}"


def verify(store: BrainStore, scopes: Sequence[Scope]) -> VerifyReport:
    """The database's own integrity check of its file (SQLite's ``PRAGMA integrity_check``:
    a page of zeros inside the file hashes nothing we wrote, so only it can see one), then the
    hash of every revision of every page of ``scopes`` re-derived."""
    report = VerifyReport(integrity=_integrity(store))
    if report.integrity != "ok":
        report.problems.append(f"database integrity check failed: {report.integrity}")
    hashes: dict[tuple[str, int], str] = {}
    for scope in scopes:
        for page in store.pages(scope, None):
            revisions = store.revisions(page.id)
            report.pages += 1
            report.revisions += len(revisions)
            report.problems += _check_page(revisions, page.revision)
            hashes.update(((page.id, r.number), r.hash) for r in revisions)
    _check_erased(store, hashes, report)
    return report


def _check_erased(
    store: BrainStore, hashes: dict[tuple[str, int], str], report: VerifyReport
) -> None:
    """Each tombstoned revision against its erasure's after-hash (the newest tombstone wins;
    one of a deleted page names a revision that a later page of the same topic may reuse)."""
    latest = {(t.page_id, t.revision): t for t in store.tombstones({p for p, _n in hashes})}
    for key, stone in sorted(latest.items()):
        where = f"page {key[0]} revision {key[1]}"
        if stone.hash_after is None or key not in hashes:
            continue
        if hashes[key] != stone.hash_after:
            report.problems.append(
                f"{where} holds {hashes[key]}, not {stone.hash_after} as erasure"
                f" {stone.erasure_id} wrote it"
            )
        else:
            report.erased += 1
    report.unfinished = [r.id for r in store.erasure_receipts(unfinished=True, limit=1000)]


def pick_revision(revisions: Sequence[Revision], page_id: str, number: int) -> Revision:
    for rev in revisions:
        if rev.number == number:
            return rev
    raise NotFound(f"page {page_id} has no revision {number} (it has {len(revisions)})")


def one_page_change(
    scope: Scope,
    cycle_id: str,
    now: datetime,
    changes: Sequence[tuple[str, PageWrite, int]],
    *,
    checkpoint: int,
    headline: str,
) -> Changeset:
    """A changeset recorded as a committed cycle, so ``undo`` can take it back."""
    report = CycleReport(
        cycle_id=cycle_id,
        scope=scope,
        status=CycleStatus.COMMITTED,
        started_at=now,
        finished_at=now,
        checkpoint_before=checkpoint,
        checkpoint_after=checkpoint,
        revised=len(changes),
        changes=[change_of(action, w, n) for action, w, n in changes],
        message=headline,
    )
    return Changeset(
        scope=scope,
        expected_checkpoint=checkpoint,
        checkpoint=checkpoint,
        page_writes=[w for _a, w, _n in changes],
        cycle=Cycle.of(report),
        mark_cycle=cycle_id,
        journal=entry(f"{headline} · {cycle_id} · {scope}", now, changes),
        at=now,
    )


def _one_revision(
    store: BrainStore, ctx: WriteContext, page: Page, rev: Revision, action: str, headline: str
) -> Changeset:
    """``rev`` over ``page``'s current revision, as the one-page cycle of ``ctx``."""
    write = PageWrite(page.scope, page.topic_key, rev, page.revision.number)
    return one_page_change(
        ctx.scope,
        ctx.cycle_id,
        ctx.now,
        [(action, write, 0)],
        checkpoint=store.checkpoint(page.scope),
        headline=headline,
    )


def plan_restore(store: BrainStore, page_id: str, number: int, now: datetime) -> Changeset:
    """A new revision of ``page_id`` with the exact content of its revision ``number``."""
    page = store.page(page_id)
    old = pick_revision(store.revisions(page_id), page_id, number)
    cycle_id = new_cycle_id(now)
    ctx = WriteContext(page.scope, cycle_id, now, {}, author="restore")
    # the old content, every claim and field pinned: a person chose it, so it sticks
    pinned = {"claims": pin_all(old.claims), "pins": tuple(sorted(PINNABLE))}
    content = old.content_fields() | pinned
    rev = next_revision(ctx, page, reason=f"restore of revision {number}", **content)
    if page.revision.hash in (old.hash, rev.hash):
        raise InvalidInput(
            "revision", f"page {page_id} already has the content of revision {number}"
        )
    headline = f"restore of {page_id} to revision {number}"
    return _one_revision(store, ctx, page, rev, "restored", headline)


def plan_retire(
    store: BrainStore, page_id: str, now: datetime, *, author: str, reason: str
) -> Changeset:
    """A new revision of ``page_id`` that retires it, as a one-page cycle ``undo`` takes back."""
    page = store.page(page_id)
    if page.status is PageStatus.RETIRED:
        raise InvalidInput("id", f"page {page_id} is already retired")
    cycle_id = new_cycle_id(now)
    ctx = WriteContext(page.scope, cycle_id, now, {}, author=author)
    rev = next_revision(ctx, page, status=PageStatus.RETIRED, reason=reason)
    return _one_revision(store, ctx, page, rev, "retired", f"retirement of {page_id}")
