"""What every framework test shares: no event loop a framework left open outlives its test.

Some frameworks' sync wrappers (LlamaIndex's, Pydantic AI's ``run_sync``) run their coroutines on
a loop they create, set as the thread's current loop and never close. Left alone, that loop is
collected during a later test, whose run then fails on the ResourceWarning. Each test here
closes the thread's current loop after it and collects what else was left.
"""

from __future__ import annotations

import asyncio
import gc
import warnings
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _close_leaked_loops() -> Iterator[None]:
    yield
    policy = asyncio.get_event_loop_policy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            loop = policy.get_event_loop()
        except RuntimeError:  # none is set: nothing left open
            loop = None
    if loop is not None and not loop.is_running():
        loop.close()
        policy.set_event_loop(None)
    gc.collect()
