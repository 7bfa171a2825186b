"""``reverie daemon``: the scheduler as a long-running process, and schedule files.

A schedule file is TOML: a ``[default]`` table and ``[scopes."tenant/agent"]`` tables whose keys
override the default for that scope::

    [default]
    interval = "6h"            # or null for none
    min_new_episodes = 20
    gate = "or"                # with min_hours
    min_hours = 12

    [scopes."acme/coder"]
    cron = "30 2 * * *"
    timezone = "Europe/Paris"
    moon = ["full"]

Durations take ``s``, ``m``, ``h``, ``d``, ``w``. SIGINT and SIGTERM stop the daemon cleanly: the
running cycle finishes, its lease is released, the process exits 0.
"""

from __future__ import annotations

import asyncio
import signal
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from reverie.api.embedding import CONFIGURED
from reverie.config import parse_duration
from reverie.embed import EmbedderLike
from reverie.engine import Reverie
from reverie.errors import InvalidInput
from reverie.models import Scope
from reverie.runtime.schedule import ScheduleConfig
from reverie.runtime.scheduler import Event, Scheduler, Schedules

__all__ = ["config_from_mapping", "load_schedules", "run_daemon"]

_DURATIONS = {"interval", "jitter", "grace", "recheck"}
_KNOWN = {f.name for f in fields(ScheduleConfig)}


def config_from_mapping(
    data: Mapping[str, Any], base: ScheduleConfig | None = None
) -> ScheduleConfig:
    """A :class:`ScheduleConfig` from TOML-style values, on top of ``base``."""
    unknown = set(data) - _KNOWN
    if unknown:
        raise InvalidInput("schedule", f"unknown setting(s): {', '.join(sorted(unknown))}")
    values: dict[str, Any] = {}
    for key, value in data.items():
        if key in _DURATIONS:
            values[key] = None if value in (None, "", "none") else parse_duration(value, key)
        elif key == "moon":
            values[key] = tuple([value] if isinstance(value, str) else value)
        else:
            values[key] = value
    return replace(base or ScheduleConfig(), **values)


def load_schedules(path: Path, base: ScheduleConfig | None = None) -> Schedules:
    """Read a schedule file (see the module docstring)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise InvalidInput("schedule", f"cannot read {path}: {exc}") from None
    default = config_from_mapping(data.get("default", {}), base)
    per_scope = {
        Scope.parse(key).key: config_from_mapping(values, default)
        for key, values in data.get("scopes", {}).items()
    }
    return Schedules(default=default, per_scope=per_scope)


async def _serve(scheduler: Scheduler, stop: asyncio.Event, once: bool) -> None:
    if once:
        await scheduler.run_pending(first=True)
        return
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await scheduler.start()
    await stop.wait()
    await scheduler.stop()


def run_daemon(  # noqa: PLR0913 (keyword-only options, one per `reverie daemon` flag)
    db: str,
    schedules: Schedules,
    *,
    lease_ttl: float = 60.0,
    max_sleep: float = 60.0,
    owner: str | None = None,
    once: bool = False,
    on_event: Callable[[Event], None] | None = None,
    on_phase: Callable[[str], None] | None = None,
    embedder: EmbedderLike = CONFIGURED,
) -> list[Any]:
    """Run the scheduler until SIGINT/SIGTERM (or one pass with ``once``); the reports made.
    ``embedder``: as :meth:`Reverie.open` takes it (the control engine reads no vectors)."""
    with Reverie.open(db, embedder=embedder) as opened, Reverie.open(db, embedder=None) as control:
        rv = opened
        if on_phase is not None:
            rv = Reverie(
                opened.store,
                config=opened.config,
                embedder=opened.embedder,
                distiller=opened.distiller,
                on_phase=on_phase,
            )
        scheduler = Scheduler(
            rv,
            schedules,
            control=control.store,
            owner=owner,
            lease_ttl=lease_ttl,
            max_sleep=max_sleep,
            on_event=on_event,
        )
        asyncio.run(_serve(scheduler, asyncio.Event(), once))
        return scheduler.reports
