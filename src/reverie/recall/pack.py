"""Choose which recall units fit an agent's token budget.

The budget is a hard promise: ``count_tokens(render(pack(items, b))) <= b`` for every input,
the fence lines and each line's label included (a hypothesis property test holds us to it).
Prices come from :mod:`reverie.recall.render`, never from the ``tokens`` a caller put on an
item, which :func:`pack` overwrites.

Packing is the greedy approximation of a 0/1 knapsack: units in order of value per token
(``score / max(tokens, MIN_UNIT_TOKENS)``: a line shorter than that competes on score alone, so
"Wow, Caroline!" never outranks the line that answers), each taken when it still fits, a unit
that does not fit skipped so that smaller ones behind it can use the room. Ties fall to the
higher score, then to the id and text, so the same candidates always give the same section
whatever order they arrive in. A page's title is written on its first packed line only, so a
later line of the same page is priced, and taken, without it: a page's second claim costs its
own words.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from reverie.models import RecallItem
from reverie.recall.render import header_tokens, line_price, render, render_line, says_title
from reverie.recall.tokens import count_tokens

if TYPE_CHECKING:
    from reverie.recall.trace import RecallTrace

__all__ = ["MIN_UNIT_TOKENS", "density", "pack"]

_Key = tuple[float, float, str, str, str]

MIN_UNIT_TOKENS = 80
"""A unit is priced at least this when ordering: a two-word line ("Wow, Caroline!") must not win
on value per token by being short; at or under this length units compete on score alone."""


def density(item: RecallItem) -> float:
    """Value per token: the order in which :func:`pack` considers units."""
    return _value_per_token(item.score, item.tokens)


def _value_per_token(score: float, tokens: int) -> float:
    return score / max(tokens, MIN_UNIT_TOKENS)


def pack(
    candidates: Sequence[RecallItem],
    budget_tokens: int,
    *,
    covers: Mapping[str, frozenset[str]] | None = None,
    trace: RecallTrace | None = None,
) -> list[RecallItem]:
    """The units to render, densest first, whose section fits ``budget_tokens``.

    Units with a score that is not a positive finite number are worth nothing and never
    packed; units that render the same line are packed once. Knowledge before its evidence:
    an episode that a packed page already covers (``covers``: page id -> the episodes it
    answers for) is not taken beside it (skipped, or taken out with its room given back when
    the page comes later) while other units still compete for the room; what room is left
    after them goes to those episodes, in the same order, so a section stops short of its
    budget only when nothing relevant is left. An episode whose excerpt repeats a packed
    episode's word for word (a routine run logged the same way every day) is left out. Returns
    copies whose ``tokens`` is their measured price where they stand. A ``trace`` gets each
    unit's price and the decision about it (:mod:`reverie.recall.trace`).
    """
    packer = _Packer(budget_tokens - header_tokens(), covers or {}, trace)
    if packer.room <= 0:
        if trace is not None:
            trace.notes.append(f"the fence alone costs {header_tokens()} tokens: no room")
        return []
    for rank, (item, listed) in enumerate(_ranked(candidates, trace)):
        packer.offer(rank, item, listed)
    packer.fill()
    packed = _within(packer.chosen, budget_tokens)
    if trace is not None:
        trace.dropped(packer.chosen, packed, "dropped to keep the rendered section within budget")
        trace.ranked(packed)
    return packed


SAME_WORDS_SLACK = 3
"""Words one of two lines may add to the other and still say the same: a speaker's name, a
date ("user: I take propranolol…" on a fact page, "I take propranolol…" on the dialogue's)."""


def restates(said: str, text: str) -> bool:
    """Whether ``text`` says what ``said`` says: one holds the other's words in order, with at
    most :data:`SAME_WORDS_SLACK` more."""
    short, long = sorted((" ".join(text.split()), " ".join(said.split())), key=len)
    extra = len(long.split()) - len(short.split())
    return bool(short) and extra <= SAME_WORDS_SLACK and short in long


class _Packer:
    """The greedy pass of :func:`pack`: the room left, what is taken, which pages have written
    their title, and the covered episodes waiting for room left after the knowledge."""

    def __init__(
        self, room: int, covers: Mapping[str, frozenset[str]], trace: RecallTrace | None
    ) -> None:
        self.room, self.covers, self.trace = room, covers, trace
        self.taken: list[tuple[int, RecallItem]] = []  # (packing rank, unit priced in place)
        # the citations of each packed page that covers episodes: kept apart, not merged, as a
        # page can cite thousands and is asked about only the few candidate episodes
        self.covered: list[frozenset[str]] = []
        self.titled: set[str] = set()  # pages with a line packed: their title is written
        self.waiting: list[tuple[int, RecallItem, int]] = []

    def offer(self, rank: int, item: RecallItem, listed: int) -> None:
        """Take ``item`` (``listed``: its price with a title) if it fits; an episode a packed
        page answers for waits for :meth:`fill`."""
        if self._said(item):
            self._cut(item, "says what a packed line says, word for word")
            return
        if item.kind == "episode" and any(item.id in cites for cites in self.covered):
            self.waiting.append((rank, item, listed))
            self._cut(item, "a packed page already answers for this episode")
            return
        if item.kind != "episode" and item.id in self.titled and says_title(item):
            self._cut(item, "says only its page's title, which a packed line already wrote")
            return
        tokens = self._price_in_place(item, listed)
        if tokens != listed and self.trace is not None:  # ranked at ``listed``, costs ``tokens``
            self.trace.priced(item, tokens, _value_per_token(item.score, listed))
        if tokens > self.room:
            self._cut(item, f"no room: needs {tokens} tokens, {self.room} left of the budget")
            return
        self._take(rank, item, tokens)
        if item.kind != "episode":
            self.titled.add(item.id)
            if cites := self.covers.get(item.id):
                self._cover(cites, item)

    def fill(self) -> None:
        """The room left after every other unit, to the covered episodes, in packing order."""
        for rank, item, tokens in sorted(self.waiting, key=lambda t: t[0]):
            if tokens <= self.room and not self._said(item):
                self._take(rank, item, tokens, "room left after the knowledge that covers it")

    @property
    def chosen(self) -> list[RecallItem]:
        """The units taken, in the order taken: the section's order."""
        return [item for _, item in self.taken]

    def _said(self, item: RecallItem) -> bool:
        """Whether a packed unit already says what ``item`` says (:func:`restates`)."""
        return any(restates(unit.text, item.text) for _, unit in self.taken)

    def _price_in_place(self, item: RecallItem, listed: int) -> int:
        """What ``item`` costs where it would stand: ``listed`` unless a line of its page is
        packed already, which wrote the title."""
        if item.kind != "episode" and item.id in self.titled:
            return line_price(render_line(item, titled=False))
        return listed

    def _take(self, rank: int, item: RecallItem, tokens: int, why: str = "") -> None:
        priced = item if item.tokens == tokens else item.model_copy(update={"tokens": tokens})
        self.taken.append((rank, priced))
        self.room -= tokens
        if self.trace is not None:
            self.trace.packed(item, self.room, why)

    def _cover(self, cites: frozenset[str], page: RecallItem) -> None:
        """``page`` answers for the episodes ``cites``: those already taken are taken out,
        their room given back, and wait with the others."""
        self.covered.append(cites)
        kept = []
        for rank, unit in self.taken:
            if unit.kind == "episode" and unit.id in cites:
                self.room += unit.tokens
                self.waiting.append((rank, unit, unit.tokens))
                self._cut(unit, f"taken out, its room given back: page {page.id} answers for it")
            else:
                kept.append((rank, unit))
        self.taken = kept

    def _cut(self, item: RecallItem, reason: str) -> None:
        if self.trace is not None:
            self.trace.cut(item, reason)


def _ranked(
    candidates: Sequence[RecallItem], trace: RecallTrace | None = None
) -> list[tuple[RecallItem, int]]:
    """Worthwhile units with their price, one per rendered line, in packing order. Each line
    is rendered and priced once, and only the units taken are copied with their price; lines
    are unique here, so sorting never reaches the full-dump tie-break."""
    best: dict[str, tuple[_Key, RecallItem, int]] = {}
    for item in candidates:
        if math.isfinite(item.score) and item.score > 0:
            line = render_line(item)
            tokens = line_price(line)
            key = (-_value_per_token(item.score, tokens), -item.score, item.id, item.kind, line)
            held = best.get(line)
            if trace is not None:
                trace.priced(item, tokens, -key[0])
            if held is None or _before(key, item, held):
                if held is not None and trace is not None:
                    trace.cut(held[1], "renders the same line as a better unit")
                best[line] = (key, item, tokens)
            elif trace is not None:
                trace.cut(item, "renders the same line as a better unit")
        elif trace is not None:
            trace.cut(item, "worth nothing: its score is not a positive number")
    return [(item, tokens) for _, item, tokens in sorted(best.values(), key=lambda t: t[0])]


def _before(key: _Key, unit: RecallItem, held: tuple[_Key, RecallItem, int]) -> bool:
    """Whether ``unit`` beats ``held`` for the same line: densest, then higher score, id, kind,
    and finally every field, so the choice never depends on arrival order."""
    if key != held[0]:
        return key < held[0]
    return unit.model_dump_json() < held[1].model_dump_json()


def _within(chosen: list[RecallItem], budget_tokens: int) -> list[RecallItem]:
    """Belt and braces: drop the least dense units while the rendered section is over budget.

    Never triggers while the estimate stays additive over lines and references stay under
    1000; it keeps the promise if a future change to rendering or tokenizing breaks that.
    Dropping from the end never takes a page's titled line from under a later one of it.
    """
    while chosen and count_tokens(render(chosen)) > budget_tokens:
        chosen.pop()
    return chosen
