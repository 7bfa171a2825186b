"""Anchor relative dates ("yesterday", "last week") to the day the episode happened.

A lesson written on 2026-11-04 that says "the API changed yesterday" is wrong by the time anyone
reads it in a page, so distillation keeps the phrase and adds the absolute date, computed from the
episode's own timestamp (never from the clock): "the API changed yesterday (2026-11-03)".

Rules, with ``d`` the calendar date of ``anchor`` in the anchor's own time zone (episodes carry
UTC timestamps, so in practice the UTC date):

* today, tonight, this morning/afternoon/evening -> ``d``; yesterday, last night -> ``d - 1``;
  tomorrow -> ``d + 1``; the day before yesterday / the day after tomorrow -> ``d ∓ 2``;
* N days ago / N weeks ago (digits or one..ten, "a"/"an") -> ``d - N`` days / weeks;
* last / this / next week -> "week of <Monday>" of the week before / of / after ``d``;
* last <weekday> -> the latest such day strictly before ``d``; this <weekday> -> that day in the
  Monday-to-Sunday week of ``d``; next <weekday> -> that day in the following week;
* last / this / next month -> "YYYY-MM".

Invariants: matching is case-insensitive and word-bounded; the output keeps every input character
and only inserts " (date)" after a phrase; a phrase already followed by " (" and a date is left
alone, so the function is idempotent.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

__all__ = ["resolve_relative_dates"]

_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
}
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_DAY_SHIFT = {"yesterday": -1, "last night": -1, "tomorrow": 1}

_PHRASE = re.compile(
    r"\b(?:"
    r"(?P<before>(?:the\s+)?day\s+before\s+yesterday)"
    r"|(?P<after>(?:the\s+)?day\s+after\s+tomorrow)"
    r"|(?P<same>today|tonight|this\s+(?:morning|afternoon|evening))"
    r"|(?P<shift>yesterday|last\s+night|tomorrow)"
    r"|(?P<count>\d{1,3}|" + "|".join(sorted(_NUMBERS, key=len, reverse=True)) + r")"
    r"\s+(?P<unit>days?|weeks?)\s+ago"
    r"|(?P<rel>last|this|next)\s+(?P<what>week|month|" + "|".join(_WEEKDAYS) + r")"
    r")\b"
    r"(?!['’]\w)"
    r"(?!\s*\((?:week\s+of\s+)?\d{4}-\d{2})",
    re.IGNORECASE,
)


def _monday(day: date) -> date:
    return day - timedelta(days=day.weekday())


def _month(day: date, step: int) -> str:
    index = day.year * 12 + (day.month - 1) + step
    return f"{index // 12:04d}-{index % 12 + 1:02d}"


def _weekday(day: date, rel: str, name: str) -> date:
    target = _WEEKDAYS.index(name)
    if rel == "last":
        back = (day.weekday() - target) % 7 or 7
        return day - timedelta(days=back)
    week = _monday(day) + timedelta(days=7 if rel == "next" else 0)
    return week + timedelta(days=target)


def _relative(day: date, rel: str, what: str) -> str:
    step = {"last": -1, "this": 0, "next": 1}[rel]
    if what == "week":
        return f"week of {_monday(day) + timedelta(days=7 * step):%Y-%m-%d}"
    if what == "month":
        return _month(day, step)
    return _weekday(day, rel, what).isoformat()


def _ago(day: date, count: str, unit: str) -> str:
    n = int(count) if count.isdigit() else _NUMBERS[count]
    days = n * 7 if unit.startswith("week") else n
    return (day - timedelta(days=days)).isoformat()


def _label(match: re.Match[str], day: date) -> str:
    """The absolute date (or week / month) a matched phrase stands for."""
    groups = {k: v.lower() for k, v in match.groupdict().items() if v}
    squashed = " ".join(match.group(0).lower().split())
    if "before" in groups or "after" in groups:
        return (day + timedelta(days=-2 if "before" in groups else 2)).isoformat()
    if "same" in groups:
        return day.isoformat()
    if "shift" in groups:
        return (day + timedelta(days=_DAY_SHIFT[squashed])).isoformat()
    if "count" in groups:
        return _ago(day, groups["count"], groups["unit"])
    return _relative(day, groups["rel"], groups["what"])


def resolve_relative_dates(text: str, anchor: datetime) -> str:
    """Return ``text`` with the absolute date added after every relative date phrase.

    >>> from datetime import datetime, UTC
    >>> resolve_relative_dates("the API changed yesterday", datetime(2026, 11, 4, 10, tzinfo=UTC))
    'the API changed yesterday (2026-11-03)'
    """
    day = anchor.date()

    def add_date(match: re.Match[str]) -> str:
        try:
            return f"{match.group(0)} ({_label(match, day)})"
        except OverflowError:  # a date before year 1 or after 9999: leave the phrase as it is
            return match.group(0)

    return _PHRASE.sub(add_date, text)
