"""pack never overruns the budget, prefers value per token and is deterministic."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from reverie.models import RecallItem, Scope
from reverie.recall.pack import density, pack
from reverie.recall.render import header_tokens, line_tokens, render
from reverie.recall.tokens import count_tokens

SCOPE = Scope(tenant="acme", agent="coder")

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
scopes = st.none() | st.builds(
    Scope,
    tenant=st.from_regex(r"[a-z][a-z0-9_.-]{0,20}", fullmatch=True),
    agent=st.from_regex(r"[a-z][a-z0-9_.-]{0,20}", fullmatch=True),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(items, max_size=25), st.integers(min_value=-5, max_value=600), scopes)
def test_packed_section_never_exceeds_budget(
    candidates: list[RecallItem], budget: int, scope: Scope | None
) -> None:
    packed = pack(candidates, budget, scope=scope)
    text = render(packed, scope=scope)
    assert count_tokens(text) <= max(budget, 0)
    if packed:
        assert count_tokens(text) == header_tokens(scope) + sum(i.tokens for i in packed)


@given(st.lists(items, max_size=25), st.integers(min_value=0, max_value=600))
def test_packed_in_value_per_token_order(candidates: list[RecallItem], budget: int) -> None:
    packed = pack(candidates, budget, scope=SCOPE)
    assert all(i.tokens == line_tokens(i) for i in packed)
    values = [density(i) for i in packed]
    assert values == sorted(values, reverse=True)


@given(st.lists(items, max_size=25), st.integers(min_value=0, max_value=600), st.randoms())
def test_pack_is_deterministic_whatever_the_input_order(
    candidates: list[RecallItem], budget: int, rnd: object
) -> None:
    shuffled = list(candidates)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    assert pack(candidates, budget, scope=SCOPE) == pack(shuffled, budget, scope=SCOPE)


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
    assert pack(candidates, header_tokens(SCOPE), scope=SCOPE) == []
    assert render(pack(candidates, 3, scope=SCOPE), scope=SCOPE) == ""


def test_skips_a_unit_that_does_not_fit_and_takes_smaller_ones() -> None:
    big = _item("big", "word " * 200, 100.0)
    small = _item("small", "a short useful line", 1.0)
    budget = header_tokens(SCOPE) + line_tokens(small) + 2
    assert [i.id for i in pack([big, small], budget, scope=SCOPE)] == ["small"]


def test_denser_unit_wins_and_ties_break_by_score_then_id() -> None:
    a = _item("a", "same length text", 2.0)
    b = _item("b", "same length text", 2.0)
    c = _item("c", "same length text", 1.0)
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


def test_an_episode_a_packed_page_answers_for_is_not_repeated_and_its_room_comes_back() -> None:
    early = _episode("ep-1", "kubectl apply timed out on the api deploy", 2.0)
    page = _item("pg_1", "Wait with kubectl rollout status --timeout=10m.", 1.0)
    other = _episode("ep-9", "helm upgrade of the worker chart succeeded", 0.5)
    covers = {"pg_1": frozenset({"ep-1", "ep-2"})}
    packed = pack([early, page, other], 400, covers=covers)
    assert [i.id for i in packed] == ["pg_1", "ep-9"]  # ep-1 came first, was taken out again
    assert {i.id for i in pack([early, page, other], 400)} == {"ep-1", "pg_1", "ep-9"}
    tight = line_tokens(page) + line_tokens(other) + header_tokens(None)
    assert [i.id for i in pack([early, page, other], tight, covers=covers)] == ["pg_1", "ep-9"]
