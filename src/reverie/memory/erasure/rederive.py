"""A page without the evidence an erasure removes: pure functions of revisions (docs/privacy.md).

Every claim cites the episodes it came from, so erasing an episode reaches exactly the claims
that stand on it:

- a claim whose every cited episode is erased goes; one with other support keeps its text and
  loses the citation (its ``support`` count drops by as many, and so does the tally its text
  states of that support: "(6 times, …)" becomes "(5 times, …)", :func:`recount`);
- with a subject (or another erased text) to remove, a claim whose text holds it goes whatever
  its support, and the title, the reason and the tallies' keys are scrubbed of it;
- a page's tallies (``PageSupport``) drop the erased episodes it cited, by outcome and error
  class;
- the hash is recomputed over the new content (``Revision.content``).

A page is then kept (its changed revisions rewritten; a current revision left without a claim
retired) or deleted whole, when no revision keeps a claim: :func:`page_fate`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from reverie.dream.cluster import error_class
from reverie.hashing import content_hash
from reverie.models import Claim, Episode, Outcome, PageStatus, PageSupport, Revision
from reverie.store.sql.erasure.scrub import Needles

__all__ = ["PageFate", "page_fate", "rederive"]


@dataclass(frozen=True)
class PageFate:
    """What an erasure does to one page: ``rewrites`` (new revisions, hash changed) or
    ``drop`` (delete it whole); ``claims_dropped`` across its revisions."""

    rewrites: tuple[tuple[Revision, str], ...]
    drop: bool
    claims_dropped: int


def _claim(claim: Claim, erased: frozenset[str], needles: Needles) -> Claim | None:
    if needles.hit(claim.text):
        return None
    kept = tuple(e for e in claim.episode_ids if e not in erased)
    if not kept:
        return None
    if len(kept) == len(claim.episode_ids):
        return claim
    lost = len(claim.episode_ids) - len(kept)
    support = None if claim.support is None else max(len(kept), claim.support - lost)
    before = claim.support or len(claim.episode_ids)
    text = recount(claim.text, before, support or len(kept))
    return claim.model_copy(update={"episode_ids": kept, "support": support, "text": text})


_TIMES = re.compile(r"\b(?:(\d+) of )?(\d+)(?: times\b|×)")
"""A claim's tally of its own support: "(6 times, last …)", "(5 of 6 times since …)", or a
fact's "(6×, …)"."""


def recount(text: str, before: int, after: int) -> str:
    """``text`` with the tally it states of its own support brought down from ``before`` to
    ``after``: a claim distilled from six episodes says "(6 times, last …)" (a fact: "(6×,
    …)"), or "(5 of 6 times since …)" for a fix that worked five times in six attempts; only
    a count equal to the claim's support is its own, so other numbers in the text stay."""

    def fewer(m: re.Match[str]) -> str:
        if m.group(1) is not None:
            worked, tried = int(m.group(1)), int(m.group(2))
            if worked != before:
                return m.group(0)
            return f"{after} of {max(after, tried - (before - after))} times"
        if int(m.group(2)) != before:
            return m.group(0)
        if after == 1:
            return "once"
        return f"{after}×" if m.group(0).endswith("×") else f"{after} times"

    return _TIMES.sub(fewer, text) if after < before else text


def _support(
    support: PageSupport | None, gone: Sequence[Episode], needles: Needles
) -> PageSupport | None:
    if support is None:
        return None
    outcomes = Counter(ep.outcome for ep in gone)
    errors = Counter(c for ep in gone if (c := error_class(ep.error)))
    classes = {
        name: n - errors[name]
        for name, n in support.error_classes.items()
        if n - errors[name] > 0 and not needles.hit(name)
    }
    return support.model_copy(
        update={
            "episodes": max(0, support.episodes - len(gone)),
            "successes": max(0, support.successes - outcomes[Outcome.SUCCESS]),
            "failures": max(0, support.failures - outcomes[Outcome.FAILURE]),
            "error_classes": classes,
            "superseded": {v: t for v, t in support.superseded.items() if not needles.hit(v)},
        }
    )


def rederive(
    rev: Revision,
    erased: frozenset[str],
    needles: Needles,
    originals: Mapping[str, Episode],
    *,
    retire_if_empty: bool = False,
) -> Revision:
    """``rev`` without the ``erased`` episodes and the ``needles`` (see the module docstring);
    ``originals`` are the erased episodes' contents (for the tallies). With
    ``retire_if_empty`` a revision left without a claim is retired."""
    claims = tuple(c for c in (_claim(c, erased, needles) for c in rev.claims) if c is not None)
    gone = [originals[e] for e in rev.citations if e in erased and e in originals]
    status = PageStatus.RETIRED if retire_if_empty and not claims else rev.status
    new = rev.model_copy(
        update={
            "title": needles.scrub(rev.title),
            "claims": claims,
            "reason": needles.scrub(rev.reason) if rev.reason else rev.reason,
            "support": _support(rev.support, gone, needles),
            "status": status,
        }
    )
    return new.model_copy(update={"hash": content_hash(new.content())})


def page_fate(
    revisions: Sequence[Revision],
    erased: frozenset[str],
    needles: Needles,
    originals: Mapping[str, Episode],
) -> PageFate:
    """What becomes of a page whose ``revisions`` (oldest first) an erasure reaches."""
    if not revisions:
        return PageFate((), True, 0)
    current = revisions[-1].number
    new = [
        rederive(r, erased, needles, originals, retire_if_empty=r.number == current)
        for r in revisions
    ]
    dropped = sum(len(a.claims) - len(b.claims) for a, b in zip(revisions, new, strict=True))
    if not any(r.claims for r in new):
        return PageFate((), True, sum(len(r.claims) for r in revisions))
    rewrites = tuple((b, a.hash) for a, b in zip(revisions, new, strict=True) if a.hash != b.hash)
    return PageFate(rewrites, False, dropped)
