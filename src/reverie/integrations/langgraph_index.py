"""Semantic search for :class:`~reverie.integrations.langgraph.ReverieStore`: LangGraph's
``index`` config (``embed``, ``dims``, ``fields``) over the brain's vector cache.

An item is a note with one line per top-level field (``{"field": value}``). The fields the
config's ``fields`` (or a put's ``index=[...]``) name by their first path step are indexed,
``"$"`` or ``"*"`` meaning all of them; a field's text is its value, a string as it is and
anything else as JSON, as LangGraph's ``get_text_at_path`` gives it. A field is indexed whole:
a path's later steps choose the field, not a part of it. Vectors are embedded at ``put`` through
the store's embedding cache (:class:`~reverie.recall.vectors.CachedEmbedder`), keyed by the
embedding's name and ``dims``, so a search embeds only the query. An item scores the best
cosine of its fields with the query, floored at 0 so a score lies in [0, 1]; items with no
indexed field follow the scored ones unscored, as in LangGraph's ``InMemoryStore``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
from langgraph.store.base import IndexConfig
from langgraph.store.base.embed import ensure_embeddings, get_text_at_path, tokenize_path
from numpy.typing import NDArray

from reverie.models import Page
from reverie.recall.vectors import CachedEmbedder
from reverie.store.base import BrainStore

__all__ = ["FieldIndex", "field_text"]


def _unit(rows: Sequence[Sequence[float]]) -> NDArray[np.float32]:
    """``rows`` as a float32 matrix of unit rows (a zero row stays zero)."""
    if not rows:
        return np.zeros((0, 0), dtype=np.float32)
    matrix = np.asarray(rows, dtype=np.float32).reshape(len(rows), -1)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit: NDArray[np.float32] = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
    return unit


def _name(embed: Any) -> str:
    if isinstance(embed, str):
        return embed
    model = getattr(embed, "model", None) or getattr(embed, "model_name", None)
    kind = getattr(embed, "__qualname__", None) or type(embed).__qualname__
    return f"{getattr(embed, '__module__', '')}.{kind}" + (f":{model}" if model else "")


def field_text(line: str) -> str:
    """The text one line (``{"field": value}``) gives the index."""
    part = json.loads(line)
    field = next(iter(part), None)
    return "".join(get_text_at_path(part, field)) if field is not None else ""


class _Documents:
    """LangGraph's embeddings as a Reverie embedder (unit rows), for the vector cache."""

    def __init__(self, config: IndexConfig) -> None:
        self.inner = ensure_embeddings(config.get("embed"))
        self._dim = int(config.get("dims") or 0)
        self.model_id = f"langgraph:{_name(config.get('embed'))}:{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        return _unit(self.inner.embed_documents(list(texts)) if texts else [])

    def query(self, text: str) -> NDArray[np.float32]:
        row: NDArray[np.float32] = _unit([self.inner.embed_query(text)])[0]
        return row


class FieldIndex:
    """One store's semantic index: which fields are indexed, their vectors, the ranking."""

    def __init__(self, store: BrainStore, config: IndexConfig) -> None:
        self.documents = _Documents(config)
        self.cache = CachedEmbedder(store, self.documents)

    @staticmethod
    def fields(
        value: dict[str, Any], index: Literal[False] | list[str] | None, config: IndexConfig | None
    ) -> set[str]:
        """The top-level fields of ``value`` a put indexes (``index=False``: none)."""
        if index is False:
            return set()
        paths = index if index is not None else (config or {}).get("fields") or ["$"]
        keys: set[str] = set()
        for path in paths:
            first = tokenize_path(path)[0] if path else "$"
            if first in ("$", "*"):
                return set(value)
            if first.startswith("{"):
                keys |= {tokenize_path(p.strip())[0] for p in first[1:-1].split(",")}
            else:
                keys.add(first)
        return keys & set(value)

    def embed_lines(self, lines: Sequence[str]) -> None:
        """Embed (and cache) the texts of an item's indexed lines."""
        texts = [t for t in map(field_text, lines) if t]
        if texts:
            self.cache.embed(texts)

    def rank(
        self, query: str, found: Sequence[tuple[Any, str, Page]], lines: Callable[[Page], list[str]]
    ) -> list[tuple[float | None, Any, str, Page]]:
        """``found`` best first by cosine with ``query``; items with nothing indexed last."""
        texts = [[t for t in map(field_text, lines(page)) if t] for _s, _p, page in found]
        flat = [t for item in texts for t in item]
        rows = self.cache.embed(flat) if flat else np.zeros((0, 0), dtype=np.float32)
        cosines = rows @ self.documents.query(query) if flat else np.zeros(0)
        scored: list[tuple[float | None, Any, str, Page]] = []
        unscored: list[tuple[float | None, Any, str, Page]] = []
        at = 0
        for (scope, path, page), item in zip(found, texts, strict=True):
            if not item:
                unscored.append((None, scope, path, page))
                continue
            best = float(cosines[at : at + len(item)].max())
            at += len(item)
            scored.append((min(max(best, 0.0), 1.0), scope, path, page))
        scored.sort(key=lambda r: -(r[0] or 0.0))
        return scored + unscored
