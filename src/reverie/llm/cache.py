"""The response cache: a model answer stored under a hash of everything that produced it.

The key covers the model, the prompt version and the whole input (system prompt, user prompt,
schema, output limit), so a cycle re-run after a crash or an undo finds every unchanged group
already answered and pays for nothing twice, while any change of input, prompt or model misses.
The SQLite store implements the same two methods in its ``model_cache`` table; the write happens
outside the cycle transaction because it is not cycle state.
"""

from __future__ import annotations

import copy
from typing import Any

from reverie.hashing import content_hash
from reverie.store.base import ResponseCache

__all__ = ["MemoryCache", "ResponseCache", "cache_key"]


def cache_key(model: str, prompt_version: str, **inputs: Any) -> str:
    """``sha256:<hex>`` of the model, the prompt version and every input of the call."""
    return content_hash({"model": model, "prompt_version": prompt_version, "inputs": inputs})


class MemoryCache:
    """A :class:`ResponseCache` in a dict, for tests and for runs without a store."""

    def __init__(self) -> None:
        self.entries: dict[str, dict[str, Any]] = {}

    def cache_get(self, key: str) -> dict[str, Any] | None:
        found = self.entries.get(key)
        return copy.deepcopy(found) if found is not None else None

    def cache_put(self, key: str, value: dict[str, Any]) -> None:
        self.entries[key] = copy.deepcopy(value)
