"""Why recall chose what it chose: a trace the pipeline fills in as it runs (``explain``).

A :class:`RecallTrace` is handed to :func:`reverie.recall.recall` by a caller that wants the
reasons (``POST /v1/recall?explain=true``, ``reverie recall --explain``, the console's recall
playground). Each stage writes down what it already computed, where it computed it: the search
the signals of every unit it scored (BM25 and its share of the best hit, term coverage, the role
weight, the cosine and its semantic share) and every unit it left below the relevance floor;
the stages after it every unit they dropped and why; the packer its price, its value per token
and the budget decision. Nothing is ranked a second time, so the trace explains exactly the
section the caller got.

Without a trace (``trace=None``, the default) each hook is one ``is not None`` test and
recall's latency is unchanged.

A unit is known by ``(kind, id, text)``: a page claim by its page id and claim text, an episode
by its id and excerpt. Claims that share no term with the question at all are counted
(``unmatched_claims``), not listed: a page of two hundred lines would drown the answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from reverie.models import RecallItem

__all__ = ["CUT", "PACKED", "RecallTrace", "TracedUnit"]

PACKED = "packed"
CUT = "cut"

_Key = tuple[str, str, str]


def _key(unit: RecallItem) -> _Key:
    return (unit.kind, unit.id, unit.text)


@dataclass
class TracedUnit:
    """One unit recall considered: where it was found, its signals, and what became of it."""

    kind: str
    id: str
    title: str
    text: str
    citations: list[str]
    path: str
    signals: dict[str, float] = field(default_factory=dict)
    score: float = 0.0
    tokens: int | None = None
    decision: str = CUT
    reason: str = ""
    rank: int | None = None
    """Its place in the section (0 first) when packed."""

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "id": self.id,
            "title": self.title,
            "text": self.text,
            "citations": self.citations,
            "path": self.path,
            "signals": {k: round(v, 4) for k, v in self.signals.items()},
            "score": round(self.score, 4),
            "tokens": self.tokens,
            "decision": self.decision,
            "reason": self.reason,
            "rank": self.rank,
        }


@dataclass
class RecallTrace:
    """What one recall saw and decided; filled in by the pipeline (module docstring)."""

    terms: list[str] = field(default_factory=list)
    weights: dict[str, float] = field(default_factory=dict)
    floor: float = 0.0
    budget_tokens: int = 0
    header_tokens: int = 0
    used_tokens: int = 0
    vectors: bool = False
    unmatched_claims: int = 0
    notes: list[str] = field(default_factory=list)
    units: dict[_Key, TracedUnit] = field(default_factory=dict)

    # -- written by the search stages ---------------------------------------------------------

    def found(self, unit: RecallItem, path: str, **signals: float) -> None:
        """A candidate unit the search built, with the signals its score came from. A unit one
        path left below the floor and another found again is that other path's candidate."""
        self.units[_key(unit)] = TracedUnit(
            unit.kind,
            unit.id,
            unit.title,
            unit.text,
            list(unit.citations),
            path,
            dict(signals),
            unit.score,
        )

    def signal(self, unit: RecallItem, **signals: float) -> None:
        """More signals for a known unit (the vector side's cosine), and its new score."""
        held = self.units.get(_key(unit))
        if held is not None:
            held.signals.update(signals)
            held.score = unit.score

    def cut(self, unit: RecallItem, reason: str) -> None:
        held = self.units.get(_key(unit))
        if held is not None:
            held.decision, held.reason, held.rank = CUT, reason, None

    def dropped(self, before: list[RecallItem], after: list[RecallItem], reason: str) -> None:
        """Every unit of ``before`` that a stage left out of ``after`` was cut for ``reason``."""
        kept = {_key(u) for u in after}
        for unit in before:
            if _key(unit) not in kept:
                self.cut(unit, reason)

    def renamed(self, pairs: list[tuple[RecallItem, RecallItem]]) -> None:
        """Units whose text a stage rewrote (redaction): known by their new text from now on."""
        for old, new in pairs:
            if _key(old) != _key(new) and (held := self.units.pop(_key(old), None)) is not None:
                held.text = new.text
                self.units[_key(new)] = held

    # -- written by the packer ----------------------------------------------------------------

    def priced(self, unit: RecallItem, tokens: int, density: float) -> None:
        held = self.units.get(_key(unit))
        if held is not None:
            held.tokens, held.score = tokens, unit.score
            held.signals["value_per_token"] = density

    def packed(self, unit: RecallItem, room_left: int, why: str = "") -> None:
        held = self.units.get(_key(unit))
        if held is not None:
            held.decision = PACKED
            held.reason = f"fits: {room_left} tokens of the budget left after it"
            held.reason += f" ({why})" if why else ""

    def ranked(self, items: list[RecallItem]) -> None:
        """The section's final order; a unit the packer took that is not in it was taken out."""
        for rank, unit in enumerate(items):
            if (held := self.units.get(_key(unit))) is not None:
                held.rank = rank

    # -- read by the edges --------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """Packed units in section order, then the cut ones by score (best first)."""
        packed = sorted(
            (u for u in self.units.values() if u.decision == PACKED), key=lambda u: u.rank or 0
        )
        cut = sorted(
            (u for u in self.units.values() if u.decision != PACKED),
            key=lambda u: (-u.score, u.kind, u.id, u.text),
        )
        return {
            "terms": self.terms,
            "weights": {k: round(v, 4) for k, v in self.weights.items()},
            "floor": self.floor,
            "budget_tokens": self.budget_tokens,
            "header_tokens": self.header_tokens,
            "used_tokens": self.used_tokens,
            "vectors": self.vectors,
            "unmatched_claims": self.unmatched_claims,
            "notes": self.notes,
            "units": [u.to_json() for u in (*packed, *cut)],
        }
