"""The schedule is a pure function: a table of (state, config, now) -> when, and its triggers."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from reverie.config import parse_duration
from reverie.errors import InvalidInput
from reverie.runtime.schedule import Due, ScheduleConfig, ScheduleState, next_due
from reverie.runtime.triggers import moon_phase_after, parse_cron

T = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)  # a Monday
H = timedelta(hours=1)
DAY = timedelta(days=1)


def S(**kw: object) -> ScheduleState:
    return ScheduleState(first_seen=kw.pop("first_seen", T - 30 * DAY), **kw)  # type: ignore[arg-type]


def C(**kw: object) -> ScheduleConfig:
    return ScheduleConfig(**kw)  # type: ignore[arg-type]


NEVER = None
TABLE: list[tuple[str, ScheduleState, ScheduleConfig, datetime, datetime | None, bool]] = [
    # name, state, config, now, expected due.at, ready now?
    ("interval, not yet", S(last_run=T - 2 * H), C(interval=6 * H), T, T + 4 * H, False),
    ("interval, exactly due", S(last_run=T - 6 * H), C(interval=6 * H), T, T, True),
    ("interval, overdue keeps slot", S(last_run=T - 3 * DAY), C(interval=DAY), T, T - 2 * DAY,
     True),
    ("never ran: anchor is first seen", S(first_seen=T - H), C(interval=6 * H), T, T + 5 * H,
     False),
    ("never ran, episodes pending: due at once", S(first_seen=T - H, pending=4),
     C(interval=6 * H), T, T - H, True),
    ("never ran, pending, cron: due at once", S(first_seen=T - H, pending=1),
     C(interval=None, cron="0 3 * * *"), T, T - H, True),
    ("never ran, pending, episodes gate still holds", S(first_seen=T - H, pending=4),
     C(interval=DAY, min_new_episodes=10), T, T + timedelta(minutes=5), False),
    ("never ran, pending, disabled", S(first_seen=T - H, pending=4), C(enabled=False), T, NEVER,
     False),
    ("disabled", S(last_run=T - DAY), C(enabled=False), T, NEVER, False),
    ("nothing configured", S(), C(interval=None), T, NEVER, False),
    # backoff: interval / divisor, doubling per failure, never past the interval
    ("backoff 1st failure", S(last_run=T - H, failures=1), C(interval=8 * H), T, T + H, False),
    ("backoff 2nd failure", S(last_run=T - H, failures=2), C(interval=8 * H), T, T + 3 * H, False),
    ("backoff capped", S(last_run=T - H, failures=9), C(interval=8 * H), T, T + 7 * H, False),
    ("backoff divisor 2", S(last_run=T, failures=1), C(interval=8 * H, backoff_divisor=2), T,
     T + 4 * H, False),
    # gates, AND / OR
    ("and: episodes short", S(last_run=T - DAY, pending=3),
     C(interval=H, min_new_episodes=10), T, T + timedelta(minutes=5), False),
    ("and: episodes enough", S(last_run=T - DAY, pending=10),
     C(interval=H, min_new_episodes=10), T, T - 23 * H, True),
    ("and: hours short", S(last_run=T - H, last_success=T - H, pending=50),
     C(interval=H, min_hours=4, min_new_episodes=10), T, T + 3 * H, False),
    ("or: hours short, episodes enough", S(last_run=T - H, last_success=T - H, pending=50),
     C(interval=H, min_hours=4, min_new_episodes=10, gate="or"), T, T, True),
    ("or: both closed -> earliest", S(last_run=T - H, last_success=T - H, pending=1),
     C(interval=H, min_hours=4, min_new_episodes=10, gate="or"), T, T + timedelta(minutes=5),
     False),
    ("and: future slot pushed by hours", S(last_run=T, last_success=T),
     C(interval=H, min_hours=3), T, T + 3 * H, False),
    ("gates only: runs when open", S(last_run=T - 10 * H, last_success=T - 10 * H, pending=20),
     C(interval=None, min_new_episodes=20), T, T - 10 * H, True),
    ("gates only: waits", S(last_run=T - 10 * H, pending=2),
     C(interval=None, min_new_episodes=20, recheck=timedelta(minutes=1)), T,
     T + timedelta(minutes=1), False),
    # cron and calendar triggers (the earliest trigger wins)
    ("cron 02:30 weekdays", S(last_run=T - H), C(interval=None, cron="30 2 * * 1-5"), T,
     datetime(2026, 11, 3, 2, 30, tzinfo=UTC), False),
    ("cron missed slot", S(last_run=T - 3 * DAY), C(interval=None, cron="0 3 * * *"), T,
     datetime(2026, 10, 31, 3, 0, tzinfo=UTC), True),
    ("full moon", S(last_run=T), C(interval=None, moon=("full",)), T,
     datetime(2026, 11, 24, 14, 53, 50, 90669, tzinfo=UTC), False),
    ("new moon before full", S(last_run=T), C(interval=None, moon=("full", "new")), T,
     datetime(2026, 11, 9, 7, 2, 16, 595814, tzinfo=UTC), False),
    ("interval beats the moon", S(last_run=T), C(interval=DAY, moon=("full",)), T, T + DAY, False),
]  # fmt: skip


@pytest.mark.parametrize(
    ("state", "config", "now", "expected", "ready"),
    [row[1:] for row in TABLE],
    ids=[row[0] for row in TABLE],
)
def test_next_due_table(
    state: ScheduleState,
    config: ScheduleConfig,
    now: datetime,
    expected: datetime | None,
    ready: bool,
) -> None:
    due = next_due(state, config, now)
    assert due.at == expected, due.reason
    assert due.ready(now) is ready


def test_missed_slot_is_reported_for_catch_up() -> None:
    due = next_due(S(last_run=T - 3 * DAY), C(interval=DAY), T)
    assert due.missed(T, timedelta(seconds=60))
    assert not Due(T, T, "").missed(T, timedelta(seconds=60))


def test_next_due_is_pure() -> None:
    state, config = S(last_run=T - 2 * H, pending=4), C(interval=6 * H, min_new_episodes=2)
    assert next_due(state, config, T) == next_due(state, config, T)


@pytest.mark.parametrize(
    ("expr", "after", "expected"),
    [
        ("*/15 * * * *", datetime(2026, 1, 1, 10, 7), datetime(2026, 1, 1, 10, 15)),
        ("0 9-17/4 * * *", datetime(2026, 1, 1, 10, 0), datetime(2026, 1, 1, 13, 0)),
        ("0 0 1 jan *", datetime(2026, 3, 1), datetime(2027, 1, 1)),
        ("0 12 * * sun", datetime(2026, 11, 2), datetime(2026, 11, 8, 12)),
        ("0 12 * * 7", datetime(2026, 11, 2), datetime(2026, 11, 8, 12)),
        ("0 0 13 * 5", datetime(2026, 11, 2), datetime(2026, 11, 6)),  # dom OR dow
        ("0 0 29 2 *", datetime(2026, 3, 1), datetime(2028, 2, 29)),
        ("@hourly", datetime(2026, 1, 1, 10, 0), datetime(2026, 1, 1, 11, 0)),
        ("@weekly", datetime(2026, 11, 2), datetime(2026, 11, 8)),
        ("5,35 * * * *", datetime(2026, 1, 1, 10, 5), datetime(2026, 1, 1, 10, 35)),
    ],
)
def test_cron_next_after(expr: str, after: datetime, expected: datetime) -> None:
    assert parse_cron(expr).next_after(after.replace(tzinfo=UTC)) == expected.replace(tzinfo=UTC)


def test_cron_in_a_time_zone_skips_the_missing_hour() -> None:
    cron = parse_cron("30 2 * * *")  # 02:30 does not exist in New York on 2026-03-08
    fired = cron.next_after(datetime(2026, 3, 8, tzinfo=UTC), "America/New_York")
    assert fired == datetime(2026, 3, 9, 6, 30, tzinfo=UTC)  # 02:30 EDT the next day


@pytest.mark.parametrize(
    "bad", ["* * * *", "60 * * * *", "* * 0 * *", "5-1 * * * *", "x * * * *", "*/0 * * * *"]
)
def test_cron_rejects_bad_expressions(bad: str) -> None:
    with pytest.raises(InvalidInput):
        parse_cron(bad)


@pytest.mark.parametrize(
    ("after", "phase", "published"),
    [  # published instants (UTC), e.g. timeanddate.com / lunaf.com
        ("2026-11-01", "new", datetime(2026, 11, 9, 7, 2)),
        ("2026-11-10", "full", datetime(2026, 11, 24, 14, 53)),
        ("2026-08-01", "new", datetime(2026, 8, 12, 17, 37)),  # total solar eclipse day
        ("2026-02-25", "full", datetime(2026, 3, 3, 11, 38)),  # total lunar eclipse day
        ("2024-10-10", "full", datetime(2024, 10, 17, 11, 26)),
        ("2024-11-10", "full", datetime(2024, 11, 15, 21, 28)),
        ("2016-11-10", "full", datetime(2016, 11, 14, 13, 52)),
    ],
)
def test_moon_phases_match_published_dates(after: str, phase: str, published: datetime) -> None:
    start = datetime.fromisoformat(after).replace(tzinfo=UTC)
    found = moon_phase_after(start, phase)
    assert abs(found - published.replace(tzinfo=UTC)) < timedelta(minutes=3)


def test_moon_phase_is_strictly_after() -> None:
    full = moon_phase_after(T, "full")
    assert moon_phase_after(full, "full") - full > timedelta(days=29)


@pytest.mark.parametrize(
    ("text", "seconds"), [("90s", 90), ("15m", 900), ("6h", 21600), ("30d", 2592000), (45, 45)]
)
def test_parse_duration(text: str | int, seconds: int) -> None:
    assert parse_duration(text) == timedelta(seconds=seconds)


def test_config_validates() -> None:
    with pytest.raises(InvalidInput):
        ScheduleConfig(cron="bad")
    with pytest.raises(InvalidInput):
        ScheduleConfig(moon=("blue",))
    with pytest.raises(InvalidInput):
        ScheduleConfig(timezone="Mars/Olympus")
    with pytest.raises(InvalidInput):
        parse_duration("soon")
