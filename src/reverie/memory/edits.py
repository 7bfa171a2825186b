"""A person's edit of a page: one code path, whether it comes from the Markdown mirror or the
console (``POST /v1/pages/{id}/edit``).

An edit names the page and the revision the person read, and the title, kind and claim lines
they want. It becomes a new revision authored ``human`` in a one-page cycle (so ``undo`` takes
it back), and a person's corrections stick (:mod:`reverie.dream.pins`):

* a claim line left as it was (same text, same citations) keeps its claim and flags;
* a line the person added or changed is pinned; one that names no episodes cites an episode
  that records the edit (``metadata.reverie == "human-edit"``), stored and marked consolidated
  in the same transaction, so ``why`` still leads every claim to raw evidence. Citations a
  line names must be episodes of the page's scope;
* the revision's ``pins`` add ``title`` / ``kind`` when the person changed them;
* an edit of a page that changed since the person read it is refused (a conflict), and an edit
  that changes nothing writes nothing.

Text passes through redaction before it is stored, like every other way into a page.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from reverie.dream.apply import WriteContext, next_revision
from reverie.dream.cycle import new_cycle_id
from reverie.dream.pins import HUMAN_EDIT
from reverie.errors import Conflict, InvalidInput
from reverie.hashing import short_id
from reverie.limits import MAX_TEXT, NUL_REASON, has_nul
from reverie.memory.revisions import one_page_change
from reverie.models import PINNABLE, Claim, Episode, Page, PageKind, PageStatus, Revision, utc
from reverie.redaction import redact
from reverie.store.base import BrainStore, PageWrite

__all__ = [
    "Accepted",
    "EditReport",
    "HumanEdit",
    "accept_edit",
    "commit_edits",
    "edit_page",
]

CLAIM_CHARS = 4000
TITLE_CHARS = 200


@dataclass(frozen=True)
class HumanEdit:
    """What a person wants a page to say: its title, its claim lines (text and the episode ids
    each cites; none: the edit's own episode), and the fields of ``fields`` (``kind``, and from
    the mirror's front matter ``status``, ``confidence``, ``valid_from``, ``valid_until``).
    ``digest`` names the edit (the file's sha256, or the request's); ``where`` says where it
    was made, for the episode that records it."""

    page: Page
    title: str
    claims: list[tuple[str, tuple[str, ...]]]
    fields: dict[str, Any]
    digest: str
    where: str = "in the Markdown mirror"


@dataclass(frozen=True)
class Accepted:
    """An edit turned into the write it makes, and the episode that records its new lines."""

    edit: HumanEdit
    write: PageWrite
    episode: Episode | None


@dataclass
class EditReport:
    """What :func:`edit_page` did: the cycle it recorded (None when nothing changed)."""

    page_id: str
    revision: int
    cycle_id: str | None = None
    pins: list[str] = field(default_factory=list)
    episode_id: str | None = None


def _human_episode(edit: HumanEdit, now: datetime) -> Episode:
    added = [text for text, ids in edit.claims if not ids]
    return Episode(
        id=short_id("hu", edit.page.id, edit.digest),
        scope=edit.page.scope,
        created_at=now,
        situation=f"A person edited page {edit.page.id} {edit.where}",
        action="\n".join(redact(t) for t in added)[:MAX_TEXT],
        outcome="success",
        importance=1,
        category="human-edit",
        metadata={"reverie": HUMAN_EDIT, "page_id": edit.page.id, "file_sha256": edit.digest},
    )


def _claims(edit: HumanEdit, human: Episode | None, known: set[str]) -> tuple[Claim, ...]:
    """The edited claims: a line the person left as it was keeps its claim (and its flags); a
    line they added or changed is theirs, pinned."""
    before = {(c.text, c.episode_ids): c for c in edit.page.revision.claims}
    out = []
    for text, ids in edit.claims:
        unknown = sorted(set(ids) - known)
        if unknown:
            raise InvalidInput("citations", f"cites episodes not in this brain: {unknown[:5]}")
        clean = redact(text)[:CLAIM_CHARS]
        kept = before.get((clean, ids)) if ids else None
        cited = ids or ((human.id,) if human else ())
        out.append(kept or Claim(text=clean, episode_ids=cited, pinned=True))
    return tuple(out)


def _pins(page: Page, fields: dict[str, Any]) -> tuple[str, ...]:
    """The page's pins plus the fields the person changed."""
    pins = set(page.revision.pins)
    pins |= {name for name in PINNABLE if fields[name] != getattr(page.revision, name)}
    return tuple(sorted(pins))  # the order the store keeps


def _when(value: Any) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return utc(value) if value is not None else None
    return utc(datetime.fromisoformat(str(value)))


def _fields(edit: HumanEdit) -> dict[str, Any]:
    page, meta = edit.page, edit.fields
    try:
        return {
            "title": redact(edit.title)[:TITLE_CHARS],
            "kind": PageKind(meta.get("kind", page.kind)),
            "status": PageStatus(meta.get("status", page.status)),
            "confidence": min(1.0, max(0.0, float(meta.get("confidence", page.confidence)))),
            "valid_from": _when(meta.get("valid_from")),
            "valid_until": _when(meta.get("valid_until")),
        }
    except (ValueError, TypeError) as exc:
        raise InvalidInput("fields", str(exc)) from None


def _edited_revision(
    edit: HumanEdit, ctx: WriteContext, human: Episode | None, store: BrainStore
) -> Revision:
    ids = {i for _t, cited in edit.claims for i in cited}
    known = {e.id for e in store.episodes(ids, tenant=ctx.scope.tenant) if e.scope == ctx.scope}
    fields = _fields(edit)
    return next_revision(
        ctx,
        edit.page,
        claims=_claims(edit, human, known),
        reason="edited by a person",
        pins=_pins(edit.page, fields),
        **fields,
    )


def accept_edit(edit: HumanEdit, ctx: WriteContext, store: BrainStore) -> Accepted | None:
    """The revision ``edit`` makes, or None when it changes nothing a reader sees.

    :class:`InvalidInput` when it cannot be taken: a bad field, a citation outside the scope,
    or a new line on an org page (which takes no episodes: it is written only by promotion)."""
    if not edit.claims:
        raise InvalidInput("claims", "a page needs at least one claim line")
    for name, value in (("title", edit.title), ("claims", edit.claims), ("fields", edit.fields)):
        if has_nul(value):
            raise InvalidInput(name, NUL_REASON)
    added = any(not ids for _t, ids in edit.claims)
    if added and ctx.scope.is_org:
        raise InvalidInput(
            "claims",
            f"page {edit.page.id}: a new line needs an episode as its evidence, and the org"
            " brain takes none (it is written only by promotion); add the line to the source"
            " page in its agent's brain, or cite existing episode ids",
        )
    human = _human_episode(edit, ctx.now) if added else None
    rev = _edited_revision(edit, ctx, human, store)
    if rev.hash == edit.page.revision.hash:
        return None
    write = PageWrite(ctx.scope, edit.page.topic_key, rev, edit.page.revision.number)
    return Accepted(edit, write, human)


def commit_edits(
    store: BrainStore, ctx: WriteContext, accepted: Sequence[Accepted], headline: str
) -> None:
    """Commit ``accepted`` (one page each) as one cycle ``ctx.cycle_id``, with the episodes
    that record their new lines, in one transaction."""
    changes = [("revised", a.write, 1 if a.episode else 0) for a in accepted]
    humans = [a.episode for a in accepted if a.episode]
    base = one_page_change(
        ctx.scope,
        ctx.cycle_id,
        ctx.now,
        changes,
        checkpoint=store.checkpoint(ctx.scope),
        headline=headline,
    )
    store.commit(dataclasses.replace(base, episodes=humans, marks=[h.id for h in humans]))


def _digest(page: Page, revision: int, body: dict[str, Any]) -> str:
    raw = json.dumps([page.id, revision, body], sort_keys=True, default=str)
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def edit_page(
    store: BrainStore,
    page_id: str,
    *,
    revision: int,
    now: datetime,
    title: str | None = None,
    kind: str | None = None,
    claims: Sequence[tuple[str, Sequence[str]]] | None = None,
) -> EditReport:
    """A person's edit of ``page_id`` as they read it at ``revision``: the given title, kind
    and claim lines (each left out: as it is). :class:`Conflict` when the page moved on."""
    page = store.page(page_id)
    if page.revision.number != revision:
        raise Conflict(
            f"page {page_id} changed since revision {revision} (it is at revision"
            f" {page.revision.number} now); nothing was written: reload it and edit again"
        )
    lines = (
        [(text, tuple(ids)) for text, ids in claims]
        if claims is not None
        else [(c.text, c.episode_ids) for c in page.revision.claims]
    )
    rev = page.revision
    fields: dict[str, Any] = {"valid_from": rev.valid_from, "valid_until": rev.valid_until}
    if kind is not None:
        fields["kind"] = kind
    body = {"title": title, "kind": kind, "claims": lines}
    edit = HumanEdit(
        page,
        page.title if title is None else title.strip(),
        lines,
        fields,
        _digest(page, revision, body),
        where="in the console",
    )
    if not edit.title or "\n" in edit.title:
        raise InvalidInput("title", f"a title is one line of 1-{TITLE_CHARS} characters")
    ctx = WriteContext(page.scope, new_cycle_id(now), now, {}, author="human")
    accepted = accept_edit(edit, ctx, store)
    if accepted is None:
        return EditReport(page_id, page.revision.number)
    commit_edits(store, ctx, [accepted], f"a person's edit of page {page_id} in the console")
    new = accepted.write.revision
    episode = accepted.episode.id if accepted.episode else None
    return EditReport(page_id, new.number, ctx.cycle_id, list(new.pins), episode)
