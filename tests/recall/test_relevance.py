"""Term rarity: a term most candidates hold weighs little in the relevance floor and score, a
term that none holds weighs most, so a lone common match is not enough and a lone rare one is."""

from __future__ import annotations

from reverie.recall.query import stem, stems
from reverie.recall.search import coverage, term_weights

CHAT = [
    "Caroline: I went to the LGBTQ support group yesterday.",
    "Caroline: the weekend was busy with the kids.",
    "Caroline: we painted a lake at sunrise.",
    "Caroline: my friends and I hiked all day.",
]


def _wanted(*words: str) -> list[str]:
    return [stem(w) for w in words]


def test_common_terms_weigh_less_than_rare_ones_and_absent_ones_most() -> None:
    weights = term_weights(_wanted("caroline", "sunrise", "volcano"), map(stems, CHAT))
    assert weights["carolin"] < weights["sunris"] < weights["volcano"]


def test_one_rare_match_passes_a_floor_one_common_match_does_not() -> None:
    wanted = _wanted("caroline", "support", "group", "attend")
    weights = term_weights(wanted, map(stems, CHAT))
    rare = coverage(wanted, "We met at the support group.", weights)
    common = coverage(wanted, "Caroline hiked all day.", weights)
    assert common < 0.1 < rare


def test_without_weights_coverage_is_the_plain_share() -> None:
    assert coverage(_wanted("deploy", "staging", "weather"), "deploying to staging") == 2 / 3
    assert coverage([], "anything") == 0.0
