"""``AsyncReverie`` on real stores: the same verbs as ``Reverie``, and a loop that never blocks.

The loop's health is measured, not assumed: a ticker task sleeps 5 ms at a time and records how
late each wake-up is while 50 ``remember`` and 50 ``recall`` calls run at once. The same recalls
run synchronously on the loop show that the ticker does see a blocked loop.

A call that blocks the loop blocks it every time it runs; a shared machine also stalls a whole
process now and then. So a burst whose ticker was late by more than the limit is run again, up
to :data:`ATTEMPTS` bursts, and the test fails only when every burst saw the loop blocked.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest

from reverie import AsyncReverie, NotFound, Reverie, Scope, StoreError
from reverie.cli.demo import load_sample

T = TypeVar("T")
CALLS = 50
BLOCK_LIMIT_S = 0.050
ATTEMPTS = 3
TICK_S = 0.005
QUERY = "deploy to staging with kubectl"
NOT_VERBS = {"open", "from_store", "close", "keys", "now"}
"""Engine members that are no verb: construction, closing, the key ring and the clock."""


def _run(main: Callable[[], Awaitable[T]]) -> T:
    return asyncio.run(main())  # type: ignore[arg-type]


async def _worst_lateness(work: Awaitable[T]) -> tuple[T, float]:
    """``work``'s result, and the latest a 5 ms ticker woke up while it ran."""
    loop = asyncio.get_running_loop()
    done = asyncio.Event()
    worst = 0.0

    async def tick() -> None:
        nonlocal worst
        while not done.is_set():
            start = loop.time()
            await asyncio.sleep(TICK_S)
            worst = max(worst, loop.time() - start - TICK_S)

    ticker = asyncio.create_task(tick())
    await asyncio.sleep(0)
    try:
        result = await work
    finally:
        done.set()
        await ticker
    return result, worst


def _seed(target: str) -> None:
    with Reverie.open(target) as rv:
        rv.ingest([e for e in load_sample() if e["scope"] == "acme/coder"])
        rv.dream("acme/coder")


def test_every_engine_verb_is_a_coroutine_with_the_same_signature() -> None:
    verbs = [
        name
        for name, member in inspect.getmembers(Reverie)
        if not name.startswith("_") and name not in NOT_VERBS and callable(member)
    ]
    assert {"remember", "recall", "dream", "add", "search", "delete"} <= set(verbs)
    for name in verbs:
        verb = getattr(AsyncReverie, name, None)
        assert verb is not None, f"AsyncReverie has no {name}"
        assert inspect.iscoroutinefunction(verb), name
        assert inspect.signature(verb) == inspect.signature(getattr(Reverie, name)), name


def test_concurrent_remember_and_recall_never_block_the_loop(target: str) -> None:
    _seed(target)

    async def burst(rv: AsyncReverie, n: int) -> float:
        before = (await rv.status("acme/coder")).episodes
        calls = [
            rv.remember({"scope": "acme/coder", "situation": f"call {n}.{i}", "action": "stored"})
            for i in range(CALLS)
        ] + [rv.recall(QUERY, "acme/coder") for _ in range(CALLS)]
        results, worst = await _worst_lateness(asyncio.gather(*calls))
        episodes, recalls = results[:CALLS], results[CALLS:]
        assert (await rv.status("acme/coder")).episodes - before == CALLS
        assert len({e.id for e in episodes}) == CALLS
        assert all(r.items and r.text == recalls[0].text for r in recalls)
        return float(worst)

    async def main() -> list[float]:
        worst: list[float] = []
        async with await AsyncReverie.open(target) as rv:
            while len(worst) < ATTEMPTS and (not worst or min(worst) >= BLOCK_LIMIT_S):
                worst.append(await burst(rv, len(worst)))
        return worst

    worst = _run(main)
    late = ", ".join(f"{w * 1000:.1f}" for w in worst)
    assert min(worst) < BLOCK_LIMIT_S, f"the loop was blocked in every burst: {late} ms"


def test_the_ticker_sees_the_same_work_blocking_the_loop(tmp_path: Any) -> None:
    target = str(tmp_path / "brain.db")
    _seed(target)

    async def blocking(rv: Reverie) -> None:
        for _ in range(CALLS):
            rv.recall(QUERY, "acme/coder")

    async def main() -> float:
        with Reverie.open(target) as rv:
            _, worst = await _worst_lateness(blocking(rv))
        return worst

    assert _run(main) > BLOCK_LIMIT_S


def test_each_worker_has_its_own_engine_and_connection(tmp_path: Any) -> None:
    target = str(tmp_path / "brain.db")

    async def main() -> set[tuple[int, int]]:
        async with await AsyncReverie.open(target, workers=3) as rv:

            def who(engine: Reverie) -> tuple[int, int]:
                threading.Event().wait(0.05)  # keep the worker busy so the others take jobs
                return threading.get_ident(), id(engine.store)

            return set(await asyncio.gather(*(rv.pool.run(who) for _ in range(12))))

    pairs = _run(main)
    threads = {t for t, _ in pairs}
    stores = {s for _, s in pairs}
    assert len(threads) == 3 and len(stores) == 3 and len(pairs) == 3


def test_errors_reach_the_caller_and_a_bad_target_fails_at_open(tmp_path: Any) -> None:
    async def main() -> None:
        async with await AsyncReverie.open(tmp_path / "brain.db") as rv:
            with pytest.raises(Exception, match="not 'tenant/agent'"):
                await rv.recall("x", "no-slash")
            assert (await rv.status()).episodes == 0  # the worker survived the error
        with pytest.raises(OSError, match="File exists"):  # as Reverie.open raises it
            await AsyncReverie.open(tmp_path / "brain.db" / "inside-a-file.db")

    _run(main)


def test_a_closed_brain_refuses_calls(tmp_path: Any) -> None:
    async def main() -> None:
        rv = await AsyncReverie.open(tmp_path / "brain.db")
        await rv.close()
        await rv.close()  # twice is fine
        with pytest.raises(RuntimeError, match="closed"):
            await rv.status()

    _run(main)


def test_memory_brain_is_one_worker_that_keeps_its_data() -> None:
    async def main() -> int:
        async with await AsyncReverie.open(":memory:", workers=8) as rv:
            assert rv.pool.size == 1
            await asyncio.gather(*(rv.add(f"note {n}", user_id="u") for n in range(5)))
            return len(await rv.get_all(user_id="u"))

    assert _run(main) == 5


def test_conventional_verbs_through_the_async_facade(target: str) -> None:
    _seed(target)

    async def main() -> None:
        async with await AsyncReverie.open(target) as rv:
            found = await rv.search(QUERY, scope="acme/coder", limit=2)
            assert found and all(0 <= (m.score or 0) <= 1 for m in found)
            receipt = await rv.retire(found[0].id)
            assert (await rv.get(found[0].id)).status == "retired"
            assert (await rv.history(found[0].id))[-1].event == "RETIRE"
            await rv.undo(receipt.cycle_id)
            assert (await rv.get(found[0].id)).status == "active"
            deletion = await rv.delete(found[0].id)
            assert deletion.pages_deleted == [found[0].id]
            assert (await rv.erasure(deletion.erasure_id)).applied
            with pytest.raises(NotFound):
                await rv.get(found[0].id)

    _run(main)


def test_the_loop_store_refuses_to_wait_on_its_own_loop() -> None:
    from reverie.store.postgres.loop import LoopPostgresStore  # noqa: PLC0415 (extra: postgres)
    from tests.pg import schema_url  # noqa: PLC0415 (skips without a server)

    with schema_url() as url:

        async def main() -> None:
            loop = asyncio.get_running_loop()
            store = await asyncio.to_thread(LoopPostgresStore, url, loop)
            try:
                with pytest.raises(StoreError, match="never from the loop itself"):
                    store.checkpoint(Scope.parse("acme/coder"))
                assert await asyncio.to_thread(store.migrate)  # from a thread it works
            finally:
                await asyncio.to_thread(store.close)

        _run(main)
