"""Notes: memory files an agent writes, kept as pages addressed by a path.

The Anthropic memory tool (``/memories/...`` files) and LangGraph's store (items under a
namespace and key) both write whole documents by name. Each such document is a *note*: a page
of its scope whose topic key starts with ``note|``, whose title is its path, and whose claims
are its non-blank lines, in order. So a note is recalled, mirrored, searched and explained like
any other page, and:

* every change is a new revision in a one-page cycle authored by the writer (``agent`` unless
  told otherwise): ``undo`` takes it back, ``why`` lists it with its reason;
* a line the change adds or edits cites an episode that records the change, stored (and marked
  consolidated) in the same transaction; it is an edit, never an outcome
  (:data:`reverie.dream.pins.AGENT_EDIT`). A line left as it was keeps its claim and citations;
* the writer's lines and the path are pinned, so later dream cycles revise around them;
* deleting retires the page (still readable, ``why`` still answers); renaming retitles it, so
  the page keeps its id and its history. Writing a path whose note was deleted revives that page.

Text passes through redaction before it is stored, like every other way into a page, and
so does the edit episode's record of the change. A writer of structured values (LangGraph's
JSON items) redacts inside the parsed value itself and says so (``redacted=True``): redacting
the JSON text line by line could eat a closing quote.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from reverie.dream.apply import WriteContext, next_revision, revision_from
from reverie.dream.cycle import new_cycle_id
from reverie.dream.pins import AGENT_EDIT
from reverie.errors import InvalidInput, NotFound
from reverie.hashing import short_id
from reverie.limits import MAX_TEXT, NUL_REASON, has_nul
from reverie.memory.revisions import one_page_change
from reverie.models import (
    Claim,
    ClaimRole,
    Episode,
    Page,
    PageKind,
    PageStatus,
    Revision,
    Scope,
)
from reverie.models.plan import page_id_for
from reverie.redaction import redact
from reverie.store.base import BrainStore, PageWrite

__all__ = [
    "LINE_LIMIT",
    "NOTE",
    "PATH_LIMIT",
    "NoteChange",
    "commit_notes",
    "note_lines",
    "note_text",
    "notes",
    "under",
]

NOTE = "note|"
"""The topic-key prefix of every note."""
LINE_LIMIT = 4000
"""The longest line a note keeps (one claim holds one line)."""
PATH_LIMIT = 200
"""The longest path (a page title)."""
PINS = ("kind", "title")


@dataclass(frozen=True)
class NoteChange:
    """One note's change: its path after the change, its new text (None retires it), and the
    note it changes (None: a note that did not exist).

    ``valid_until`` ends the note's validity (recall and readers then leave it out; it stays for
    ``why`` and "as of"), counted from the change; ``unrecalled`` names lines kept as evidence
    only: stored, cited and read back, never recalled (:attr:`ClaimRole.EVIDENCE`).
    """

    path: str
    text: str | None
    page: Page | None = None
    valid_until: datetime | None = None
    unrecalled: frozenset[str] = frozenset()


def notes(store: BrainStore, scope: Scope) -> dict[str, Page]:
    """The active notes of ``scope`` by path."""
    pages = store.pages(scope, [PageStatus.ACTIVE])
    return {p.title: p for p in pages if p.topic_key.startswith(NOTE)}


def note_lines(page: Page) -> list[str]:
    return [c.text for c in page.revision.claims]


def note_text(page: Page) -> str:
    return "\n".join(note_lines(page))


def _check(change: NoteChange) -> list[str]:
    if not change.path or len(change.path) > PATH_LIMIT or "\n" in change.path:
        raise InvalidInput("path", f"a note's path is one line of 1-{PATH_LIMIT} characters")
    if change.text is None:
        return []
    lines = [line.rstrip() for line in change.text.split("\n") if line.strip()]
    for number, line in enumerate(lines, 1):
        if len(line) > LINE_LIMIT:
            raise InvalidInput(
                "text", f"line {number} is {len(line)} characters; split lines over {LINE_LIMIT}"
            )
    return lines


def _claims(
    change: NoteChange, before: Page | None, edit: Episode, redacted: bool
) -> tuple[Claim, ...]:
    """A line kept as it was (and recalled as it was) keeps its claim; an added or changed
    line cites ``edit``."""
    kept: dict[tuple[str, ClaimRole | None], list[Claim]] = {}
    for claim in before.revision.claims if before else ():
        kept.setdefault((claim.text, claim.role), []).append(claim)
    out = []
    for line in _check(change):
        text = line if redacted else redact(line)
        role = ClaimRole.EVIDENCE if line in change.unrecalled else None
        same = kept.get((text, role))
        fresh = Claim(text=text, episode_ids=(edit.id,), role=role, pinned=True)
        out.append(same.pop(0) if same else fresh)
    return tuple(out)


def _fresh_topic(store: BrainStore, scope: Scope, path: str) -> tuple[str, Page | None]:
    """The topic key for a new note at ``path``: the path's own, unless a note renamed away
    from it still holds that key (then ``#2``, ``#3`` ...). A deleted note's page is reused."""
    for n in itertools.count(1):
        key = f"{NOTE}{path}" if n == 1 else f"{NOTE}{path}#{n}"
        try:
            page = store.page(page_id_for(scope, key))
        except NotFound:
            return key, None
        if page.status is not PageStatus.ACTIVE:
            return key, page
    raise AssertionError("unreachable")  # pragma: no cover


def _revision(
    change: NoteChange,
    page: Page | None,
    page_id: str,
    ctx: WriteContext,
    edit: Episode,
    redacted: bool,
) -> Revision:
    if change.text is None:
        assert page is not None  # only an existing note can be retired
        return next_revision(ctx, page, status=PageStatus.RETIRED, reason=f"deleted {page.title}")
    claims = _claims(change, page, edit, redacted)
    since = ctx.now if change.valid_until else None
    if page is None:
        return revision_from(
            page_id,
            1,
            ctx,
            title=change.path,
            kind=PageKind.NOTE,
            claims=claims,
            confidence=1.0,
            reason="written",
            pins=PINS,
            valid_from=since,
            valid_until=change.valid_until,
        )
    reason = "written" if page.title == change.path else f"moved from {page.title}"
    return next_revision(
        ctx,
        page,
        title=change.path,
        claims=claims,
        status=PageStatus.ACTIVE,
        reason=reason,
        pins=PINS,
        valid_from=since,
        valid_until=change.valid_until,
    )


def _write(
    store: BrainStore, change: NoteChange, ctx: WriteContext, edit: Episode, redacted: bool
) -> tuple[str, PageWrite] | None:
    page, topic = change.page, change.page.topic_key if change.page else ""
    if page is None:
        topic, page = _fresh_topic(store, ctx.scope, change.path)
    page_id = page.id if page else page_id_for(ctx.scope, topic)
    rev = _revision(change, page, page_id, ctx, edit, redacted)
    if page is not None and rev.hash == page.revision.hash:
        return None
    action = "created" if page is None else "retired" if change.text is None else "revised"
    return action, PageWrite(ctx.scope, topic, rev, page.revision.number if page else None)


def _edit_episode(scope: Scope, ctx: WriteContext, summary: str, author: str) -> Episode:
    return Episode(
        id=short_id("ed", scope.key, ctx.cycle_id),
        scope=scope,
        created_at=ctx.now,
        situation=f"{author} changed its notes",
        action=summary[:MAX_TEXT],
        outcome="success",
        importance=1,
        category="note-edit",
        metadata={"reverie": AGENT_EDIT, "author": author},
    )


def commit_notes(
    store: BrainStore,
    scope: Scope,
    changes: Sequence[NoteChange],
    *,
    now: datetime,
    summary: str,
    author: str = "agent",
    redacted: bool = False,
) -> str | None:
    """Apply ``changes`` as one cycle (one transaction) and return its id; None when nothing
    changed. ``summary`` says what the writer did, in its words (the edit episode's action).
    The lines and the summary are redacted here unless the writer did it (``redacted``)."""
    if scope.is_org:
        raise InvalidInput("scope", "the org brain is written only by promotion; it takes no notes")
    if has_nul([summary, *((c.path, c.text or "") for c in changes)]):
        raise InvalidInput("text", NUL_REASON)
    ctx = WriteContext(scope, new_cycle_id(now), now, {}, author=author)
    edit = _edit_episode(scope, ctx, summary if redacted else redact(summary), author)
    writes = [w for c in changes if (w := _write(store, c, ctx, edit, redacted)) is not None]
    if not writes:
        return None
    cites = any(edit.id in c.episode_ids for _a, w in writes for c in w.revision.claims)
    base = one_page_change(
        scope,
        ctx.cycle_id,
        now,
        [(action, write, 1 if cites else 0) for action, write in writes],
        checkpoint=store.checkpoint(scope),
        headline=f"{author}: {summary.splitlines()[0][:120] if summary else 'notes'}",
    )
    episodes = [edit] if cites else []
    store.commit(dataclasses.replace(base, episodes=episodes, marks=[e.id for e in episodes]))
    return ctx.cycle_id


def under(found: Mapping[str, Page], folder: str) -> dict[str, Page]:
    """The notes whose path lies inside ``folder`` (a path prefix ending at a ``/``)."""
    prefix = folder.rstrip("/") + "/"
    return {path: page for path, page in found.items() if path.startswith(prefix)}
