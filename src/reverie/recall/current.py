"""Only current values reach a section (DESIGN invariant 6; docs/dreaming.md, "Recall").

Recall's units may state a value that newer evidence replaced: an older episode, a stray later
failure that still used the old value, a dialogue line said before a move. :func:`newest_values`
leaves them out, judged by the units' own times against what the candidates say and what the
brain's pages record as replaced (:func:`replaced_values`, which reads the superseded pages that
name a unit's values, so it holds when the question never reaches the page that replaced them).
With ``as_of``, "now" is that moment: what was replaced later still answers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime

from reverie.models import Page, RecallItem, Scope, utc
from reverie.recall.units import is_current
from reverie.store.base import BrainStore, Store
from reverie.text.slots import SlotValue, slot_of

__all__ = ["REPLACED_PAGES", "newest_values", "replaced_values"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_DATED = re.compile(
    r"\b(?:19|20)\d\d\b"
    r"|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2}\b"
    r"|\b\d{1,2}\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b",
    re.IGNORECASE,
)
_CLAUSE = re.compile(r"(?<=[.;!?])\s+|\n")


def newest_values(
    units: Sequence[RecallItem],
    pages: Iterable[Page] = (),
    replaced: Mapping[str, datetime] | None = None,
) -> list[RecallItem]:
    """Only current values reach a section (docs/dreaming.md, "Recall"):

    * a unit stating a value of a sentence some newer unit states with another value ("the
      index is X", later "the index is Y"; :func:`reverie.text.slots.slot_of`, sentence by
      sentence, one sentence's slot inside another's counting as the same) is left out;
    * so is a unit naming a value that is no longer current — one a candidate page's lesson
      replaced (``PageSupport.superseded``) or one left out by the rule above — when it is older
      than the change, or is a failure that used the old value (a stray later mention, not an
      assertion that it is current again); ``replaced`` names more such values, with when
      they stopped holding (:func:`replaced_values`: pages no candidate needs to be).

    A unit's time is its ``created_at`` (an episode's, or a claim's last evidence)."""
    stated = [(u, _time(u), _slot_values(u.text)) for u in units]
    said = [(when, value) for _u, when, values in stated for value in values]
    gone = _superseded(pages)
    for value, since in (replaced or {}).items():
        gone[value] = max(gone.get(value, since), since)
    kept = []
    for unit, when, values in stated:
        newer = [_newer(v, when, said) for v in values]
        if not any(newer):
            kept.append(unit)
        for old, new in zip(values, newer, strict=True):
            if new is not None:
                for token in set(old.value.split()) - set(new[1].value.split()):
                    gone[token.casefold()] = max(gone.get(token.casefold(), new[0]), new[0])
    return _without_names(kept, gone)


REPLACED_PAGES = 20
"""How many superseded pages :func:`replaced_values` reads for one recall."""
_VALUE_WORD = re.compile(r"[^\W_]{2,}")


def replaced_values(
    store: Store, scope: Scope, units: Sequence[RecallItem], now: datetime
) -> dict[str, datetime]:
    """The values the units name that a change of value replaced by ``now``, with when: read
    from the superseded pages stating them (whether or not the question found the page that
    replaced them). A page superseded by a value change names a value its successor does not
    hold (a fact run's successor lists them in ``PageSupport.superseded``, a page about a value
    states the newer value of the same sentence); one merged into a page that says the same
    (a merge, an absorbed run) replaces nothing."""
    said = [slot_of(sentence) for u in units for sentence in _CLAUSE.split(u.text)]
    values = {v for s in said if s is not None for v in s.value.split()}
    words = sorted({w for v in values for w in _VALUE_WORD.findall(v.casefold())})
    if not words:
        return {}
    hits = store.search_pages(scope, words[:60], REPLACED_PAGES, ("superseded",))
    old = [p for p, _ in hits if p.revision.superseded_by and _ended(p, now)]
    successors = _successors(store, scope, old, now)
    gone: dict[str, datetime] = {}
    for page in old:
        new = successors.get(page.id)
        if new is None:
            continue
        for value, since in _superseded([new]).items():
            if since <= now:
                gone[value] = max(gone.get(value, since), since)
        since = utc(page.revision.valid_until or now)
        for token in _changed(page, new):
            gone[token] = max(gone.get(token, since), since)
    return gone


def _successors(
    store: Store, scope: Scope, old: Sequence[Page], now: datetime, hops: int = 4
) -> dict[str, Page]:
    """Per superseded page, the page that holds its slot at ``now``: its successor, or that
    one's, along ``superseded_by`` (a value changed more than once)."""
    out: dict[str, Page] = {}
    if not isinstance(store, BrainStore):
        return out
    at = {p.id: p for p in old}
    for _ in range(hops):
        wanted = {p.revision.superseded_by or "" for p in at.values()}
        found = store.pages_by_id(scope, wanted)
        moved = {}
        for pid, page in at.items():
            new = found.get(page.revision.superseded_by or "")
            ended = new is not None and new.revision.valid_until is not None
            if new is not None and is_current(new, now) and (new.status == "active" or ended):
                out[pid] = new
            elif new is not None and new.revision.superseded_by:
                moved[pid] = new
        at = moved
    return out


def _ended(page: Page, now: datetime) -> bool:
    until = page.revision.valid_until
    return until is not None and utc(until) <= now


def _changed(old: Page, new: Page) -> set[str]:
    """The value tokens ``old``'s claims state where ``new`` states the same sentence with
    another value (facts' own claims aside: their runs list what they replaced)."""
    said = [v for c in new.revision.claims if c.role != "fact" for v in _slot_values(c.text)]
    out: set[str] = set()
    for claim in old.revision.claims:
        if claim.role == "fact":
            continue
        for value in _slot_values(claim.text):
            for held in said:
                if held.value_key != value.value_key and _same_slot(held.key, value.key):
                    out |= {
                        t.casefold() for t in set(value.value.split()) - set(held.value.split())
                    }
    return out


def _superseded(pages: Iterable[Page]) -> dict[str, datetime]:
    gone: dict[str, datetime] = {}
    for page in pages:
        if (support := page.revision.support) is not None:
            for value, since in support.superseded.items():
                key = value.casefold()
                gone[key] = max(gone.get(key, utc(since)), utc(since))
    return gone


def _newer(
    value: SlotValue, when: datetime, said: Sequence[tuple[datetime, SlotValue]]
) -> tuple[datetime, SlotValue] | None:
    """The newest statement of the same slot holding another value, if newer than ``when``."""
    best: tuple[datetime, SlotValue] | None = None
    for other, held in said:
        later = other > when and (best is None or other > best[0])
        if later and held.value_key != value.value_key and _same_slot(held.key, value.key):
            best = (other, held)
    return best


def _same_slot(a: str, b: str) -> bool:
    return a == b or _inside(a, b) or _inside(b, a)


def _inside(short: str, long: str) -> bool:
    """Whether slot key ``short`` is a run of whole words of ``long`` with a value in it."""
    return "<v>" in short and len(short) < len(long) and f" {short} " in f" {long} "


def _slot_values(text: str) -> list[SlotValue]:
    """The value statements of ``text``, sentence by sentence; a dated sentence tells of an
    event ("went hiking on 7 May 2023"), which a later one does not make stale."""
    out = []
    for sentence in _CLAUSE.split(text):
        if _DATED.search(sentence):
            continue
        if (value := slot_of(sentence)) is not None:
            out.append(value)
    return out


def _without_names(units: Sequence[RecallItem], gone: Mapping[str, datetime]) -> list[RecallItem]:
    if not gone:
        return list(units)
    alternatives = "|".join(re.escape(v) for v in sorted(gone, key=len, reverse=True))
    pattern = re.compile(rf"(?<![\w.#@-])(?:{alternatives})(?![\w-])", re.IGNORECASE)
    out = []
    for unit in units:
        named = {m.group(0).casefold() for m in pattern.finditer(unit.text)}
        if not named or not (_failure(unit) or any(_time(unit) < gone[v] for v in named)):
            out.append(unit)
    return out


def _failure(unit: RecallItem) -> bool:
    if unit.kind == "episode":
        return unit.status in ("failure", "timeout", "partial")
    return unit.role == "anecdote"


def _time(unit: RecallItem) -> datetime:
    return utc(unit.created_at) if unit.created_at else _EPOCH
