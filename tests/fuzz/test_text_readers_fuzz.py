"""The text readers the dream and recall run on every episode never raise, whatever the text.

One message such as "metric pls, always" once stopped a whole dream cycle: a reader took the
word after a standing adverb that had none. Each reader is given short texts assembled from
the small words their patterns turn on (pronouns, auxiliaries, adverbs, separators) mixed with
arbitrary text, and must return, not raise.
"""

from __future__ import annotations

import hypothesis.strategies as st
from hypothesis import given, settings

from reverie.dream.boilerplate import is_template_lesson
from reverie.models import Episode, Outcome
from reverie.text.assertions import assertions, mentions
from reverie.text.calls import parse_call
from reverie.text.slots import slot_of
from reverie.text.stated import durable_statements

HINGES = (
    "I", "I'm", "my", "we", "our", "is", "am", "are", "was", "now", "always", "never", "please",
    "pls", "reply", "call", "me", "in", "at", "from", "to", "since", "because", "moved", "live",
    "work", "name", "called", "=", ":", ",", ".", "!", "?", "'s", "→", "{", "}", "(", ")", '"',
    "-", "10m", "v2", "", " ",
)  # fmt: skip

texts = st.lists(
    st.one_of(st.sampled_from(HINGES), st.text(max_size=12)), min_size=0, max_size=10
).map(" ".join)


@settings(max_examples=400, deadline=None)
@given(text=texts)
def test_no_text_makes_a_reader_raise(text: str) -> None:
    durable_statements(text)
    slot_of(text)
    parse_call(text)
    is_template_lesson(text)


@settings(max_examples=150, deadline=None)
@given(situation=texts, action=texts, outcome=st.sampled_from(list(Outcome)))
def test_no_episode_text_makes_the_fact_reader_raise(
    situation: str, action: str, outcome: Outcome
) -> None:
    def text(value: str) -> str:  # what an episode may hold: no NUL, and some situation
        return value.replace("\x00", "")

    ep = Episode(scope="acme/coder", situation=text(situation) + " x", action=text(action),
                 outcome_details=text(action), outcome=outcome)  # fmt: skip
    assertions(ep)
    mentions(ep)
