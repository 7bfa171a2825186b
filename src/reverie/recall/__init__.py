"""Recall: the knowledge of a brain, packed into a prompt section under a token budget.

:func:`recall` is the entry point (the engine's ``recall`` calls it); the pure parts it is built
from are public for callers that bring their own candidates: :func:`query_terms` (what to search
for), :func:`pack` (what fits), :func:`render` (the section text) and :func:`count_tokens` (the
offline token estimate all of them price with). A :class:`RecallTrace` passed to
:func:`recall` comes back filled with why each unit was packed or cut (``explain``).
:data:`MODEL_GUIDANCE` is the sentence an agent's system prompt should carry about the
section's fence (docs/service.md).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# ``pack`` and ``render`` share their names with their modules: importing the module binds the
# module object to the package's attribute, so these two are bound here, after their modules.
from reverie.recall.pack import pack
from reverie.recall.render import MODEL_GUIDANCE, render

if TYPE_CHECKING:
    from reverie.recall.query import query_terms
    from reverie.recall.search import recall
    from reverie.recall.tokens import count_tokens
    from reverie.recall.trace import RecallTrace

_HOME_OF = {
    "RecallTrace": "trace",
    "count_tokens": "tokens",
    "query_terms": "query",
    "recall": "search",
}
"""Where each public name lives: it loads on first use, so importing one submodule (the token
estimate, say) does not load the whole pipeline."""

__all__ = [
    "MODEL_GUIDANCE",
    "RecallTrace",
    "count_tokens",
    "pack",
    "query_terms",
    "recall",
    "render",
]


def __getattr__(name: str) -> Any:
    home = _HOME_OF.get(name)
    if home is None:
        raise AttributeError(f"module 'reverie.recall' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"reverie.recall.{home}"), name)
    globals()[name] = value
    return value
