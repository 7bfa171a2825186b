"""Value supersession across pages: one slot, one current page (DESIGN invariant 6).

A free-text value statement ("Page the on-call in #ops-oncall", later "Page the on-call in
#sre-pager"; :func:`reverie.text.slots.slot_of`) can land on a page of its own each time its
value changes: the episodes of each value cluster apart, and a structured fact's page can state
the slot in a lesson claim while an older free-text page still states the old value. Within one
page :func:`reverie.dream.lessons.current_values` keeps only the newest value; this pass does the
same between the scope's active pages, after the cycle's own writes.

* A page is *about* a value when its lead claim (its first lesson, fix, warning, procedure or
  fact claim) is a value statement, read with one content word enough (``Escalate to
  expert-desk``): the slot is then scoped to its context, below. Every actionable claim of any
  active page states its slot.
* Two statements are of one slot when their slot keys are equal and they were learnt in one
  context (the same ``category|tool`` prefix of the topic key), or their key holds at least
  :data:`SPECIFIC_WORDS` content words (specific enough to name one thing anywhere).
* Per slot, the value stated last wins, by the statements' own time (``last_seen`` of the claim,
  else of the page): never by arrival, so a late backfill of an old value changes nothing.
* A page about an older value is superseded, ``valid_until`` the time the newer value was
  stated, ``superseded_by`` the page stating it; it stays readable for ``as_of``. Fact pages
  (their runs are :mod:`reverie.dream.facts`'s) and pages holding a person's pinned claims are
  never superseded here, only used as the newer side.

Pure given the pages and writes; deterministic (ties: page id).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from reverie.dream.apply import WriteContext, next_revision, revision_from
from reverie.models import ACTIONABLE_ROLES, Claim, Page, PageStatus, utc
from reverie.store.base import PageWrite
from reverie.text.assertions import PREFIX
from reverie.text.slots import MASK, slot_of

__all__ = ["SPECIFIC_WORDS", "value_writes"]

SPECIFIC_WORDS = 4
"""Content words a slot key needs to be one slot across contexts."""

_Write = tuple[str, PageWrite, int]


@dataclass(frozen=True)
class _Said:
    """One actionable claim of an active page read as a value of ``slot``."""

    page: Page
    slot: str
    value: str
    first: datetime
    last: datetime
    lead: bool


def _context(page: Page) -> str:
    return "|".join(page.topic_key.split("|")[:2])


def _slot(page: Page, key: str) -> str:
    words = [w for w in key.split() if w != MASK]
    return key if len(words) >= SPECIFIC_WORDS else f"{_context(page)}#{key}"


def _when(page: Page, claim: Claim) -> tuple[datetime, datetime]:
    support, rev = page.revision.support, page.revision
    last = claim.last_seen or (support.last_seen if support else None) or rev.valid_from
    first = claim.first_seen or (support.first_seen if support else None) or rev.valid_from
    last = utc(last or page.updated_at)
    return utc(first) if first else last, last


def _statements(page: Page) -> list[_Said]:
    out = []
    lead = True
    for claim in page.revision.claims:
        if claim.role not in ACTIONABLE_ROLES:
            continue
        parsed = slot_of(claim.text, least=1)
        if parsed is not None:
            first, last = _when(page, claim)
            slot = _slot(page, parsed.key)
            out.append(_Said(page, slot, parsed.value_key, first, last, lead))
        lead = False
    return out


def _movable(page: Page) -> bool:
    pinned = any(c.pinned for c in page.revision.claims) or page.revision.pins
    return not page.topic_key.startswith(PREFIX + "|") and not pinned


def _stale(pages: Iterable[Page]) -> list[tuple[Page, _Said, datetime]]:
    """Each page about a value its slot no longer holds, with the newer statement and when the
    page's value stopped holding."""
    by_slot: dict[str, list[_Said]] = defaultdict(list)
    for page in sorted(pages, key=lambda p: p.id):
        for said in _statements(page):
            by_slot[said.slot].append(said)
    out = []
    for statements in by_slot.values():
        newest = max(statements, key=lambda s: (s.last, s.page.id))
        for old in statements:
            moved = old.page.id != newest.page.id and old.last < newest.last
            if moved and old.lead and old.value != newest.value and _movable(old.page):
                out.append((old.page, newest, max(newest.first, old.last)))
    return out


def _overlay(ctx: WriteContext, stored: Sequence[Page], writes: Sequence[_Write]) -> list[Page]:
    """The scope's active pages as they stand once this cycle's writes land."""
    pages = {p.id: p for p in stored}
    for _action, write, _n in writes:
        rev = write.revision
        held = pages.get(rev.page_id)
        if held is not None:
            pages[rev.page_id] = held.model_copy(update={"revision": rev})
        else:
            pages[rev.page_id] = Page(
                id=rev.page_id,
                scope=ctx.scope,
                topic_key=write.topic_key,
                revision=rev,
                created_at=ctx.now,
                updated_at=ctx.now,
            )
    return [p for p in pages.values() if p.status is PageStatus.ACTIVE]


def value_writes(ctx: WriteContext, stored: Sequence[Page], writes: list[_Write]) -> list[_Write]:
    """``writes`` with every page about a superseded value superseded (module docstring):
    a page this cycle already writes has that write's revision superseded in place."""
    out = list(writes)
    at = {w.revision.page_id: i for i, (_a, w, _n) in enumerate(out)}
    for page, newer, until in _stale(_overlay(ctx, stored, out)):
        changes: dict[str, object] = {
            "status": PageStatus.SUPERSEDED,
            "valid_until": until,
            "superseded_by": newer.page.id,
            "reason": f"newer evidence ({until.isoformat()}) on {newer.page.id} states"
            f" another value: {newer.page.title}"[:1000],
        }
        if page.id in at:
            action, write, n = out[at[page.id]]
            rev = write.revision
            fields = rev.content_fields() | changes
            rev = revision_from(rev.page_id, rev.number, ctx, **fields)
            out[at[page.id]] = (action, replace(write, revision=rev), n)
        else:
            rev = next_revision(ctx, page, **changes)
            out.append(("superseded", PageWrite(ctx.scope, page.topic_key, rev,
                                                page.revision.number), 0))  # fmt: skip
    return out
