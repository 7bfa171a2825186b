"""Schedule triggers that are pure functions of time: 5-field cron expressions and moon phases.

Both answer one question — "the first firing strictly after ``t``" — so
:mod:`reverie.runtime.schedule` can treat them alike. Neither reads the clock.

**Cron** is the classic 5-field syntax ``minute hour day-of-month month day-of-week`` with ``*``,
lists (``1,15``), ranges (``1-5``), steps (``*/15``, ``8-18/2``, ``5/10``), month and weekday names
(``jan``, ``mon``; weekday 0 and 7 are Sunday) and the aliases ``@hourly``, ``@daily``
(``@midnight``), ``@weekly``, ``@monthly``, ``@yearly`` (``@annually``). As in Vixie cron, when both
day-of-month and day-of-week are restricted a day matches if *either* does. Expressions are
evaluated in a time zone (UTC by default); a wall time that does not exist there (the hour skipped
when clocks go forward) does not fire, and an ambiguous one fires once, at its first occurrence.

**Moon phases** use the method of Meeus, *Astronomical Algorithms* (2nd ed., ch. 49): the mean
phase plus the periodic terms for new and full moon (the small planetary terms, under 30 s, are
left out) and a fixed ΔT of 69 s. Instants agree with published tables to within about two
minutes for the 21st century.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from reverie.errors import InvalidInput

__all__ = ["MOON_PHASES", "Cron", "moon_phase_after", "parse_cron", "zone"]

_ALIASES = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_MONTH_NAMES = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTHS = {m: i for i, m in enumerate(_MONTH_NAMES, 1)}
_DAYS = {d: i for i, d in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))}
# (name, low, high, names) per field, in order
_FIELDS: tuple[tuple[str, int, int, dict[str, int]], ...] = (
    ("minute", 0, 59, {}),
    ("hour", 0, 23, {}),
    ("day of month", 1, 31, {}),
    ("month", 1, 12, _MONTHS),
    ("day of week", 0, 7, _DAYS),
)
_HORIZON_DAYS = 366 * 8  # covers Feb 29 on a given weekday (the rarest real match)


def zone(name: str) -> ZoneInfo:
    """The IANA time zone ``name``, or :class:`InvalidInput` naming it."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise InvalidInput("timezone", f"unknown time zone {name!r}") from None


@dataclass(frozen=True)
class Cron:
    """A parsed cron expression; :meth:`next_after` is the only question it answers."""

    text: str
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 = Sunday
    any_day: bool  # day-of-month field is '*'
    any_weekday: bool  # day-of-week field is '*'

    def _day_matches(self, t: datetime) -> bool:
        dom = t.day in self.days
        dow = (t.weekday() + 1) % 7 in self.weekdays
        if self.any_day or self.any_weekday:
            return dom and dow
        return dom or dow

    def next_after(self, t: datetime, tz: str = "UTC") -> datetime:
        """The first firing strictly after ``t`` (aware), as an aware UTC datetime."""
        where = zone(tz)
        local = t.astimezone(where).replace(tzinfo=None, second=0, microsecond=0)
        local += timedelta(minutes=1)
        end = local + timedelta(days=_HORIZON_DAYS)
        while local < end:
            step = self._advance(local)
            if step is None:
                fired = _localize(local, where)
                if fired is not None and fired > t:
                    return fired.astimezone(UTC)
                step = local + timedelta(minutes=1)
            local = step
        raise InvalidInput("cron", f"{self.text!r} never fires")

    def _advance(self, t: datetime) -> datetime | None:
        """None when ``t`` (naive, local) matches; else the next candidate worth checking."""
        if t.month not in self.months:
            year, month = (t.year + 1, 1) if t.month == 12 else (t.year, t.month + 1)
            return datetime(year, month, 1)
        if not self._day_matches(t):
            return datetime(t.year, t.month, t.day) + timedelta(days=1)
        if t.hour not in self.hours:
            return t.replace(minute=0) + timedelta(hours=1)
        if t.minute not in self.minutes:
            return t + timedelta(minutes=1)
        return None


def _localize(naive: datetime, where: ZoneInfo) -> datetime | None:
    """``naive`` wall time in ``where``; None when that wall time does not exist there."""
    aware = naive.replace(tzinfo=where)
    back = aware.astimezone(UTC).astimezone(where).replace(tzinfo=None)
    return aware if back == naive else None


def _value(text: str, low: int, high: int, names: dict[str, int], field: str) -> int:
    key = text.lower()
    if key in names:
        return names[key]
    if not text.isdigit():
        raise InvalidInput("cron", f"{field}: {text!r} is not a number or a name")
    value = int(text)
    if not low <= value <= high:
        raise InvalidInput("cron", f"{field}: {value} is outside {low}-{high}")
    return value


def _item(text: str, low: int, high: int, names: dict[str, int], field: str) -> set[int]:
    base, _, step_text = text.partition("/")
    step = _value(step_text, 1, high - low + 1, {}, field) if step_text else 1
    if base == "*":
        start, stop = low, high
    elif "-" in base:
        a, _, b = base.partition("-")
        start, stop = _value(a, low, high, names, field), _value(b, low, high, names, field)
        if start > stop:
            raise InvalidInput("cron", f"{field}: range {base!r} runs backwards")
    else:
        start = _value(base, low, high, names, field)
        stop = high if step_text else start
    return set(range(start, stop + 1, step))


def _field(text: str, index: int) -> frozenset[int]:
    field, low, high, names = _FIELDS[index]
    values: set[int] = set()
    for item in text.split(","):
        if not item:
            raise InvalidInput("cron", f"{field}: empty item in {text!r}")
        values |= _item(item, low, high, names, field)
    if index == 4 and 7 in values:  # Sunday is 0 and 7
        values = (values - {7}) | {0}
    return frozenset(values)


def parse_cron(text: str) -> Cron:
    """Parse a 5-field cron expression or alias; :class:`InvalidInput` says what is wrong."""
    expanded = _ALIASES.get(text.strip().lower(), text)
    parts = expanded.split()
    if len(parts) != 5:
        raise InvalidInput(
            "cron", f"{text!r} has {len(parts)} fields; want 5 (minute hour day month weekday)"
        )
    sets = [_field(p, i) for i, p in enumerate(parts)]
    return Cron(
        text=text,
        minutes=sets[0],
        hours=sets[1],
        days=sets[2],
        months=sets[3],
        weekdays=sets[4],
        any_day=parts[2] == "*",
        any_weekday=parts[4] == "*",
    )


# -- moon phases (Meeus, ch. 49) -----------------------------------------------------------------

MOON_PHASES = ("new", "full")
_SYNODIC = 29.530588861
_J2000 = datetime(2000, 1, 1, 12, tzinfo=UTC)  # JD 2451545.0
_DELTA_T_S = 69.0
# Meeus table 49.A: the periodic terms of the true new and full moon share their arguments and
# differ only in their coefficients. (new-moon coefficient, full-moon coefficient, power of E,
# multiples of (M, M', F, Omega))
_TERMS = (
    (-0.40720, -0.40614, 0, (0, 1, 0, 0)),
    (0.17241, 0.17302, 1, (1, 0, 0, 0)),
    (0.01608, 0.01614, 0, (0, 2, 0, 0)),
    (0.01039, 0.01043, 0, (0, 0, 2, 0)),
    (0.00739, 0.00734, 1, (-1, 1, 0, 0)),
    (-0.00514, -0.00515, 1, (1, 1, 0, 0)),
    (0.00208, 0.00209, 2, (2, 0, 0, 0)),
    (-0.00111, -0.00111, 0, (0, 1, -2, 0)),
    (-0.00057, -0.00057, 0, (0, 1, 2, 0)),
    (0.00056, 0.00056, 1, (1, 2, 0, 0)),
    (-0.00042, -0.00042, 0, (0, 3, 0, 0)),
    (0.00042, 0.00042, 1, (1, 0, 2, 0)),
    (0.00038, 0.00038, 1, (1, 0, -2, 0)),
    (-0.00024, -0.00024, 1, (-1, 2, 0, 0)),
    (-0.00017, -0.00017, 0, (0, 0, 0, 1)),
    (-0.00007, -0.00007, 0, (2, 1, 0, 0)),
    (0.00004, 0.00004, 0, (0, 2, -2, 0)),
    (0.00004, 0.00004, 0, (3, 0, 0, 0)),
    (0.00003, 0.00003, 0, (1, 1, -2, 0)),
    (0.00003, 0.00003, 0, (0, 2, 2, 0)),
    (-0.00003, -0.00003, 0, (1, 1, 2, 0)),
    (0.00003, 0.00003, 0, (-1, 1, 2, 0)),
    (-0.00002, -0.00002, 0, (-1, 1, -2, 0)),
    (-0.00002, -0.00002, 0, (1, 3, 0, 0)),
    (0.00002, 0.00002, 0, (0, 4, 0, 0)),
)


def _phase_instant(k: float, phase: str) -> datetime:
    """The true new (integer ``k``) or full (``k`` + 0.5) moon of lunation ``k`` since 2000."""
    t = k / 1236.85
    jde = (
        2451550.09766 + _SYNODIC * k + 0.00015437 * t**2 - 0.000000150 * t**3
        + 0.00000000073 * t**4
    )  # fmt: skip
    e = 1 - 0.002516 * t - 0.0000074 * t**2
    m = math.radians(2.5534 + 29.10535670 * k - 0.0000014 * t**2 - 0.00000011 * t**3)
    mp = math.radians(
        201.5643 + 385.81693528 * k + 0.0107582 * t**2 + 0.00001238 * t**3 - 0.000000058 * t**4
    )
    f = math.radians(
        160.7108 + 390.67050284 * k - 0.0016118 * t**2 - 0.00000227 * t**3 + 0.000000011 * t**4
    )
    om = math.radians(124.7746 - 1.56375588 * k + 0.0020672 * t**2 + 0.00000215 * t**3)
    for new, full, e_power, (a, b, c, d) in _TERMS:
        coeff = new if phase == "new" else full
        jde += coeff * e**e_power * math.sin(a * m + b * mp + c * f + d * om)
    return _J2000 + timedelta(days=jde - 2451545.0, seconds=-_DELTA_T_S)


def moon_phase_after(t: datetime, phase: str) -> datetime:
    """The first ``phase`` (``"new"`` or ``"full"``) moon strictly after ``t``, in UTC."""
    if phase not in MOON_PHASES:
        raise InvalidInput("moon", f"{phase!r} is not one of {', '.join(MOON_PHASES)}")
    offset = 0.5 if phase == "full" else 0.0
    k = math.floor((t - _J2000).total_seconds() / 86400 / _SYNODIC) - 1 + offset
    while True:
        instant = _phase_instant(k, phase)
        if instant > t:
            return instant
        k += 1
