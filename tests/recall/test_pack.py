"""pack never overruns the budget, prefers value per token, writes a page's title once, gives
room left after the knowledge to the evidence it covers, and is deterministic."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from reverie.models import RecallItem
from reverie.recall.pack import density, pack
from reverie.recall.render import (
    header_tokens,
    layout,
    line_price,
    line_tokens,
    render,
    render_line,
)
from reverie.recall.tokens import count_tokens

texts = st.text(max_size=120)
items = st.builds(
    RecallItem,
    kind=st.sampled_from(["page", "episode"]),
    id=st.text(min_size=1, max_size=12),
    title=st.text(max_size=30),
    text=texts,
    score=st.floats(min_value=1e-6, max_value=10, allow_nan=False),
    tokens=st.integers(min_value=0, max_value=5),  # deliberately wrong: pack must re-measure
    citations=st.lists(st.text(max_size=10), max_size=5),
    created_at=st.none() | st.datetimes(timezones=st.just(UTC)),
    status=st.sampled_from([None, "active", "superseded", "failure"]),
)
few_ids = st.sampled_from(["pg_1", "pg_2", "ep-1", "x"])  # pages with several lines


@settings(max_examples=300, deadline=None)
@given(
    st.lists(items, max_size=25),
    st.integers(min_value=-5, max_value=600),
    st.lists(few_ids, max_size=4),
)
def test_packed_section_never_exceeds_budget(
    candidates: list[RecallItem], budget: int, shared: list[str]
) -> None:
    candidates = [c.model_copy(update={"id": shared[i]}) if i < len(shared) else c
                  for i, c in enumerate(candidates)]  # fmt: skip
    covers = {"pg_1": frozenset({"ep-1"}), "x": frozenset({"x", "ep-1"})}
    packed = pack(candidates, budget, covers=covers)
    text = render(packed)
    assert count_tokens(text) <= max(budget, 0)
    if packed:
        assert count_tokens(text) == header_tokens() + sum(i.tokens for i in packed)


@given(st.lists(items, max_size=25), st.integers(min_value=0, max_value=600))
def test_packed_in_value_per_token_order(candidates: list[RecallItem], budget: int) -> None:
    packed = pack(candidates, budget)
    spots = layout(packed)
    assert all(
        i.tokens == line_price(render_line(i, titled=titled))
        for i, (_, titled) in zip(packed, spots, strict=True)
    )
    values = [density(i.model_copy(update={"tokens": line_tokens(i)})) for i in packed]
    assert values == sorted(values, reverse=True)


@given(st.lists(items, max_size=25), st.integers(min_value=0, max_value=600), st.randoms())
def test_pack_is_deterministic_whatever_the_input_order(
    candidates: list[RecallItem], budget: int, rnd: object
) -> None:
    shuffled = list(candidates)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    assert pack(candidates, budget) == pack(shuffled, budget)


def _item(ident: str, text: str, score: float) -> RecallItem:
    when = datetime(2026, 11, 3, tzinfo=UTC)
    return RecallItem(
        kind="page",
        id=ident,
        title="t",
        text=text,
        score=score,
        tokens=0,
        citations=["ep-1"],
        created_at=when,
        status="active",
    )


def test_zero_and_tiny_budgets_give_nothing() -> None:
    candidates = [_item("p1", "short", 1.0)]
    assert pack(candidates, 0) == []
    assert pack(candidates, header_tokens()) == []
    assert render(pack(candidates, 3)) == ""


def test_skips_a_unit_that_does_not_fit_and_takes_smaller_ones() -> None:
    big = _item("big", "word " * 200, 100.0)
    small = _item("small", "a short useful line", 1.0)
    budget = header_tokens() + line_tokens(small) + 2
    assert [i.id for i in pack([big, small], budget)] == ["small"]


def test_denser_unit_wins_and_ties_break_by_score_then_id() -> None:
    a = _item("a", "same length alpha", 2.0)  # same price, different lines
    b = _item("b", "same length bravo", 2.0)
    c = _item("c", "same length delta", 1.0)
    assert [i.id for i in pack([c, b, a], 10_000)] == ["a", "b", "c"]


def test_worthless_and_duplicate_units_are_not_packed() -> None:
    good = _item("p", "claim", 1.0)
    units = [good, good.model_copy(), _item("z", "zero", 0.0), _item("n", "nan", float("nan"))]
    assert [i.id for i in pack(units, 10_000)] == ["p"]


def test_a_short_line_does_not_win_by_being_short() -> None:
    chatter = _item("chatter", "Wow!", 0.4)
    answer = _item("answer", "I painted that lake sunrise last year, it is special to me.", 0.9)
    assert [i.id for i in pack([chatter, answer], 10_000)] == ["answer", "chatter"]


def _episode(ident: str, text: str, score: float) -> RecallItem:
    return RecallItem(
        kind="episode", id=ident, title="", text=text, score=score, tokens=0, citations=[ident]
    )


def test_an_episode_a_packed_page_answers_for_comes_after_everything_else() -> None:
    early = _episode("ep-1", "kubectl apply timed out on the api deploy", 2.0)
    page = _item("pg_1", "Wait with kubectl rollout status --timeout=10m.", 1.0)
    other = _episode("ep-9", "helm upgrade of the worker chart succeeded", 0.5)
    covers = {"pg_1": frozenset({"ep-1", "ep-2"})}
    tight = line_tokens(page) + line_tokens(other) + header_tokens()
    # ep-1 came first and was taken out again: its page answers for it, and ep-9 needs the room
    assert [i.id for i in pack([early, page, other], tight, covers=covers)] == ["pg_1", "ep-9"]
    assert {i.id for i in pack([early, page, other], tight)} == {"ep-1", "pg_1"}
    # with room left after the knowledge and the rest, the covered episode fills it, last
    packed = pack([early, page, other], 400, covers=covers)
    assert [i.id for i in packed] == ["pg_1", "ep-9", "ep-1"]


def test_a_page_writes_its_title_once_and_its_next_line_costs_its_own_words() -> None:
    title = "Deploys of large manifests time out with kubectl apply"
    first = _item("pg_1", "Pass --timeout=10m to kubectl rollout status.", 2.0)
    first, second = (
        first.model_copy(update={"title": title, "role": "fix"}),
        first.model_copy(
            update={"title": title, "role": "fix", "text": "Split the manifest.", "score": 1.5}
        ),
    )
    packed = pack([second, first], 400)
    assert [i.text for i in packed] == [first.text, second.text]
    assert packed[0].tokens == line_tokens(first)
    assert packed[1].tokens == line_price("[1] Split the manifest.") < line_tokens(second)
    lines = render(packed).split("\n")[1:-1]
    assert lines == [f"[1] {title}: {first.text}", "[1] Split the manifest."]


def test_a_claim_that_only_says_its_page_title_is_not_written_twice() -> None:
    title = "Use kubectl rollout status before the smoke tests"
    lead = _item("pg_1", title + ".", 2.0).model_copy(update={"title": title, "role": "lesson"})
    fix = _item("pg_1", "Run it with --timeout=10m.", 3.0).model_copy(update={"title": title})
    assert [i.text for i in pack([lead, fix], 400)] == [fix.text]
    assert [i.text for i in pack([lead], 400)] == [lead.text]


def test_a_line_another_packed_line_says_with_a_speaker_or_a_date_more_is_cut() -> None:
    """A fact page's claim is the sentence as said ("user: I take …"), and the dialogue's page
    holds the same sentence: one line, not the same words twice."""
    fact = _item("pg_1", "user: I take propranolol every morning.", 2.0)
    talk = _item("pg_2", "I take propranolol every morning.", 1.5)
    more = _item("pg_3", "I take propranolol every morning, and a statin at night since May.", 1.0)
    assert [i.id for i in pack([fact, talk, more], 400)] == ["pg_1", "pg_3"]
