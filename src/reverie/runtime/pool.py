"""A bounded pool of threads, each owning one engine that no other thread touches.

A sqlite3 connection must not be shared across threads, and a PostgreSQL connection runs one
transaction at a time, so each worker makes its own engine — its own store, its own
connection — as it starts, in its own thread, and closes it there when the pool closes.
:meth:`EnginePool.start` waits until every worker has its engine (or one failed to make it),
so a bad target fails at once and no call pays for opening a connection.

Jobs wait in one queue; a coroutine that awaits :meth:`EnginePool.run` waits on a future the
worker settles through the loop (``call_soon_threadsafe``), so the loop never blocks on a job.
A job cannot be interrupted: cancelling the awaiting task abandons the result, while the job
runs to its end (a write commits or rolls back whole, as every write does).
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from reverie.engine import Reverie

__all__ = ["EnginePool"]

R = TypeVar("R")


@dataclass(frozen=True)
class _Job:
    work: Callable[[Reverie], Any]
    future: asyncio.Future[Any]


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.cancelled():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


class EnginePool:
    """``size`` threads; ``make`` builds each thread's engine, in that thread, as it starts."""

    def __init__(self, make: Callable[[], Reverie], size: int, loop: asyncio.AbstractEventLoop):
        if size < 1:
            raise ValueError("an engine pool needs at least one worker")
        self.size = size
        self._make = make
        self._loop = loop
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._ready = [loop.create_future() for _ in range(size)]
        self._done = [loop.create_future() for _ in range(size)]
        self._closed = False
        for n in range(size):
            threading.Thread(
                target=self._serve, args=(n,), name=f"reverie-worker-{n}", daemon=True
            ).start()

    async def start(self) -> None:
        """Wait until every worker has made its engine; on a failure, close and raise it."""
        try:
            await asyncio.gather(*self._ready)
        except BaseException:
            await self.close()
            raise

    async def run(self, work: Callable[[Reverie], R]) -> R:
        """``work(engine)`` on a worker's engine, awaited without blocking the loop."""
        if self._closed:
            raise RuntimeError("this AsyncReverie is closed")
        future: asyncio.Future[R] = self._loop.create_future()
        self._jobs.put(_Job(work, future))
        return await future

    async def close(self) -> None:
        """Let queued jobs finish, then close every worker's engine in its own thread."""
        if self._closed:
            return
        self._closed = True
        for _ in range(self.size):
            self._jobs.put(None)
        await asyncio.gather(*self._done)

    def _serve(self, n: int) -> None:
        engine, error = _made(self._make)
        self._loop.call_soon_threadsafe(_settle, self._ready[n], None, error)
        try:
            while (job := self._jobs.get()) is not None:
                self._one(engine, job, error)
        finally:
            closing = _close(engine)
            self._loop.call_soon_threadsafe(_settle, self._done[n], None, closing)

    def _one(self, engine: Reverie | None, job: _Job, failed: BaseException | None) -> None:
        result: Any = None
        error = failed
        if engine is not None:
            try:
                result = job.work(engine)
            except BaseException as exc:  # handed to the awaiting coroutine, never lost here
                error = exc
        self._loop.call_soon_threadsafe(_settle, job.future, result, error)


def _made(make: Callable[[], Reverie]) -> tuple[Reverie | None, BaseException | None]:
    try:
        return make(), None
    except BaseException as exc:  # raised by start(); a job that reaches this worker gets it
        return None, exc


def _close(engine: Reverie | None) -> BaseException | None:
    if engine is None:
        return None
    try:
        engine.close()
    except Exception as exc:  # raised by close(), after every worker has stopped
        return exc
    return None
