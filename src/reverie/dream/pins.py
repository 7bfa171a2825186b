"""A person's corrections stick: pinned claims, titles and kinds.

A revision a person authored — a Markdown import (author ``human``) or a ``reverie restore``
(author ``restore``) — marks what the person wrote: each claim they added or changed (every
claim, for a restore) carries ``pinned=True``, and ``Revision.pins`` names the page fields they
set (``"title"``, ``"kind"``). Pins come from people only.

:func:`keep_pins` is applied by the cycle to every validated plan, whatever the distiller, before
it is redacted and applied. For each operation that revises or merges a page whose current
revision holds pins:

* the pinned claims are kept verbatim, first and in their order (a merge also keeps its
  sources' pinned claims, after the target's);
* a machine claim whose text repeats a pinned claim (case and spacing aside) is dropped;
* a pinned title or kind overrides the plan's, and the page's pins carry over.

A plan's own ``pins`` and ``pinned`` flags are cleared: a machine cannot pin. Superseding or
retiring a page is a decision about contradicting evidence and is left as planned.

The episode an import stores to cite a person's new lines (``metadata.reverie == "human-edit"``),
and the one an agent's note stores for its new lines (``"agent-edit"``,
:mod:`reverie.memory.notes`), are evidence of an edit, not of work: :func:`is_human_edit` names
both, so neither counts as an outcome (the cycle leaves them out of the history it shows a
distiller).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from reverie.models import PINNABLE, Claim, Episode, Page, Revision
from reverie.models.episode import AGENT_EDIT, HUMAN_EDIT
from reverie.models.plan import CreatePage, MergePages, Operation, Plan, RevisePage

__all__ = [
    "AGENT_EDIT",
    "HUMAN_EDIT",
    "claim_key",
    "has_pins",
    "is_human_edit",
    "keep_pins",
    "pin_all",
    "pinned_claims",
    "unpinned",
]

CLAIM_LIMIT = 200
"""The most claims an operation may carry (``reverie.models.plan``)."""


def is_human_edit(ep: Episode) -> bool:
    """True for an episode that records an edit (a person's, or an agent's note): never an
    outcome, never a tally."""
    return ep.records_edit


def pinned_claims(revision: Revision) -> tuple[Claim, ...]:
    return tuple(c for c in revision.claims if c.pinned)


def has_pins(page: Page) -> bool:
    """Whether a person has set anything on the page's current revision."""
    return bool(page.revision.pins or pinned_claims(page.revision))


def pin_all(claims: Iterable[Claim]) -> tuple[Claim, ...]:
    """``claims`` as a person's: each pinned (a restore chooses every claim it brings back)."""
    return tuple(c if c.pinned else c.model_copy(update={"pinned": True}) for c in claims)


def unpinned(claims: Iterable[Claim]) -> tuple[Claim, ...]:
    """``claims`` as a machine's: no pinned flag."""
    return tuple(c.model_copy(update={"pinned": False}) if c.pinned else c for c in claims)


def claim_key(text: str) -> str:
    """A claim's text with case and spacing aside: two claims with one key say the same."""
    return " ".join(text.split()).casefold()


def _claims(pinned: Sequence[Claim], proposed: Sequence[Claim]) -> tuple[Claim, ...]:
    taken = {claim_key(c.text) for c in pinned}
    machine = [c for c in unpinned(proposed) if claim_key(c.text) not in taken]
    room = max(0, CLAIM_LIMIT - len(pinned))
    return (*pinned, *machine[:room])


def _pinned_of(op: RevisePage | MergePages, pages: Mapping[str, Page]) -> tuple[Claim, ...]:
    shown = [op.page_id, *(op.sources if isinstance(op, MergePages) else ())]
    found: dict[str, Claim] = {}
    for page_id in shown:
        page = pages.get(page_id)
        for claim in pinned_claims(page.revision) if page is not None else ():
            found.setdefault(claim_key(claim.text), claim)
    return tuple(found.values())


def _keep(op: Operation, pages: Mapping[str, Page]) -> Operation:
    if isinstance(op, CreatePage):
        return op.model_copy(update={"claims": unpinned(op.claims), "pins": ()})
    if not isinstance(op, RevisePage | MergePages):
        return op  # supersede or retire: a decision about contradicting evidence
    target = pages.get(op.page_id)
    pins = tuple(sorted(set(target.revision.pins) & set(PINNABLE))) if target else ()
    update: dict[str, object] = {"claims": _claims(_pinned_of(op, pages), op.claims)}
    update["pins"] = pins
    if target is not None and "title" in pins:
        update["title"] = target.revision.title
    if target is not None and "kind" in pins:
        update["kind"] = target.revision.kind
    return op.model_copy(update=update)


def keep_pins(plan: Plan, pages: Mapping[str, Page]) -> Plan:
    """``plan`` with every person's pin on the ``pages`` it touches kept (module docstring).

    Pure; ``pages`` are the pages shown to the distiller, by id. A plan that touches no pinned
    page and sets no pins of its own is returned unchanged (the same object)."""
    kept = tuple(_keep(op, pages) for op in plan.operations)
    if kept == plan.operations:
        return plan
    return plan.model_copy(update={"operations": kept})
