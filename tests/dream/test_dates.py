"""Relative dates are anchored to the episode's own timestamp, and resolving is idempotent."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reverie.dream.dates import resolve_relative_dates

# 2026-11-04 is a Wednesday.
ANCHOR = datetime(2026, 11, 4, 10, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("the API changed yesterday", "the API changed yesterday (2026-11-03)"),
        ("deployed today", "deployed today (2026-11-04)"),
        ("Tonight it broke", "Tonight (2026-11-04) it broke"),
        ("this morning, this Afternoon", "this morning (2026-11-04), this Afternoon (2026-11-04)"),
        ("this evening", "this evening (2026-11-04)"),
        ("last night the job died", "last night (2026-11-03) the job died"),
        ("retry tomorrow", "retry tomorrow (2026-11-05)"),
        ("3 days ago", "3 days ago (2026-11-01)"),
        ("three days ago", "three days ago (2026-11-01)"),
        ("ten days ago", "ten days ago (2026-10-25)"),
        ("one day ago", "one day ago (2026-11-03)"),
        ("a week ago", "a week ago (2026-10-28)"),
        ("two weeks ago", "two weeks ago (2026-10-21)"),
        ("last week", "last week (week of 2026-10-26)"),
        ("next week", "next week (week of 2026-11-09)"),
        ("last Wednesday", "last Wednesday (2026-10-28)"),
        ("last monday", "last monday (2026-11-02)"),
        ("last sunday", "last sunday (2026-11-01)"),
        ("this Friday", "this Friday (2026-11-06)"),
        ("next friday", "next friday (2026-11-13)"),
        ("last month", "last month (2026-10)"),
        ("the day before yesterday", "the day before yesterday (2026-11-02)"),
        ("YESTERDAY", "YESTERDAY (2026-11-03)"),
    ],
)
def test_phrases_get_their_absolute_date(text: str, expected: str) -> None:
    assert resolve_relative_dates(text, ANCHOR) == expected


@pytest.mark.parametrize(
    "text",
    ["yesterdays", "todayish", "last weekend", "someday", "today's run", "blast month", ""],
)
def test_only_whole_phrases_match(text: str) -> None:
    assert resolve_relative_dates(text, ANCHOR) == text


def test_last_month_crosses_a_year() -> None:
    anchor = datetime(2027, 1, 15, tzinfo=UTC)
    assert resolve_relative_dates("last month", anchor) == "last month (2026-12)"


def test_the_anchor_decides_not_the_clock() -> None:
    later = ANCHOR + timedelta(days=30)
    assert resolve_relative_dates("yesterday", later) == "yesterday (2026-12-03)"


def test_the_anchor_date_is_taken_in_its_own_time_zone() -> None:
    tokyo = datetime(2026, 11, 5, 1, 0, tzinfo=timezone(timedelta(hours=9)))
    assert resolve_relative_dates("today", tokyo) == "today (2026-11-05)"


def test_an_existing_date_is_not_added_twice() -> None:
    once = resolve_relative_dates("failed yesterday and last week", ANCHOR)
    assert resolve_relative_dates(once, ANCHOR) == once
    assert resolve_relative_dates(once, ANCHOR + timedelta(days=9)) == once


_FRAGMENTS = st.sampled_from(
    [
        "today",
        "Tonight",
        "this morning",
        "yesterday",
        "last night",
        "tomorrow",
        "3 days ago",
        "two days ago",
        "a week ago",
        "last week",
        "next week",
        "last friday",
        "this Monday",
        "next sunday",
        "last month",
        "the day before yesterday",
        "deploy",
        "failed",
        "(",
        ")",
        "2026-11-01",
        ",",
        "'s",
    ]
)


@given(
    st.lists(_FRAGMENTS | st.text(max_size=8), max_size=12),
    st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2100, 1, 1)),
)
def test_resolving_is_idempotent_and_only_inserts(parts: list[str], anchor: datetime) -> None:
    text = " ".join(parts)
    once = resolve_relative_dates(text, anchor.replace(tzinfo=UTC))
    assert resolve_relative_dates(once, anchor.replace(tzinfo=UTC)) == once
    # Every input character is kept, in order: resolution only inserts.
    it = iter(once)
    assert all(ch in it for ch in text)
