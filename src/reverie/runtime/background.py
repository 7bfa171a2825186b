"""The scheduler beside a service: ``reverie serve`` and ``reverie mcp`` dream by themselves.

A service owns its event loop (uvicorn's, the MCP SDK's), so the scheduler runs on a thread of
its own with its own loop, and on brains of its own opened on the same database: the cycle's
store carries the scheduler's lease owner as its commit fence, which must not be the store the
service's own ``POST /v1/dreams`` runner fences with. Everything else is the daemon's: the same
triggers, gates, backoff, catch-up and leases (:mod:`reverie.runtime.scheduler`), so a service
and separate ``reverie daemon`` or ``reverie worker`` processes on one database never run a scope
twice at once.

A store that keeps no schedule cannot be scheduled here (both shipped stores keep one):
:meth:`start` says so once in the log and returns False, and the service runs without it.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable

from reverie.engine import Reverie
from reverie.runtime.scheduler import Event, Scheduler, Schedules

__all__ = ["BackgroundScheduler"]

log = logging.getLogger("reverie.runtime")


class BackgroundScheduler:
    """Dream on ``schedules`` over the database ``db`` until :meth:`stop`, like ``rv`` would."""

    def __init__(
        self,
        db: str,
        schedules: Schedules,
        *,
        like: Reverie,
        max_sleep: float = 60.0,
        on_event: Callable[[Event], None] | None = None,
    ) -> None:
        self.db, self.schedules, self.like = db, schedules, like
        self.max_sleep = max_sleep
        self.on_event = on_event
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()

    def start(self) -> None:
        """Start the thread, and wait until its scheduler runs."""
        self._thread = threading.Thread(target=self._run, name="reverie scheduler", daemon=True)
        self._thread.start()
        self._ready.wait(timeout=30)

    def stop(self, timeout: float = 60.0) -> None:
        """Stop cleanly: a running cycle finishes and its lease is released."""
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def _brain(self) -> Reverie:
        like = self.like
        return Reverie.open(
            self.db, config=like.config, embedder=like.embedder, distiller=like.distiller
        )

    def _run(self) -> None:
        try:
            asyncio.run(self._serve())
        except Exception:  # a broken scheduler must not take the service down with it
            log.exception("the background scheduler stopped")
        finally:
            self._ready.set()

    async def _serve(self) -> None:
        self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        with self._brain() as rv, self._brain() as control:
            scheduler = Scheduler(
                rv,
                self.schedules,
                control=control.store,
                max_sleep=self.max_sleep,
                on_event=self.on_event,
            )
            await scheduler.start()
            self._ready.set()
            await self._stop.wait()
            await scheduler.stop()
