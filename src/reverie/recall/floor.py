"""The answer floor, calibrated for the size of the brain the question is asked of.

A fixed cosine floor cannot serve brains of every size. In a brain of three memories a
paraphrase of one of them may reach only 0.35 with a small model; in a brain of 100,000 some
unit reaches 0.45 for a question nothing in it answers, by chance alone, because the best of
many unrelated similarities grows with their number. So the floor is the null of the best hit:

- **Null per pair.** How alike the model finds a question and a text that does not answer it:
  a mean and a spread per model (:data:`NULL_PAIRS`, measured, see docs/recall.md).
- **Null of the best.** Recall answers with the best of the ``n`` units it compares (the
  scope's claims and its newest ``vector_window`` episodes). Were none of them about the
  question, the best cosine would be the largest of ``n`` null draws, whose expected value is
  ``mean + std * k(n)``, ``k(n)`` the expected largest of ``n`` standard normal draws (Blom's
  approximation): 0.87 for 3 units, 2.5 for 100, 4.0 for 20,000, 4.4 for 100,000. Below that
  line a cosine is background (:attr:`Floors.unit`); a section answers only when its best unit
  clears it by :data:`MARGIN` standard deviations (:attr:`Floors.answer`). A plain statement
  (:attr:`Floors.plain`: a line of a dialogue, which a question about a person's life matches
  only loosely) needs the same, capped by the fixed plain floor of the model: in a small brain
  a half margin let an unrelated line of three through (0.155 against 0.150).

The query's own background (its mean cosine with the brain's units) is deliberately not the
location: in a brain about one subject a question on that subject is alike to everything in
it, so its best hit never stands out from its background, and a floor set from it would refuse
every on-topic paraphrase (the demo brain's "how do I ship the service to the cluster": best
0.34, floor 0.62 when drawn from its background).
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist

__all__ = ["MARGIN", "NULL_PAIRS", "Floors", "calibrated", "expected_max"]

NULL_PAIRS = {"all-MiniLM-L6-v2-int8": (0.04, 0.08)}
"""Per model: mean and standard deviation of its cosine between a question and a text that
does not answer it."""
MARGIN = 1.0
"""Standard deviations by which the best unit must clear the null's expected best."""


@dataclass(frozen=True)
class Floors:
    """``unit``: below it a cosine is background; ``answer``: the best unit must reach it;
    ``plain``: the best plain statement must reach it."""

    unit: float
    answer: float
    plain: float


def expected_max(n: int) -> float:
    """Expected largest of ``n`` independent standard normal draws (Blom); 0 for one or none."""
    if n <= 1:
        return 0.0
    return NormalDist().inv_cdf((n - 0.375) / (n + 0.25))


def calibrated(model_id: str, units: int) -> Floors | None:
    """The floors for a brain whose vector side compares ``units`` units, for ``model_id``;
    None for a model with no measured null (its floors stay the fixed ones)."""
    null = NULL_PAIRS.get(model_id)
    if null is None or units <= 0:
        return None
    mean, std = null
    unit = mean + std * expected_max(units)
    return Floors(unit=unit, answer=unit + MARGIN * std, plain=unit + MARGIN * std)
