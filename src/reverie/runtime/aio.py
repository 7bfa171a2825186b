"""``AsyncReverie``: the engine's verbs, awaitable, never blocking the event loop (docs/async.md).

Every verb of :class:`~reverie.Reverie` is here under the same name, with the same parameters
and result types, as a coroutine: the call runs on one of a bounded pool of worker threads
(:mod:`reverie.runtime.pool`), each owning an engine of its own.

- SQLite: each worker opens its own connection to the file (never shared across threads);
  SQLite's write lock and ``busy_timeout`` order their writes as they order processes'.
  ``:memory:`` is one database per connection, so it gets one worker.
- PostgreSQL: each worker's store sends every statement to its own ``psycopg.AsyncConnection``
  on the event loop (:mod:`reverie.store.postgres.loop`): the SQL is the shared SQL, the loop
  awaits the database, and the Python between statements runs on the worker.

The verbs are made from the engine's own methods (:func:`offload`), so the two classes cannot
drift: a verb added to ``Reverie`` is added here by one line, and a test checks that none is
missing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from functools import partial, wraps
from pathlib import Path
from types import TracebackType
from typing import Any, Concatenate, ParamSpec, TypeVar, cast

from reverie.api.embedding import CONFIGURED
from reverie.config import Config
from reverie.embed import EmbedderLike
from reverie.engine import Reverie
from reverie.models.plan import Distiller
from reverie.runtime.pool import EnginePool
from reverie.store import open_store
from reverie.store.base import BrainStore

__all__ = ["DEFAULT_WORKERS", "AsyncReverie", "offload"]

DEFAULT_WORKERS = 4
"""Worker threads (and so connections) of an :class:`AsyncReverie` unless told otherwise."""

P = ParamSpec("P")
R = TypeVar("R")


def offload(
    method: Callable[Concatenate[Reverie, P], R],
) -> Callable[Concatenate[AsyncReverie, P], Coroutine[Any, Any, R]]:
    """``method`` of the engine as a coroutine method that runs it on a worker's engine."""

    async def verb(self: AsyncReverie, *args: P.args, **kwargs: P.kwargs) -> R:
        return await self.pool.run(lambda rv: method(rv, *args, **kwargs))

    # wraps() keeps the engine's name, docstring and signature (help(), IDEs) on the coroutine
    # method; its result is typed as the wrapper it is.
    return cast(
        "Callable[Concatenate[AsyncReverie, P], Coroutine[Any, Any, R]]", wraps(method)(verb)
    )


def _store_maker(target: str | Path, loop: asyncio.AbstractEventLoop) -> Callable[[], BrainStore]:
    text = str(target)
    if text.startswith(("postgres://", "postgresql://")):
        from reverie.store.postgres.loop import LoopPostgresStore  # noqa: PLC0415 (extra: postgres)

        return partial(LoopPostgresStore, text, loop)
    return partial(open_store, target)


def _in_memory(target: str | Path) -> bool:
    return str(target).removeprefix("sqlite://") in ("", ":memory:", "/:memory:")


class AsyncReverie:
    """:class:`~reverie.Reverie` for asyncio code.

    >>> async def main() -> None:
    ...     async with await AsyncReverie.open(":memory:") as rv:
    ...         await rv.remember({"scope": "acme/coder", "situation": "s", "action": "a"})
    """

    def __init__(self, pool: EnginePool) -> None:
        self.pool = pool

    @classmethod
    async def open(
        cls,
        target: str | Path,
        *,
        config: Config | None = None,
        embedder: EmbedderLike = CONFIGURED,
        distiller: Distiller | None = None,
        workers: int = DEFAULT_WORKERS,
    ) -> AsyncReverie:
        """Open the brain at ``target`` as :meth:`Reverie.open` does, with ``workers`` threads.

                The embedder is resolved once and shared by the workers (its model loads once); a
                ``distiller`` given is shared too, else each worker chooses one as ``Reverie.open``
                does. Every worker has opened its store (the migration runs once, under the store's
        lock) before this returns, so a bad target fails here and no call pays for a connection.
        """
        loop = asyncio.get_running_loop()
        make_store = _store_maker(target, loop)
        shared: list[EmbedderLike] = []  # the first worker's choice, then shared by all

        def make() -> Reverie:
            chosen = shared[0] if shared else embedder
            rv = Reverie.from_store(
                make_store(), config=config, embedder=chosen, distiller=distiller
            )
            if not shared:
                shared.append(rv.embedder)
            return rv

        pool = EnginePool(make, 1 if _in_memory(target) else workers, loop)
        await pool.start()
        return cls(pool)

    async def close(self) -> None:
        """Finish queued calls, then close every worker's engine and connection."""
        await self.pool.close()

    async def __aenter__(self) -> AsyncReverie:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    # episodes
    remember = offload(Reverie.remember)
    ingest = offload(Reverie.ingest)
    # dreaming
    dream = offload(Reverie.dream)
    dream_all = offload(Reverie.dream_all)
    index = offload(Reverie.index)
    reembed = offload(Reverie.reembed)
    undo = offload(Reverie.undo)
    # review mode
    plans = offload(Reverie.plans)
    plan = offload(Reverie.plan)
    apply_plan = offload(Reverie.apply_plan)
    reject_plan = offload(Reverie.reject_plan)
    # reading
    recall = offload(Reverie.recall)
    search_episodes = offload(Reverie.search_episodes)
    browse_episodes = offload(Reverie.browse_episodes)
    pages_citing = offload(Reverie.pages_citing)
    pages = offload(Reverie.pages)
    page = offload(Reverie.page)
    page_path = offload(Reverie.page_path)
    revisions = offload(Reverie.revisions)
    why = offload(Reverie.why)
    cycles = offload(Reverie.cycles)
    cycle = offload(Reverie.cycle)
    episode = offload(Reverie.episode)
    episodes = offload(Reverie.episodes)
    status = offload(Reverie.status)
    scopes = offload(Reverie.scopes)
    # memory over time
    restore = offload(Reverie.restore)
    edit_page = offload(Reverie.edit_page)
    verify = offload(Reverie.verify)
    dream_stats = offload(Reverie.dream_stats)
    recall_stats = offload(Reverie.recall_stats)
    journal = offload(Reverie.journal)
    export_markdown = offload(Reverie.export_markdown)
    import_markdown = offload(Reverie.import_markdown)
    # erasure (docs/privacy.md)
    forget = offload(Reverie.forget)
    erasure = offload(Reverie.erasure)
    erasures = offload(Reverie.erasures)
    finish_erasures = offload(Reverie.finish_erasures)
    # the conventional verbs (docs/api.md)
    add = offload(Reverie.add)
    search = offload(Reverie.search)
    get = offload(Reverie.get)
    get_all = offload(Reverie.get_all)
    history = offload(Reverie.history)
    delete = offload(Reverie.delete)
    retire = offload(Reverie.retire)
