"""Choose which recall units fit an agent's token budget.

The budget is a hard promise: ``count_tokens(render(pack(items, b, scope=s), scope=s)) <= b``
for every input, the section header and each line's bullet, label and citations included (a
hypothesis property test holds us to it). Prices come from :mod:`reverie.recall.render`, never
from the ``tokens`` a caller put on an item, which :func:`pack` overwrites.

Packing is the greedy approximation of a 0/1 knapsack: units in order of value per token
(``score / max(tokens, MIN_UNIT_TOKENS)``: a line shorter than that competes on score alone, so
"Wow, Caroline!" never outranks the line that answers), each taken when it still fits, a unit
that does not fit skipped so that smaller ones behind it can use the room. Ties fall to the
higher score, then to the id and text, so the same candidates always give the same section
whatever order they arrive in.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from reverie.models import RecallItem, Scope
from reverie.recall.render import header_tokens, line_price, render, render_line
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
    scope: Scope | None = None,
    covers: Mapping[str, frozenset[str]] | None = None,
    trace: RecallTrace | None = None,
) -> list[RecallItem]:
    """The units to render, densest first, whose section fits ``budget_tokens``.

    Pass the ``scope`` that :func:`reverie.recall.render.render` will get: the header names it
    and costs tokens. Units with a score that is not a positive finite number are worth nothing
    and never packed; units that render the same line are packed once. An episode that a packed
    page already covers (``covers``: page id -> the episodes it answers for) is not repeated
    beside it: skipped, or taken out with its room given back when the page comes later.
    Returns copies whose ``tokens`` is their measured price. A ``trace`` gets each unit's
    price and the decision about it (:mod:`reverie.recall.trace`).
    """
    room = budget_tokens - header_tokens(scope)
    chosen: list[RecallItem] = []
    if room <= 0:
        if trace is not None:
            trace.notes.append(f"the header alone costs {header_tokens(scope)} tokens: no room")
        return chosen
    covered: set[str] = set()
    for item, tokens in _ranked(candidates, trace):
        if item.kind == "episode" and item.id in covered:
            if trace is not None:
                trace.cut(item, "a packed page already answers for this episode")
            continue
        if tokens > room:
            if trace is not None:
                trace.cut(item, f"no room: needs {tokens} tokens, {room} left of the budget")
            continue
        chosen.append(item if item.tokens == tokens else item.model_copy(update={"tokens": tokens}))
        room -= tokens
        if item.kind != "episode" and (cites := (covers or {}).get(item.id)):
            covered |= cites
            room += sum(c.tokens for c in chosen if c.kind == "episode" and c.id in cites)
            if trace is not None:
                _taken_out(trace, chosen, cites, item)
            chosen = [c for c in chosen if c.kind != "episode" or c.id not in cites]
        if trace is not None:
            trace.packed(item, room)
    packed = _within(chosen, budget_tokens, scope)
    if trace is not None:
        trace.dropped(chosen, packed, "dropped to keep the rendered section within the budget")
        trace.ranked(packed)
    return packed


def _taken_out(
    trace: RecallTrace, chosen: Sequence[RecallItem], cites: frozenset[str], page: RecallItem
) -> None:
    for unit in chosen:
        if unit.kind == "episode" and unit.id in cites:
            trace.cut(unit, f"taken out, its room given back: page {page.id} answers for it")


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


def _within(chosen: list[RecallItem], budget_tokens: int, scope: Scope | None) -> list[RecallItem]:
    """Belt and braces: drop the least dense units while the rendered section is over budget.

    Never triggers while the estimate stays additive over lines; it keeps the promise if a
    future change to rendering or tokenizing breaks that.
    """
    while chosen and count_tokens(render(chosen, scope=scope)) > budget_tokens:
        chosen.pop()
    return chosen
