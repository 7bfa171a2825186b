"""What a page answers with, and when it answers: ranked by what the page says.

A problem's page answers with its lead claims (its lessons, fixes and warnings, and values);
the question reaches them three ways besides their own words:

- **Through its evidence** (:func:`lessons_behind`). An episode that matches the question is
  the situation; the page citing it may hold the lesson, worded otherwise. Only a page whose
  own words (its title and recallable claims, :func:`said`) share with the question as many
  terms as a claim found by full text must (:meth:`QueryTerms.mentions`) answers this way. Its
  lead claims are scored by how much of the question those words hold; the best evidence
  behind them adds at most :data:`EVIDENCE_SHARE`. So a paraphrase of the problem reaches its
  page, a page matching the question by its words outranks one matching it by its evidence,
  and a page whose words do not speak of the question (boilerplate that cites episodes of
  every problem) gets nothing from its evidence, however well that matches.
- **Through the words its value was stated in** (:func:`values_behind`). A page about a value
  takes as its own the words of the episodes stating its value or one it replaced: "clients"
  in its claim and "connected" in an older statement answer "which address do clients
  connect to?" together. Where many episodes state a value, only the statements naming it
  lend their words (:func:`stating_words`): a status printed after every kind of work is no
  answer to the work.
- **Through its matching lines** (:func:`leads_lifted`). When a line of a page matches the
  question (one failure as it happened, say), what the page teaches about that problem is the
  answer: each teaching claim of the page is worth at least that line (times its own role's
  weight), so the lesson is never ranked under its own anecdote.

**Only current values** (:func:`newest_values`, DESIGN invariant 6). Recall's units may state
a value that newer evidence replaced: an older episode, a stray later failure that still used
the old value, a dialogue line said before a move. They are left out, judged by the units' own
times against what the candidates say and what the brain's pages record as replaced
(:func:`replaced_values` reads the superseded pages that name a unit's values, so this holds
when the question never reaches the page that replaced them).
With ``as_of``, "now" is that moment: what was replaced later still answers.

**A speaker's newest statement** (:func:`current_statements`) of a one-value attribute answers
for every older one, found or not (its own section below).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from typing import TYPE_CHECKING

from reverie.models import (
    ACTIONABLE_ROLES,
    TEACHING_ROLES,
    Claim,
    Episode,
    Page,
    RecallItem,
    Scope,
    recall_weight,
    utc,
)
from reverie.recall.passing import Kin, nearest_kind, passing_names
from reverie.recall.query import stems
from reverie.recall.units import (
    PAGE_PREFERENCE,
    QueryTerms,
    claim_cites,
    claim_item,
    episode_item,
    is_current,
    is_recallable,
)
from reverie.store.base import BrainStore, Store
from reverie.text.assertions import Assertion, assertions
from reverie.text.slots import SlotValue, slot_of
from reverie.text.stated import Stated, durable_statements
from reverie.text.turns import speaker_of

if TYPE_CHECKING:
    from reverie.recall.trace import RecallTrace

__all__ = [
    "EVIDENCE_SHARE",
    "LEAD_CLAIMS",
    "REPLACED_PAGES",
    "STATED_WINDOW",
    "Replaced",
    "changed_values",
    "current_statements",
    "lead_claims",
    "leads_lifted",
    "lessons_behind",
    "newest_values",
    "replaced_values",
    "said",
    "states_value",
    "values_behind",
]

EVIDENCE_SHARE = 0.2
"""Share of a page claim's relevance, reached through a matching episode it cites, that the
episode gives; the rest is what the claim and its page's words hold of the question."""
LEAD_CLAIMS = 2
"""Lead claims of a page reached through its evidence."""


def lead_claims(page: Page) -> list[Claim]:
    """What a page answers with: its actionable claims (lessons, fixes, warnings, facts) up to
    :data:`LEAD_CLAIMS`; none for a page of plain statements (a dialogue's), whose lines
    recall finds one by one."""
    return [c for c in page.revision.claims if c.role in ACTIONABLE_ROLES][:LEAD_CLAIMS]


def said(page: Page) -> frozenset[str]:
    """The stems of what a page says: its title and every claim recall may show."""
    words = stems(page.title)
    for claim in page.revision.claims:
        if is_recallable(claim):
            words |= stems(claim.text)
    return words


def lessons_behind(
    store: BrainStore,
    scope: Scope,
    episodes: Sequence[RecallItem],
    have: Sequence[RecallItem],
    now: datetime,
    query: QueryTerms,
    trace: RecallTrace | None = None,
) -> tuple[list[RecallItem], dict[str, Page]]:
    """The lead claims of the pages citing the matching ``episodes`` (module docstring), but
    those already among ``have``; and the pages read."""
    if not episodes:
        return [], {}
    citing = store.pages_citing(scope, [u.id for u in episodes])
    best: dict[str, float] = {}
    for unit in episodes:
        for page_id in citing.get(unit.id, ()):
            best[page_id] = max(best.get(page_id, 0.0), unit.score)
    pages = store.pages_by_id(scope, best)
    stated = _stated(episodes, citing, pages, query)
    shown = {(u.id, u.text) for u in have if u.kind != "episode"}
    out: list[RecallItem] = []
    for page_id, score in sorted(best.items()):
        page = pages.get(page_id)
        if page is None or not is_current(page, now):
            continue
        claims = [c for c in lead_claims(page) if (page_id, c.text) not in shown]
        out += _through_evidence(page, claims, score, query, trace, stated.get(page_id))
    return out, pages


def values_behind(  # noqa: PLR0913 (the search state it reads, as lessons_behind)
    store: BrainStore,
    scope: Scope,
    hits: Sequence[tuple[Episode, float]],
    candidates: Iterable[Page],
    have: Sequence[RecallItem],
    now: datetime,
    query: QueryTerms,
    trace: RecallTrace | None = None,
) -> tuple[list[RecallItem], dict[str, Page]]:
    """The lead claims of the current pages about a value, reached through the words their
    slot was stated in: every matching episode (``hits``, whatever its own share of the
    question) that states the page's value (:func:`states_value`) or a value it replaced
    (:func:`replaced_values`) speaks of the same attribute, and so do the statements a
    candidate fact page cites (:func:`_statements_of`); their words join the page's own
    (:func:`said`). "Clients bootstrap from X" and "enricher connected to W" (an older value)
    together answer "Which address do clients connect to?". A page answers when those words
    hold the question as a unit found by full text must (:meth:`QueryTerms.passes`)."""
    hits = [*hits, *_statements_of(store, scope, candidates, {e.id for e, _ in hits}, now)]
    if not hits:
        return [], {}
    items = [episode_item(ep, ep.text, bm25) for ep, bm25 in hits]
    replaced = replaced_values(store, scope, items, now)
    citing = store.pages_citing(scope, [u.id for u in items])
    pages = store.pages_by_id(scope, {p for ids in citing.values() for p in ids})
    words: dict[str, frozenset[str]] = {}
    found: dict[str, tuple[Page, float]] = {}
    best = max((u.score for u in items), default=0.0) or 1.0
    for unit in items:
        cited = [pages[p] for p in citing.get(unit.id, ()) if p in pages]
        owners = [(p, value_of(p)) for p in cited if states_value(p, unit)]
        owners += [(p, token) for token, p in replaced.holders.items() if _names(unit.text, token)]
        for page, value in owners:
            if not is_current(page, now):
                continue
            words[page.id] = words.get(page.id, said(page)) | stating_words(unit.text, value)
            score = max(found.get(page.id, (page, 0.0))[1], unit.score / best)
            found[page.id] = (page, score)
    shown = {(u.id, u.text) for u in have if u.kind != "episode"}
    need = query.need.of(dialogue=False)  # words of evidence: a stranger needs one more
    out: list[RecallItem] = []
    for page_id, (page, evidence) in sorted(found.items()):
        share = query.share(words[page_id])
        if not query.passes(share, words[page_id], need):
            continue
        claims = [c for c in lead_claims(page) if (page_id, c.text) not in shown]
        out += _through_evidence(page, claims, evidence, query, trace, share)
    return out, {p.id: p for p, _ in found.values()}


STATEMENTS = 8
"""The newest statements of a candidate fact page that :func:`values_behind` reads."""


def _statements_of(
    store: Store, scope: Scope, pages: Iterable[Page], known: set[str], now: datetime
) -> list[tuple[Episode, float]]:
    """The episodes the fact claim of each current candidate page cites (its newest
    :data:`STATEMENTS`), but those in ``known``: the words its value was stated in."""
    wanted: set[str] = set()
    for page in pages:
        leads = lead_claims(page)
        if leads and leads[0].role == "fact" and is_current(page, now):
            wanted.update(leads[0].episode_ids[-STATEMENTS:])
    wanted -= known
    if not wanted:
        return []
    return [(ep, 0.0) for ep in store.episodes(wanted, tenant=scope.tenant)]


def _stated(
    episodes: Sequence[RecallItem],
    citing: Mapping[str, Sequence[str]],
    pages: Mapping[str, Page],
    query: QueryTerms,
) -> dict[str, float]:
    """Per page about a value, the best share of the question held by a matching episode that
    states the page's value (:func:`states_value`): such an episode is the page's statement
    in the words it was made in, so the words it states the value in count as the page's own
    (:func:`stating_words`)."""
    out: dict[str, float] = {}
    for unit in episodes:
        for page_id in citing.get(unit.id, ()):
            page = pages.get(page_id)
            if page is not None and states_value(page, unit):
                share = query.share(stating_words(unit.text, value_of(page)))
                out[page_id] = max(out.get(page_id, 0.0), share)
    return out


_PART = re.compile(r"(?<=[.;!?])\s+|\n| [—–] ")
"""Where one statement of an episode's text ends: a sentence, a line, a field of its excerpt."""


def value_of(page: Page) -> str | None:
    """The value a page is about where many episodes state it (more than :data:`FEW_STATED`):
    its fact's (from its topic key), or its lead claim's value statement's
    (:func:`reverie.text.slots.slot_of`); None for a page about none, or stated by few."""
    leads = lead_claims(page)
    if not leads or len(leads[0].episode_ids) <= FEW_STATED:
        return None
    if leads[0].role == "fact":
        parts = page.topic_key.split("|")
        return parts[3] if len(parts) > 3 and parts[3] else None
    value = _slot(leads[0].text, 1)
    return value.value if value is not None else None


FEW_STATED = 3
"""A value stated by at most this many episodes lends each one's whole text: so few cannot be
a status printed after every kind of work (the same bound the cycle's boilerplate statistic
has: the spread of three episodes is at most three, :mod:`reverie.dream.boilerplate`)."""


def stating_words(text: str, value: str | None) -> frozenset[str]:
    """The stems of the statements of ``text`` (sentences, lines, excerpt fields) that name
    ``value``: the words a value was stated in (all of ``text`` for no value). The rest of
    an episode is its own task: a status printed on every step ("run state: closed") is
    stated beside a story push, a photo import and a hundred other tasks, whose words say
    nothing of it."""
    if value is None:
        return stems(text)
    tokens = [t for t in _VALUE_WORD.findall(value.casefold()) if len(t) > 2] or [value.casefold()]
    near = [part for part in _PART.split(text) if any(t in part.casefold() for t in tokens)]
    return stems(" ".join(near))


def states_value(page: Page, unit: RecallItem) -> bool:
    """Whether the episode ``unit`` states the value ``page`` is about: it is one of the
    assertions of the page's fact claim, or names every value of the page's lead claim (a
    value statement, :func:`reverie.text.slots.slot_of`, one content word enough)."""
    leads = lead_claims(page)
    if not leads:
        return False
    if leads[0].role == "fact":
        return unit.id in claim_cites(leads[0])
    value = _slot(leads[0].text, 1)
    return value is not None and all(_names(unit.text, v) for v in value.value.split())


def _names(text: str, value: str) -> bool:
    core = value.strip(".,;:!?()\"'`")
    pattern = rf"(?<![\w.-]){re.escape(core)}(?![\w-])"
    return bool(core) and re.search(pattern, text, re.IGNORECASE) is not None


def _through_evidence(
    page: Page,
    claims: Sequence[Claim],
    evidence: float,
    query: QueryTerms,
    trace: RecallTrace | None,
    stated: float | None = None,
) -> list[RecallItem]:
    """The units of a page's lead ``claims`` reached through a matching episode of relevance
    ``evidence``: each worth ``PAGE_PREFERENCE * role weight * ((1 - EVIDENCE_SHARE) *
    coverage + EVIDENCE_SHARE * evidence)``, its coverage the mean of what the claim with its
    title and what the whole page holds of the question, or ``stated`` where more (what a
    matching episode stating the page's value holds, :func:`_stated`); none when neither the
    page's words nor such an episode speak of the question."""
    words = said(page)
    page_cov = query.share(words)
    passes = bool(stated) or query.mentions(words, query.need.of(dialogue=False))
    out = []
    for claim in claims:
        cov = (query.share(stems(page.title) | stems(claim.text)) + page_cov) / 2
        cov = max(cov, stated or 0.0)
        weight = recall_weight(claim.role, claim.support)
        relevance = (1 - EVIDENCE_SHARE) * cov + EVIDENCE_SHARE * min(evidence, 1.0)
        unit = claim_item(page, claim, PAGE_PREFERENCE * weight * relevance)
        if trace is not None:
            signals = {"evidence_score": evidence, "coverage": cov, "page_coverage": page_cov}
            trace.found(unit, "through evidence", role_weight=weight, **signals)
            if not passes:
                trace.cut(unit, "its page's own words do not match the question (evidence alone)")
        if passes:
            out.append(unit)
    return out


def leads_lifted(
    units: Sequence[RecallItem], pages: Mapping[str, Page], trace: RecallTrace | None = None
) -> list[RecallItem]:
    """``units`` with each teaching claim of a page that has a unit worth at least that page's
    best unit, times the claim's own role weight: raised in place where it is a unit already,
    added where it is not."""
    best: dict[str, float] = {}
    for unit in units:
        if unit.kind == "page" and unit.id in pages:
            best[unit.id] = max(best.get(unit.id, 0.0), unit.score)
    held = {(u.id, u.text): u for u in units if u.kind == "page"}
    out = list(units)
    for page_id, score in sorted(best.items()):
        page = pages[page_id]
        for claim in page.revision.claims:
            if claim.role not in TEACHING_ROLES or score <= 0:
                continue
            value = score * recall_weight(claim.role, claim.support)
            have = held.get((page_id, claim.text))
            if have is None:
                added = claim_item(page, claim, value)
                out.append(added)
                if trace is not None:
                    trace.found(added, "its page's lesson", page_best=score)
            elif have.score < value:
                have.score = value
                if trace is not None:
                    trace.signal(have, page_best=score)
    return out


# -- only current values ------------------------------------------------------------------------

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_DATED = re.compile(
    r"\b(?:19|20)\d\d\b"
    r"|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2}\b"
    r"|\b\d{1,2}\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b",
    re.IGNORECASE,
)
_CLAUSE = re.compile(r"(?<=[.;!?])\s+|\n")


@dataclass(frozen=True)
class Replaced:
    """Values a change of value replaced (casefolded), with when each stopped holding, and,
    where known, the page that holds that value's slot now."""

    since: dict[str, datetime] = field(default_factory=dict)
    holders: dict[str, Page] = field(default_factory=dict)


def newest_values(
    units: Sequence[RecallItem],
    pages: Iterable[Page] = (),
    replaced: Replaced | None = None,
    trace: RecallTrace | None = None,
) -> list[RecallItem]:
    """Only current values reach a section (docs/dreaming.md, "Recall"):

    * a unit stating a value of a sentence some newer unit states with another value ("the
      index is X", later "the index is Y"; :func:`reverie.text.slots.slot_of`, sentence by
      sentence, one sentence's slot inside another's counting as the same) is left out; a
      failure is never the newer side (the value it tried is a mention: a stray call of the
      old value after a change does not make the current one stale);
    * so is a unit naming a value that is no longer current — one a candidate page's lesson
      replaced (``PageSupport.superseded``) or one left out by the rule above — when it is older
      than the change, or is a failure that used the old value (a stray later mention, not an
      assertion that it is current again); ``replaced`` names more such values, with when
      they stopped holding (:func:`replaced_values`: pages no candidate needs to be);
    * in place of a unit left out for naming a replaced value, the lead claims of the page
      that holds the value's slot now answer, worth what that unit was worth: a question that
      found the old value (a stray failure that still used it) asks for the current one.

    A unit's time is its ``created_at`` (an episode's, or a claim's last evidence); at one time
    an episode is the newer side of a claim, as a claim is never newer than its newest evidence
    (a claim worded with an old value, dated by an episode stating the new one, is stale)."""
    stated = [(u, (_time(u), u.kind == "episode"), _slot_values(u.text)) for u in units]
    said = [(when, value) for u, when, values in stated if not _failure(u) for value in values]
    gone, holders = _superseded(pages), _holders(pages)
    if replaced is not None:
        for value, since in replaced.since.items():
            gone[value] = max(gone.get(value, since), since)
        holders = replaced.holders | holders
    kept = []
    for unit, when, values in stated:
        newer = [_newer(v, when, said) for v in values]
        if not any(newer):
            kept.append(unit)
        for old, new in zip(values, newer, strict=True):
            if new is not None:
                since = new[0][0]
                for token in set(old.value.split()) - set(new[1].value.split()):
                    gone[token.casefold()] = max(gone.get(token.casefold(), since), since)
    kept, left_out = _without_names(kept, gone)
    return _in_place(kept, left_out, holders, gone, trace)


def _in_place(
    kept: list[RecallItem],
    left_out: Sequence[tuple[RecallItem, set[str]]],
    holders: Mapping[str, Page],
    gone: Mapping[str, datetime],
    trace: RecallTrace | None,
) -> list[RecallItem]:
    """``kept`` with, for each unit ``left_out`` for the replaced values it names, the lead
    claims of the pages holding those values' slots now (none naming a replaced value), at
    least as much as that unit was worth."""
    held = {(u.id, u.text): u for u in kept if u.kind == "page"}
    for unit, named in left_out:
        for page in {holders[v].id: holders[v] for v in sorted(named) if v in holders}.values():
            for claim in lead_claims(page):
                if _without_names([claim_item(page, claim, 0.0)], gone)[1]:
                    continue
                have = held.get((page.id, claim.text))
                if have is None:
                    have = held[(page.id, claim.text)] = claim_item(page, claim, unit.score)
                    kept.append(have)
                    if trace is not None:
                        trace.found(have, "the current value of a replaced one it found",
                                    replaced_score=unit.score)  # fmt: skip
                elif have.score < unit.score:
                    have.score = unit.score
                    if trace is not None:
                        trace.signal(have, replaced_score=unit.score)
    return kept


REPLACED_PAGES = 20
"""How many superseded pages :func:`replaced_values` reads for one recall."""
_VALUE_WORD = re.compile(r"[^\W_]{2,}")


def replaced_values(
    store: BrainStore, scope: Scope, units: Sequence[RecallItem], now: datetime
) -> Replaced:
    """The values the units name that a change of value replaced by ``now``, with when and the
    page holding each one's slot now: read from the superseded pages stating them (whether or
    not the question found the page that replaced them). A page superseded by a value change
    names a value its successor does not hold (a fact run's successor lists them in
    ``PageSupport.superseded``, a page about a value states the newer value of the same
    sentence); one merged into a page that says the same (a merge, an absorbed run) replaces
    nothing."""
    words = sorted({w for u in units for w in _value_words(u.text)})
    out = Replaced()
    if not words:
        return out
    hits = store.search_pages(scope, words[:60], REPLACED_PAGES, ("superseded",))
    old = [p for p, _ in hits if p.revision.superseded_by and _ended(p, now)]
    successors = _successors(store, scope, old, now)
    for page in old:
        new = successors.get(page.id)
        if new is None:
            continue
        changed = {v: s for v, s in _superseded([new]).items() if s <= now}
        since = utc(page.revision.valid_until or now)
        changed |= {token: since for token in changed_values(page, new)}
        for token, when in changed.items():
            out.since[token] = max(out.since.get(token, when), when)
            out.holders.setdefault(token, new)
    return out


def _successors(
    store: BrainStore, scope: Scope, old: Sequence[Page], now: datetime, hops: int = 4
) -> dict[str, Page]:
    """Per superseded page, the page that holds its slot at ``now``: its successor, or that
    one's, along ``superseded_by`` (a value changed more than once)."""
    out: dict[str, Page] = {}
    at = {p.id: p for p in old}
    for _ in range(hops):
        if not at:
            break
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


_TALLY = re.compile(
    r"\s*\((?:\d+ of \d+ times since|\d+ times, last|\d+×,|once,)[^)]*\)"
    r"|\bAlso observed in \d+ other episodes? \([^)]*\)"
)
"""A claim's count of its own support: bookkeeping of the page, no value it states."""


STATING_ROLES = frozenset({None, "lesson", "warning", "also"})
"""The claims that state something in their own words. A fix, a procedure or an anecdote
quotes the calls of its newest case, and an evidence line counts: a revision changes those
with its cases, which changes no value."""


def _untallied(claims: Sequence[Claim]) -> list[str]:
    """What the stating ``claims`` say (:data:`STATING_ROLES`), their tallies out."""
    return [_TALLY.sub("", c.text) for c in claims if c.role in STATING_ROLES]


def changed_values(old: Page, new: Page) -> set[str]:
    """The value tokens ``old``'s stating claims say where ``new`` says the same sentence with
    another value; a tally that grew ("(2 times, …)" to "(5 times, …)") is no value, and a
    fact's own claim is left to its run (it lists what it replaced)."""
    said = [v for text in _untallied(new.revision.claims) for v in _slot_values(text, 1)]
    out: set[str] = set()
    for text in _untallied(old.revision.claims):
        for value in _slot_values(text, 1):
            for held in said:
                if held.value_key != value.value_key and _same_slot(held.key, value.key):
                    out |= {
                        t.casefold() for t in set(value.value.split()) - set(held.value.split())
                    }
    return out


def _holders(pages: Iterable[Page]) -> dict[str, Page]:
    """Per value a candidate page lists as replaced (``PageSupport.superseded``): that page."""
    return {
        value.casefold(): page
        for page in pages
        if (support := page.revision.support) is not None
        for value in support.superseded
    }


def _superseded(pages: Iterable[Page]) -> dict[str, datetime]:
    gone: dict[str, datetime] = {}
    for page in pages:
        if (support := page.revision.support) is not None:
            for value, since in support.superseded.items():
                key = value.casefold()
                gone[key] = max(gone.get(key, utc(since)), utc(since))
    return gone


_Stamp = tuple[datetime, bool]
"""When a unit was said, and whether it is an episode (the newer side at one time)."""


def _newer(
    value: SlotValue, when: _Stamp, said: Sequence[tuple[_Stamp, SlotValue]]
) -> tuple[_Stamp, SlotValue] | None:
    """The newest statement of the same slot holding another value, if newer than ``when``."""
    best: tuple[_Stamp, SlotValue] | None = None
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


@lru_cache(maxsize=16384)
def _slot(sentence: str, least: int) -> SlotValue | None:
    """:func:`~reverie.text.slots.slot_of`, remembered: a page's claims and the episodes of a
    topic are read as value statements by every recall that reaches them, and a text's
    statements never change."""
    return slot_of(sentence, least)


@lru_cache(maxsize=8192)
def _value_words(text: str) -> frozenset[str]:
    """The words (casefolded) of every value ``text`` states, sentence by sentence, one content
    word enough (:func:`replaced_values` searches for them)."""
    said = [_slot(sentence, 1) for sentence in _CLAUSE.split(text)]
    values = {v for s in said if s is not None for v in s.value.split()}
    return frozenset(w for v in values for w in _VALUE_WORD.findall(v.casefold()))


@lru_cache(maxsize=8192)
def _slot_values(text: str, least: int = 2) -> tuple[SlotValue, ...]:
    """The value statements of ``text``, sentence by sentence; a dated sentence tells of an
    event ("went hiking on 7 May 2023"), which a later one does not make stale."""
    return tuple(
        value
        for sentence in _CLAUSE.split(text)
        if not _DATED.search(sentence) and (value := _slot(sentence, least)) is not None
    )


def _without_names(
    units: Sequence[RecallItem], gone: Mapping[str, datetime]
) -> tuple[list[RecallItem], list[tuple[RecallItem, set[str]]]]:
    """``units`` but those naming a replaced value (:func:`newest_values`), and those, each
    with the replaced values it names."""
    names = [v for v in gone if not _COUNT.fullmatch(v)]
    if not names:
        return list(units), []
    alternatives = "|".join(re.escape(v) for v in sorted(names, key=len, reverse=True))
    pattern = re.compile(rf"(?<![\w.#@-])(?:{alternatives})(?![\w-])", re.IGNORECASE)
    out, left_out = [], []
    for unit in units:
        named = {m.group(0).casefold() for m in pattern.finditer(unit.text)}
        if not named or not (_failure(unit) or any(_time(unit) < gone[v] for v in named)):
            out.append(unit)
        else:
            left_out.append((unit, named))
    return out, left_out


_COUNT = re.compile(r"\d{1,2}")
"""A replaced value token that names nothing by itself: one or two digits (a part of ``05:30
UTC``, a tally's count), which any line may hold."""


def _failure(unit: RecallItem) -> bool:
    if unit.kind == "episode":
        return unit.status in ("failure", "timeout", "partial")
    return unit.role == "anecdote"


def _time(unit: RecallItem) -> datetime:
    return utc(unit.created_at) if unit.created_at else _EPOCH


# -- a speaker's newest statement of a one-value attribute ----------------------------------
#
# A speaker's newest statement of a one-value attribute answers for every older one.
#
# What a person states about a relation that holds one value at a time (where they live, where
# they work, how replies are worded, a thing's name: :class:`reverie.text.assertions.Assertion`
# with ``single``) is superseded by their later statement of it, whether or not the question
# reaches that later statement: "Who is Aisha's employer?" may match "I work at Cyberdyne as a
# data engineer" closely and "I just started a new job at Hooli!" not at all. So, after ranking:
#
# * a unit (an episode excerpt, or a page claim through the episodes it cites) whose sentence
#   states such an attribute is **stale** when the scope holds a newer statement of the same
#   slot with another value, made by ``now`` (``as_of``: what was newest then);
# * a stale unit is left out, and the newest statement takes its place at its score (an episode
#   excerpt of the sentence that said it), unless a unit already shows it.
#
# The newer statements are looked for among the scope's newest :data:`STATED_WINDOW` episodes:
# a statement older than that reaches recall through the fact page a cycle made of it, whose
# supersession the cycle decides (:mod:`reverie.dream.facts`). Pure reading, no store writes;
# a unit stating nothing single-valued costs one parse of its text.

STATED_WINDOW = 500
"""Newest episodes of a scope read for the later statements of an attribute."""


@dataclass(frozen=True)
class _Said:
    slot: str
    value: str
    sentence: str
    episode: Episode
    shown: str = ""
    """The value as it was said (``value`` is its comparison key)."""

    @property
    def when(self) -> datetime:
        return utc(self.episode.created_at)


def current_statements(
    store: BrainStore,
    scope: Scope,
    units: Sequence[RecallItem],
    now: datetime,
    trace: RecallTrace | None = None,
    kin: Kin | None = None,
) -> list[RecallItem]:
    """``units`` with every stale statement replaced by the newest one (see the comment above);
    with ``kin``, every unit naming in passing a value of a kind some newer statement replaced
    too (:mod:`reverie.recall.passing`)."""
    names = kin is not None and any(passing_names(u.text) for u in units)
    if not names and not any(_states_one_value(u.text) for u in units):
        return list(units)
    recent = [e for e in store.recent_episodes(scope, STATED_WINDOW) if utc(e.created_at) <= now]
    by_id = {e.id: e for e in recent}
    newest = _newest_by_slot(recent)
    shown = {u.id for u in units if u.kind == "episode"}
    out: list[RecallItem] = []
    for unit in units:
        newer = _replacement(unit, by_id, newest)
        if newer is None and kin is not None:
            newer = _passed(unit, by_id, newest, kin)
        if newer is None:
            out.append(unit)
            continue
        if trace is not None:
            trace.cut(unit, f"a newer statement says otherwise: {newer.sentence}"[:200])
        if newer.episode.id not in shown:
            shown.add(newer.episode.id)
            out.append(episode_item(newer.episode, newer.sentence, unit.score))
            if trace is not None:
                trace.found(out[-1], "the newest statement of what a stale one said")
    return out


def _passed(
    unit: RecallItem, by_id: dict[str, Episode], newest: dict[str, _Said], kin: Kin
) -> _Said | None:
    """The newer statement whose value is of the kind of a name ``unit`` says in passing, by
    the same speaker (:mod:`reverie.recall.passing`), if any."""
    sources = [
        by_id[i] for i in ([unit.id] if unit.kind == "episode" else unit.citations) if i in by_id
    ]
    for ep in sources:
        speaker, said = speaker_of(ep), utc(ep.created_at)
        values = {
            s.slot: s.shown
            for s in newest.values()
            if s.shown and s.when > said and speaker_of(s.episode) == speaker
        }
        for name in passing_names(unit.text):
            slot = nearest_kind(name, values, kin)
            if slot is not None:
                return newest[slot]
    return None


def _states_one_value(text: str) -> bool:
    return any(s.single for s in _statements(text))


@lru_cache(maxsize=8192)
def _statements(text: str) -> tuple[Stated, ...]:
    return tuple(durable_statements(text))


def _said(ep: Episode) -> list[_Said]:
    return [_from(a) for a in _single(ep)]


def _single(ep: Episode) -> list[Assertion]:
    return [a for a in assertions(ep) if a.single and a.said is not None]


def _from(a: Assertion) -> _Said:
    return _Said(a.slot, a.value_key, a.said or "", a.episode, a.value)


def _newest_by_slot(episodes: Sequence[Episode]) -> dict[str, _Said]:
    newest: dict[str, _Said] = {}
    for ep in episodes:
        for said in _said(ep):
            held = newest.get(said.slot)
            if held is None or (said.when, said.episode.seq or 0) > (
                held.when,
                held.episode.seq or 0,
            ):
                newest[said.slot] = said
    return newest


def _replacement(
    unit: RecallItem, by_id: dict[str, Episode], newest: dict[str, _Said]
) -> _Said | None:
    """The newer statement that makes ``unit`` stale, if any: one of the slots its sentence
    states (read from the episodes it is or cites) is newest elsewhere with another value."""
    if not _states_one_value(unit.text):
        return None
    sources = [unit.id] if unit.kind == "episode" else unit.citations
    for ep_id in sources:
        ep = by_id.get(ep_id)
        if ep is None:
            continue
        for said in _said(ep):
            held = newest.get(said.slot)
            stated_here = said.sentence.casefold() in unit.text.casefold()
            newer = held is not None and held.value != said.value and held.when > said.when
            if stated_here and newer:
                return held
    return None
