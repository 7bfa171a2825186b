"""Free-text value statements — one slot per sentence, the newest asserted
value current (reverie.text.slots)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import hypothesis.strategies as st
import pytest
from hypothesis import given, settings

from reverie.text.slots import Slot, Statement, resolve, slot_of

T0 = datetime(2026, 3, 1, tzinfo=UTC)


def at(days: int) -> datetime:
    return T0 + timedelta(days=days)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("the staging db listens on 5432", "staging DB now listens on port 5433"),
        ("The api timeout is 30s.", "the api timeout changed to 45s"),
        ("api timeout is 30s", "api timeout changed from 30s to 45s"),
        ("we deploy with kubectl v1.28.3", "We now deploy with kubectl 1.29.0"),
        ("the service runs on node-3", "the service currently runs on node-7"),
        ("docs live at https://a.example.com/docs", "docs live at https://b.example.com/v2"),
        ("the team name is 'Blue Falcons'", 'the team name was "Red Owls"'),
        ("the db host is db1.internal:5432", "the db host moved to db2.internal:5432"),
        ("the cache hit rate target is 90%", "the cache hit rate target is now 95%"),
    ],
)
def test_the_same_sentence_with_another_value_is_the_same_slot(a: str, b: str) -> None:
    first, second = slot_of(a), slot_of(b)
    assert first is not None and second is not None
    assert first.key == second.key and first.value_key != second.value_key


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("the staging db listens on 5432", "the prod db listens on 5432"),
        ("retry 3 times", "wait 3 minutes"),
        ("the api timeout is 30s", "the api retry limit is 30"),
    ],
)
def test_other_sentences_are_other_slots(a: str, b: str) -> None:
    first, second = slot_of(a), slot_of(b)
    assert first is not None and second is not None and first.key != second.key


@pytest.mark.parametrize("text", ["the db is slow", "port 5432", "is 5433", "", "v2"])
def test_not_value_statements(text: str) -> None:
    assert slot_of(text) is None


def test_the_newest_asserted_value_is_current_and_older_ones_end() -> None:
    (slot,) = resolve(
        [
            Statement("staging DB now listens on port 5433", at(10), "ep-2"),
            Statement("the staging db listens on 5432", at(0), "ep-1"),
            Statement("the staging db listens on 5432", at(20), "ep-3", asserted=False),
            Statement("Staging db listens on 5433.", at(15), "ep-4"),
        ]
    )
    assert slot.key == "staging db listens on <v>"
    assert slot.current is not None and slot.current.value == "5433"
    assert slot.current.episode_ids == ("ep-2", "ep-4") and slot.current.valid_from == at(10)
    (old,) = slot.superseded
    assert (old.value, old.valid_from, old.valid_until) == ("5432", at(0), at(10))
    assert [m.episode_id for m in slot.mentions] == ["ep-3"] and slot.changed


def test_a_value_that_comes_back_is_a_new_span() -> None:
    (slot,) = resolve(
        Statement(f"the api timeout is {v}", at(d), f"ep-{d}")
        for v, d in (("30s", 0), ("45s", 5), ("30s", 9))
    )
    assert slot.current is not None and slot.current.value == "30s"
    assert [(s.value, s.valid_until) for s in slot.superseded] == [("30s", at(5)), ("45s", at(9))]


def test_only_mentions_leave_no_current_value() -> None:
    (slot,) = resolve([Statement("the api timeout is 30s", at(0), "ep-1", asserted=False)])
    assert slot.current is None and not slot.superseded and len(slot.mentions) == 1


# -- properties ----------------------------------------------------------------------------------

TEMPLATES = (
    "the staging db listens on {v}",
    "staging DB now listens on port {v}",
    "the api timeout is {v}s",
    "the api timeout changed to {v}s",
)
VALUES = st.sampled_from(["5432", "5433", "6543", "30", "45"])
STATEMENT = st.builds(
    lambda t, v, d, n, a: Statement(TEMPLATES[t].format(v=v), at(d), f"ep-{n}", a),
    st.integers(0, len(TEMPLATES) - 1),
    VALUES,
    st.integers(0, 60),
    st.integers(0, 9),
    st.booleans(),
)
STATEMENTS = st.lists(STATEMENT, max_size=12)


def _currents(slots: list[Slot]) -> dict[str, str | None]:
    return {s.key: s.current.value if s.current else None for s in slots}


@settings(max_examples=200, deadline=None)
@given(statements=STATEMENTS, seed=st.integers(0, 2**32))
def test_the_result_does_not_depend_on_input_order(statements: list[Statement], seed: int) -> None:
    shuffled = list(statements)
    random.Random(seed).shuffle(shuffled)
    assert resolve(shuffled) == resolve(statements)


@settings(max_examples=200, deadline=None)
@given(statements=STATEMENTS, extra=STATEMENT)
def test_an_older_statement_never_changes_the_current_value(
    statements: list[Statement], extra: Statement
) -> None:
    before = _currents(resolve(statements))
    key = slot_of(extra.text)
    assert key is not None
    newest = [
        s.created_at
        for s in statements
        if s.asserted and (k := slot_of(s.text)) is not None and k.key == key.key
    ]
    if not newest or extra.created_at >= max(newest):
        return  # not older than the slot's newest asserted statement
    after = _currents(resolve([*statements, extra]))
    assert after[key.key] == before[key.key]


@settings(max_examples=200, deadline=None)
@given(statements=STATEMENTS, extra=STATEMENT)
def test_a_newer_asserted_statement_always_becomes_current(
    statements: list[Statement], extra: Statement
) -> None:
    newer = Statement(extra.text, at(61), "ep-new", asserted=True)
    key = slot_of(newer.text)
    assert key is not None
    after = {s.key: s for s in resolve([*statements, newer])}[key.key]
    assert after.current is not None and after.current.statements[-1] == newer
    assert after.current.value == key.value


@settings(max_examples=100, deadline=None)
@given(statements=STATEMENTS)
def test_a_mention_never_wins(statements: list[Statement]) -> None:
    for slot in resolve(statements):
        spans = [*slot.superseded, *([slot.current] if slot.current else [])]
        assert all(s.asserted for span in spans for s in span.statements)


def test_constant_names_are_values_and_one_word_is_enough_within_one_context() -> None:
    one, two = (
        slot_of("Run transformations on TRANSFORM_WH."),
        slot_of("Run transformations on PIPE_L_WH."),
    )
    assert one is not None and two is not None
    assert one.key == two.key and one.value_key != two.value_key
    assert slot_of("Escalate to expert-desk.") is None
    short = slot_of("Escalate to expert-desk.", least=1)
    assert short is not None and short.value == "expert-desk"
