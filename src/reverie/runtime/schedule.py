"""When a scope dreams next: the pure function :func:`next_due` and the settings it reads.

``next_due(state, config, now)`` never reads the clock or the store; the scheduler
(:mod:`reverie.runtime.scheduler`) loads the state, asks, sleeps until ``due.at`` and asks again.

The rules, in order:

1. **Trigger.** The *slot* is the earliest firing after the anchor — the start of the last run, or
   when the schedule first saw the scope — over every configured trigger: ``interval``, ``cron``
   and calendar triggers (``moon = ["new", "full"]``). Several missed firings collapse into one
   slot: a scheduler that was down for a week runs once, not seven times. A scope that has
   never run and has pending episodes is due at once (its slot is when it was first seen): an
   agent's first memories should not wait a whole interval to become knowledge.
2. **Backoff.** After a failed run, the slot comes earlier: ``base / backoff_divisor``, doubling
   with each consecutive failure and never later than ``base`` (``base`` is the interval, or the
   gap to the next regular firing).
3. **Gates.** A slot that has come still waits for its gates: ``min_hours`` since the last
   successful run and ``min_new_episodes`` pending, combined with ``gate = "and"`` (all
   configured gates) or ``"or"`` (any). With gates but no trigger, the scope runs whenever they
   open. An episodes gate cannot be predicted, so a closed one is checked again after
   ``recheck``.

``due.at <= now`` means "run now"; ``due.slot`` older than ``now - grace`` means the slot was
missed while no scheduler ran — the scheduler catches it up after a random jitter (or, with
``catch_up = false``, records it as skipped).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from reverie.errors import InvalidInput
from reverie.runtime.triggers import MOON_PHASES, moon_phase_after, parse_cron, zone
from reverie.store.records import ScheduleRecord

__all__ = ["Due", "ScheduleConfig", "ScheduleState", "next_due", "parse_duration"]

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d|w)?\s*$", re.I)
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
MAX_DURATION = timedelta(days=36525)
"""A hundred years: the longest duration any option means (a longer one is a typo)."""


def parse_duration(value: str | float | timedelta, field_name: str = "duration") -> timedelta:
    """``"90s"``, ``"15m"``, ``"6h"``, ``"30d"``, ``"2w"`` or a number of seconds."""
    if isinstance(value, timedelta):
        seconds = value.total_seconds()
    elif isinstance(value, int | float):
        seconds = float(value)
    else:
        found = _DURATION.match(value)
        if not found:
            raise InvalidInput(field_name, f"{value!r} is not a duration like 90s, 15m, 6h or 30d")
        seconds = float(found.group(1)) * _UNITS[(found.group(2) or "s").lower()]
    if not seconds <= MAX_DURATION.total_seconds():  # also refuses NaN and infinity
        raise InvalidInput(field_name, f"{value!r} is longer than a hundred years")
    return timedelta(seconds=seconds)


@dataclass(frozen=True)
class ScheduleConfig:
    """How often one scope dreams. Every field has a safe default; see the module docstring."""

    interval: timedelta | None = timedelta(hours=24)
    cron: str | None = None
    moon: tuple[str, ...] = ()
    timezone: str = "UTC"
    min_hours: float = 0.0
    min_new_episodes: int = 0
    gate: Literal["and", "or"] = "and"
    backoff_divisor: float = 4.0
    catch_up: bool = True
    jitter: timedelta = timedelta(seconds=30)
    grace: timedelta = timedelta(seconds=60)
    recheck: timedelta = timedelta(minutes=5)
    enabled: bool = True

    def __post_init__(self) -> None:
        if self.interval is not None and self.interval <= timedelta(0):
            raise InvalidInput("interval", "must be positive")
        if self.cron is not None:
            parse_cron(self.cron)
        for phase in self.moon:
            if phase not in MOON_PHASES:
                raise InvalidInput("moon", f"{phase!r} is not one of {', '.join(MOON_PHASES)}")
        zone(self.timezone)
        if self.gate not in ("and", "or"):
            raise InvalidInput("gate", "must be 'and' or 'or'")
        if self.backoff_divisor < 1:
            raise InvalidInput("backoff_divisor", "must be 1 or more")
        if self.min_hours < 0 or self.min_new_episodes < 0:
            raise InvalidInput("min_hours", "gates must be 0 (off) or more")
        if self.recheck <= timedelta(0):
            raise InvalidInput("recheck", "must be positive")

    @property
    def has_trigger(self) -> bool:
        return self.interval is not None or self.cron is not None or bool(self.moon)

    @property
    def has_gates(self) -> bool:
        return self.min_hours > 0 or self.min_new_episodes > 0


@dataclass(frozen=True)
class ScheduleState:
    """What the store remembers about one scope's schedule (plus its pending episode count)."""

    first_seen: datetime
    last_run: datetime | None = None
    last_success: datetime | None = None
    failures: int = 0
    pending: int = 0

    @classmethod
    def of(cls, record: ScheduleRecord) -> ScheduleState:
        """The state of a stored record; a crashed run counts as a failure."""
        return cls(
            first_seen=record.first_seen,
            last_run=record.last_run,
            last_success=record.last_success,
            failures=record.failures + record.crashed,
            pending=record.pending,
        )


@dataclass(frozen=True)
class Due:
    """When to act next. ``at is None``: never (disabled or nothing configured)."""

    at: datetime | None
    slot: datetime | None
    reason: str

    def ready(self, now: datetime) -> bool:
        return self.at is not None and self.at <= now

    def missed(self, now: datetime, grace: timedelta) -> bool:
        """True when the slot passed more than ``grace`` ago (no scheduler was running then)."""
        return self.slot is not None and self.slot < now - grace


def _regular(anchor: datetime, config: ScheduleConfig) -> tuple[datetime, str] | None:
    """The earliest regular firing after ``anchor`` and the trigger that fires."""
    found: list[tuple[datetime, str]] = []
    if config.interval is not None:
        found.append((anchor + config.interval, f"every {config.interval}"))
    if config.cron is not None:
        found.append((parse_cron(config.cron).next_after(anchor, config.timezone), "cron"))
    found += [(moon_phase_after(anchor, p), f"{p} moon") for p in config.moon]
    return min(found) if found else None


def _slot(state: ScheduleState, config: ScheduleConfig) -> tuple[datetime, str] | None:
    anchor = state.last_run or state.first_seen
    if state.last_run is None and state.pending > 0 and (config.has_trigger or config.has_gates):
        return anchor, f"first dream: {state.pending} episode(s) pending"
    regular = _regular(anchor, config)
    if regular is None:
        return (anchor, "gates") if config.has_gates else None
    if state.failures > 0 and state.last_run is not None:
        base = config.interval or (regular[0] - anchor)
        delay = base / config.backoff_divisor * 2 ** (state.failures - 1)
        retry = state.last_run + min(delay, base)
        if retry < regular[0]:
            return retry, f"retry after {state.failures} failed run(s)"
    return regular


def _hours_open(state: ScheduleState, config: ScheduleConfig) -> datetime | None:
    """When the ``min_hours`` gate opens; None when it is off or nothing succeeded yet."""
    if config.min_hours <= 0 or state.last_success is None:
        return None
    return state.last_success + timedelta(hours=config.min_hours)


def _gate_times(
    state: ScheduleState, config: ScheduleConfig, now: datetime
) -> list[tuple[str, datetime | None]]:
    """Each configured gate with None when open now, else the earliest time it may open."""
    gates: list[tuple[str, datetime | None]] = []
    if config.min_hours > 0:
        opens = _hours_open(state, config)
        closed = opens is not None and opens > now
        gates.append((f"{config.min_hours:g}h since the last run", opens if closed else None))
    if config.min_new_episodes > 0:
        ok = state.pending >= config.min_new_episodes
        label = f"{config.min_new_episodes} new episodes ({state.pending} now)"
        gates.append((label, None if ok else now + config.recheck))
    return gates


def next_due(state: ScheduleState, config: ScheduleConfig, now: datetime) -> Due:
    """When the scope should dream next (see the module docstring); pure."""
    if not config.enabled:
        return Due(None, None, "schedule disabled")
    slot = _slot(state, config)
    if slot is None:
        return Due(None, None, "no trigger and no gate configured")
    at, why = slot
    if at > now:
        hours = _hours_open(state, config)
        if config.gate == "and" and hours is not None and hours > at:
            return Due(hours, at, f"{why}; waiting for {config.min_hours:g}h since the last run")
        return Due(at, at, why)
    gates = _gate_times(state, config, now)
    closed = [(name, t) for name, t in gates if t is not None]
    is_open = not closed if config.gate == "and" else len(closed) < len(gates) or not gates
    if is_open:
        return Due(at, at, why)
    times = [t for _n, t in closed if t is not None]
    wait = max(times) if config.gate == "and" else min(times)
    names = ", ".join(n for n, _t in closed)
    return Due(wait, at, f"{why}; waiting for {names}")
