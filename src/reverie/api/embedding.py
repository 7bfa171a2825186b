"""Which embedder a brain uses, and the record that keeps it from mixing two models' vectors.

A database records the embedder that made its vectors (``brain_meta`` key ``embedder``: its
name, model id and dimension) the first time it stores one. Opening it again:

- with no embedder named (:data:`CONFIGURED`, the default of :meth:`Reverie.open`), the
  environment's choice is used (``REVERIE_EMBEDDER``, the config file;
  :func:`reverie.config.configured_embedder`), else the recorded one, else ``auto``;
- an embedder named (argument, ``--embedder``, environment) whose model differs from the
  recorded one is refused with :class:`~reverie.errors.EmbedderMismatch`, which names both and
  how to switch (:func:`reembed`); ``none`` is always allowed (lexical recall reads no vector);
- a recorded embedder that cannot load here (its extra missing) opens the brain lexically, with
  a warning, rather than with a model whose vectors would not compare.

Vectors stay keyed by model id in the store, so a switch (:func:`reembed`) embeds every scope
with the new model beside the old rows, then moves the record: recall only ever compares
vectors of the recorded model.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from reverie.config import configured_embedder
from reverie.embed import Embedder, EmbedderLike, HashingEmbedder, resolve_embedder
from reverie.embed.onnx import MiniLMEmbedder
from reverie.errors import EmbedderMismatch, InvalidInput, MissingExtra
from reverie.store.base import BrainStore

__all__ = [
    "CONFIGURED",
    "EmbedderRecord",
    "choose_embedder",
    "read_record",
    "record_embedder",
    "reembed",
]

log = logging.getLogger("reverie")

CONFIGURED = "configured"
"""The embedder spec meaning "as configured": the environment, else the brain's record, else
``auto``."""
META_KEY = "embedder"


@dataclass(frozen=True)
class EmbedderRecord:
    """What a brain recorded about the embedder that made its vectors."""

    name: str
    model_id: str
    dim: int


def read_record(store: BrainStore) -> EmbedderRecord | None:
    """The store's embedder record, or None (none made yet)."""
    try:
        raw = store.meta_get(META_KEY)
    except Exception:  # a store not migrated yet (no brain_meta table) has recorded nothing
        return None
    if raw is None:
        return None
    data: dict[str, Any] = json.loads(raw)
    return EmbedderRecord(str(data["name"]), str(data["model_id"]), int(data.get("dim", 0)))


def record_embedder(store: BrainStore, name: str, embedder: Embedder) -> None:
    """Record ``embedder`` (called ``name``) as the one that makes the store's vectors."""
    data = {"name": name, "model_id": embedder.model_id, "dim": embedder.dim}
    store.meta_put(META_KEY, json.dumps(data, sort_keys=True))


def spec_name(spec: EmbedderLike, embedder: Embedder) -> str:
    """The name a record keeps, one :func:`resolve_embedder` takes back: the spec as given, or
    for ``auto`` or an embedder object the name of the built-in one it is, else its model id."""
    if isinstance(spec, str) and spec.strip() not in ("auto", "onnx"):
        return spec.strip()
    if isinstance(embedder, MiniLMEmbedder):
        return "minilm"
    if isinstance(embedder, HashingEmbedder) and embedder.dim == HashingEmbedder().dim:
        return "hashing"
    return embedder.model_id


def choose_embedder(store: BrainStore, spec: EmbedderLike) -> tuple[Embedder | None, str]:
    """The embedder to open ``store`` with for ``spec``, and its name (see the module doc)."""
    recorded = read_record(store)
    named = spec != CONFIGURED
    if not named:
        configured = configured_embedder()
        named = configured is not None
        spec = configured or (recorded.name if recorded else "auto")
    try:
        embedder = resolve_embedder(spec)
    except (MissingExtra, InvalidInput) as exc:
        if named or recorded is None:
            raise
        log.warning("embedder %r of this brain is unavailable (%s): recall is lexical", spec, exc)
        return None, "none"
    if embedder is None:
        return None, "none"
    name = spec_name(spec, embedder)
    if recorded is not None and recorded.model_id != embedder.model_id:
        raise EmbedderMismatch(recorded.name, name, recorded.model_id, embedder.model_id)
    return embedder, name


def reembed(store: BrainStore, spec: EmbedderLike) -> int:
    """Embed every scope's episodes and active pages with ``spec`` and record it as the brain's
    embedder; return how many texts were embedded. The old model's vectors stay, unused."""
    from reverie.recall.vectors import index_scope  # noqa: PLC0415 (recall loads when it runs)

    embedder = resolve_embedder(spec)
    if embedder is None:
        raise InvalidInput("embedder", "name the embedder to switch to (minilm, hashing, ...)")
    computed = 0
    for scope in store.scopes():
        pages = store.pages(scope, ["active"])
        computed += index_scope(store, embedder, scope, pages)
    record_embedder(store, spec_name(spec, embedder), embedder)
    return computed
