"""Term rarity: a term most candidates hold weighs little in the relevance floor and score, a
term that none holds weighs most, so a lone common match is not enough and a lone rare one is."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest

from reverie import Reverie
from reverie.models import Episode, Outcome
from reverie.recall.query import stem, stems
from reverie.recall.search import coverage, term_weights, varied

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


RESET_LESSON = "Password resets need the ticket number before the reset link is sent."


def _helpdesk(rv: Reverie) -> None:
    """Chat turns about password resets, and the lesson, distilled into a page."""
    for n in range(3):
        turn = [
            {"role": "user", "content": f"Reset my password please ({n})"},
            {"role": "assistant", "content": f"Sent link {n}. {RESET_LESSON}"},
        ]
        rv.add(turn, scope="acme/helpdesk")
    lesson = {"situation": "password reset", "action": "asked", "lesson": RESET_LESSON}
    rv.remember(lesson, scope="acme/helpdesk")
    rv.dream("acme/helpdesk", now=datetime(2030, 1, 1, tzinfo=UTC))


@pytest.mark.parametrize(
    "question",
    [
        "Does a password reset need the ticket number?",
        "How do password resets work here?",
        "How are password resets handled?",
        "What is the process for password resets?",
    ],
)
def test_a_question_frame_does_not_hide_the_page_it_asks_about(rv: Reverie, question: str) -> None:
    """A brain about one topic holds its terms on every candidate, so they weigh little; a
    frame word ("work") held by none would outweigh them in the floor if it counted."""
    _helpdesk(rv)
    found = rv.recall(question, "acme/helpdesk", 500)
    assert any(RESET_LESSON in item.text for item in found.items), question


def test_a_framed_question_about_something_never_stored_stays_empty(rv: Reverie) -> None:
    _helpdesk(rv)
    assert rv.recall("How do refunds work here?", "acme/helpdesk", 500).items == []
    assert rv.recall("How is the VPN handled?", "acme/helpdesk", 500).items == []


@pytest.mark.parametrize(
    "call",
    [
        "schedctl series-create --{arg} MRN204 --{opt} INF-Q3W",
        'sched.series_create({arg}="MRN204", {opt}="INF-Q3W")',
        'sched.series_create {{"{arg}": "MRN204", "{opt}": "INF-Q3W"}}',
    ],
)
def test_a_calls_argument_names_are_not_what_it_is_about(rv: Reverie, call: str) -> None:
    """Every call of a tool repeats its argument names: a question sharing one prose word
    with an episode and one with its call's schema ("patient", "template") asks about
    something else; the same words in prose do speak of it."""
    arg, opt = "wardholder", "quillset"
    rows = [
        {"situation": f"Nightly batch {n} for the infusion unit", "outcome": "success",
         "action": call.format(arg=arg, opt=opt)}
        for n in range(6)
    ]  # fmt: skip
    rows += [{"situation": f"Garage gate {n} stuck", "action": "reset the parking gate",
              "outcome": "success"} for n in range(6)]  # fmt: skip
    rv.ingest(rows, scope="acme/sched")
    asked = f"Which {arg} validates parking for the infusion building?"
    assert rv.recall(asked, "acme/sched", 400).items == []
    told = {"situation": f"The {arg} of the infusion unit validates parking", "action": "noted"}
    rv.remember(told, scope="acme/sched")
    assert rv.recall(asked, "acme/sched", 400).items != []


def test_a_routine_repeated_a_hundred_times_does_not_fill_the_candidates() -> None:
    """The full-text candidates keep two episodes of one shape (the wording with ids and
    numbers masked, and the outcome): a hundred check-ins sharing the question's common words
    would otherwise take every place, and the one case that says what to do would not be read."""
    rng = random.Random(5)
    routine = [
        Episode.parse({"scope": "acme/yard", "outcome": "success", "action": "dock.checkin",
                       "situation": f"Dock check-in for TRL{rng.randint(10000, 99999)}, seal ok"})
        for _ in range(100)
    ]  # fmt: skip
    failed = routine[0].model_copy(update={"id": "ep-failed", "outcome": Outcome.FAILURE})
    told = Episode.parse({"scope": "acme/yard", "situation": "Seal differs from the manifest",
                          "action": "logged exception KQ-42", "outcome": "success"})  # fmt: skip
    hits = [(ep, 10.0 - n / 100) for n, ep in enumerate([*routine, failed, told])]
    kept = [ep for ep, _ in varied(hits, 40)]
    assert kept == [routine[0], routine[1], failed, told]
