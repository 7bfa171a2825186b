"""The vector side of recall: what gets embedded, when, and the in-memory index searched.

**When.** Never at ingest (ingest stays a plain batched insert, ≥ 20,000 episodes/s). The engine
calls :func:`index_scope` after each dream cycle: it embeds the scope's episodes past the newest
one embedded (by ``seq``, so each is embedded once, in batches) and the claims of its active
pages. Every vector is cached under ``(model_id, content hash of the text)``, so a claim that a
new revision keeps, or two episodes with the same text, are embedded once. Episodes stored
since the last cycle are embedded by the next recall of their scope, at most :data:`CATCH_UP`
at a time (:meth:`VectorSearch.catch_up`), so what was just added is found by meaning at once.

**Search.** :class:`VectorIndex` keeps one float32 matrix per scope and model in memory, loaded
on the first query (every claim, the newest ``vector_window`` episodes) and then extended with
the rows stored since (``vector_units.n`` ascending).
A query is one matrix–vector product over the scope's claims and one over its newest
``RecallConfig.vector_window`` episodes (brute force, exact; 100,000 × 384 would cost ~13 ms on
two cores, the default window of 20,000 a fifth of that). Rows of page claims from superseded
revisions stay in the matrix and are dropped when resolved against the page's current
revision. The scope filter is the matrix itself: each scope has its own, loaded with
``WHERE scope_key = ?``.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from reverie.embed import Embedder
from reverie.hashing import content_hash
from reverie.models import Episode, Page, Scope
from reverie.store.base import BrainStore, NearestNeighbours
from reverie.store.records import EMBED_CHARS, VectorRow, VectorUnit, embedded_text

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Vector = NDArray[np.float32]

__all__ = [
    "CATCH_UP",
    "EMBED_BATCH",
    "EMBED_CHARS",
    "OLDER_KEPT",
    "QUERY_CACHE",
    "Neighbours",
    "StoreNeighbours",
    "VectorHit",
    "VectorIndex",
    "VectorSearch",
    "cached",
    "claim_ref",
    "index_scope",
    "parse_claim_ref",
]

log = logging.getLogger("reverie.recall")

CATCH_UP = 128
"""Episodes stored since the last indexing that one recall embeds first (oldest first), so what
was added a moment ago is found by meaning before any cycle (about 0.4 s for 128 on two cores;
a chat that adds a turn and asks pays for one)."""
EMBED_BATCH = 256
"""Texts per embedder call when indexing."""
QUERY_CACHE = 256
"""Query vectors kept per engine (:class:`VectorSearch`)."""
OLDER_KEPT = 4096
"""Vectors of episodes older than an index's window kept per index once read."""


def claim_ref(page_id: str, revision: int, index: int) -> str:
    return f"{page_id}#{revision}#{index}"


def parse_claim_ref(ref: str) -> tuple[str, int, int]:
    page_id, revision, index = ref.rsplit("#", 2)
    return page_id, int(revision), int(index)


def _units(
    scope: Scope, episodes: Iterable[Episode], pages: Iterable[Page]
) -> list[tuple[VectorUnit, str]]:
    out: list[tuple[VectorUnit, str]] = []
    for ep in episodes:
        text = embedded_text(ep)
        out.append((VectorUnit(scope, "episode", ep.id, content_hash(text), ep.seq), text))
    for page in pages:
        rev = page.revision
        for i, claim in enumerate(rev.claims):
            if claim.role is not None and claim.role.recall_weight <= 0:
                continue  # an evidence line is never recalled, so never embedded
            ref = claim_ref(page.id, rev.number, i)
            out.append((VectorUnit(scope, "claim", ref, content_hash(claim.text)), claim.text))
    return out


def index_scope(
    store: BrainStore,
    embedder: Embedder,
    scope: Scope,
    pages: Sequence[Page],
    *,
    limit: int | None = None,
) -> int:
    """Embed ``scope``'s episodes not yet embedded (at most ``limit``) and the claims of
    ``pages``; return how many texts the embedder computed (cache hits cost nothing)."""
    computed = 0
    computed += _store_units(store, embedder, _units(scope, (), pages))
    remaining = limit
    while remaining is None or remaining > 0:
        take = EMBED_BATCH * 8 if remaining is None else min(remaining, EMBED_BATCH * 8)
        episodes = store.unembedded_episodes(scope, embedder.model_id, take)
        if not episodes:
            break
        computed += _store_units(store, embedder, _units(scope, episodes, ()))
        remaining = None if remaining is None else remaining - len(episodes)
    return computed


def _store_units(
    store: BrainStore, embedder: Embedder, units: Sequence[tuple[VectorUnit, str]]
) -> int:
    if not units:
        return 0
    model = embedder.model_id
    cached = store.vectors_get(model, [u.hash for u, _ in units])
    todo = {u.hash: text for u, text in units if u.hash not in cached}
    fresh: dict[str, bytes] = {}
    hashes = list(todo)
    for start in range(0, len(hashes), EMBED_BATCH):
        batch = hashes[start : start + EMBED_BATCH]
        vectors = embedder.embed([todo[h] for h in batch])
        fresh.update((h, v.tobytes()) for h, v in zip(batch, vectors, strict=True))
    store.vectors_put(model, fresh, [u for u, _ in units])
    return len(fresh)


class CachedEmbedder:
    """``embedder`` behind the store's embedding cache: a text already embedded for the same
    ``model_id`` is read back, a new one is embedded and stored. The cycle clusters with it, so
    the vectors clustering computes are the ones :func:`index_scope` then finds cached."""

    def __init__(self, store: BrainStore, embedder: Embedder) -> None:
        self.store, self.inner = store, embedder
        self.model_id = embedder.model_id

    @property
    def dim(self) -> int:
        """The inner embedder's, read each time: an endpoint's is learnt from its first answer."""
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        import numpy as np  # noqa: PLC0415 (numpy stays out of `import reverie`)

        hashes = [content_hash(t) for t in texts]
        found = self.store.vectors_get(self.model_id, hashes)
        missing = sorted({h: i for i, h in enumerate(hashes) if h not in found}.items())
        if missing:
            fresh = self.inner.embed([texts[i] for _h, i in missing])
            new = {h: row.tobytes() for (h, _i), row in zip(missing, fresh, strict=True)}
            self.store.vectors_put(self.model_id, new, ())
            found.update(new)
        dim = self.dim or (len(next(iter(found.values()))) // 4 if found else 0)
        out = np.zeros((len(texts), dim), dtype=np.float32)
        for i, h in enumerate(hashes):
            out[i] = np.frombuffer(found[h], dtype=np.float32)
        return out


def cached(store: BrainStore, embedder: Embedder | None) -> Embedder | None:
    """``embedder`` behind ``store``'s vector cache, or None without one."""
    if embedder is None:
        return embedder
    return CachedEmbedder(store, embedder)


@dataclass(frozen=True)
class VectorHit:
    kind: str
    ref: str
    cosine: float


class VectorIndex:
    """One scope's vectors for one model, in memory (see the module doc): one float32 matrix
    per kind, so a claim search never scans the (much larger) episode rows."""

    def __init__(self, scope: Scope, model: str, *, episode_window: int | None = None) -> None:
        self.scope, self.model = scope, model
        self.episode_window = episode_window
        self.matrices: dict[str, NDArray[np.float32]] = {}
        self.refs: dict[str, list[str]] = {}
        self.rows: dict[str, tuple[str, int]] = {}
        self.hashes: dict[str, tuple[str, int]] = {}
        self.last_n = 0
        self.store: BrainStore | None = None
        self._older: OrderedDict[str, NDArray[np.float32]] = OrderedDict()
        self._unembedded: set[str] = set()
        self._older_lock = threading.Lock()
        self.loading = threading.Lock()  # one refresh at a time (VectorSearch.index)

    def __len__(self) -> int:
        return sum(len(r) for r in self.refs.values())

    def refresh(self, store: BrainStore) -> None:
        """Load the rows stored since the last refresh. The first load takes every claim but
        only the newest ``episode_window`` episodes, the only ones :meth:`search` compares
        (at 100,000 episodes a fifth of the time and memory); older episodes' vectors are read
        from the store when :meth:`cosines` asks for them."""
        self.store = store
        if self.last_n == 0 and self.episode_window is not None:
            rows = self._first_load(store, self.episode_window)
        else:
            rows = store.vector_rows(self.scope, self.model, self.last_n)
        for kind in sorted({r.kind for r in rows}):
            self._extend(kind, [r for r in rows if r.kind == kind])
        if rows:
            self.last_n = rows[-1].n

    def _first_load(self, store: BrainStore, window: int) -> list[VectorRow]:
        """Every claim and the newest ``window`` episodes as of one moment: the newest unit's
        ``n`` is read first and whatever the two reads find past it (stored meanwhile) is left
        to the next refresh. Units are numbered in commit order (SQLite has one writer), so a
        unit the reads do not keep is always past ``last_n``: none is skipped for good."""
        newest = store.vector_rows(self.scope, self.model, 0, newest=1)
        if not newest:
            return []
        high = newest[-1].n
        rows = store.vector_rows(self.scope, self.model, 0, kind="episode", newest=window)
        rows += store.vector_rows(self.scope, self.model, 0, kind="claim")
        return sorted((r for r in rows if r.n <= high), key=lambda r: r.n)

    def _extend(self, kind: str, rows: Sequence[VectorRow]) -> None:
        import numpy as np  # noqa: PLC0415 (numpy stays out of `import reverie`)

        block = np.frombuffer(b"".join(r.vector for r in rows), dtype=np.float32)
        # read-only, over the joined bytes: no copy; as wide as the stored vectors (an endpoint's
        # embedder learns its dim from its first answer, which may come after this load)
        block = block.reshape(len(rows), -1)
        refs = self.refs.setdefault(kind, [])
        start = len(refs)
        # Other threads search while this runs (outside VectorSearch's lock), so each step keeps
        # what they read consistent: refs grow before the matrix does (a row always has its
        # ref), positions are published after it (a position always has its row).
        refs.extend(r.ref for r in rows)
        old = self.matrices.get(kind)
        self.matrices[kind] = block if old is None else np.concatenate([old, block])
        for i, r in enumerate(rows, start):
            self.rows[r.ref] = self.hashes[r.hash] = (kind, i)

    def search(
        self, query: NDArray[np.float32], k: int, kind: str, *, newest: int | None = None
    ) -> list[VectorHit]:
        """The ``k`` rows of ``kind`` most similar to the unit vector ``query``, best first;
        with ``newest``, among the last ``newest`` rows stored only (rows are kept in the order
        they were embedded, which for episodes is ``seq`` order)."""
        import numpy as np  # noqa: PLC0415 (numpy stays out of `import reverie`)

        matrix = self.matrices.get(kind)
        if matrix is None or k <= 0:
            return []
        skip = max(len(matrix) - newest, 0) if newest is not None else 0
        if skip >= len(matrix):  # a window of 0: nothing to compare
            return []
        # einsum, not BLAS: one thread of SIMD is steadier than BLAS waking its thread pool for
        # a matrix-vector product (at 20,000 rows on a busy 2-core machine, p50 2 ms vs 10 ms)
        sims = np.einsum("ij,j->i", matrix[skip:], query)
        top = np.argpartition(-sims, min(k, len(sims) - 1))[:k]
        top = top[np.argsort(-sims[top], kind="stable")]
        refs = self.refs[kind]
        return [VectorHit(kind, refs[skip + i], float(sims[i])) for i in top]

    def empty(self) -> bool:
        return not self.refs

    def compared(self, *, newest: int | None = None) -> int:
        """How many units a search compares: every claim and the newest ``newest`` episodes."""
        episodes = len(self.refs.get("episode", ()))
        claims = len(self) - episodes
        return claims + (episodes if newest is None else min(episodes, newest))

    def cosines(
        self, query: NDArray[np.float32], refs: Sequence[str], hashes: Sequence[str]
    ) -> tuple[dict[str, float], dict[str, float]]:
        """Cosines of the indexed units ``refs`` (by ref) and of the indexed texts whose
        content hash is in ``hashes`` (by hash); those not indexed are left out."""
        by_ref = {r: c for r in refs if (c := self.cosine(query, r)) is not None}
        by_hash = {h: c for h in hashes if (c := self.cosine_of_hash(query, h)) is not None}
        older = [r for r in refs if r not in by_ref]  # episodes older than the loaded window
        for ref, vector in self._older_vectors(older).items():
            by_ref[ref] = float(vector @ query)
        return by_ref, by_hash

    def _older_vectors(self, refs: Sequence[str]) -> dict[str, NDArray[np.float32]]:
        """Vectors of episodes outside the loaded window, read from the store once and kept
        (at most :data:`OLDER_KEPT`, least recently used dropped first)."""
        import numpy as np  # noqa: PLC0415 (numpy stays out of `import reverie`)

        with self._older_lock:  # recalls in one scope may run on several threads
            found = {r: self._older[r] for r in refs if r in self._older}
            for ref in found:
                self._older.move_to_end(ref)
            missing = [r for r in refs if r not in found and r not in self._unembedded]
        if not missing or self.store is None:
            return found
        read = self.store.unit_vectors(self.scope, self.model, "episode", missing)
        with self._older_lock:
            for ref, blob in read.items():
                found[ref] = self._older[ref] = np.frombuffer(blob, dtype=np.float32)
            if len(self._unembedded) > OLDER_KEPT:
                self._unembedded.clear()
            self._unembedded.update(r for r in missing if r not in read)  # not asked again
            while len(self._older) > OLDER_KEPT:
                self._older.popitem(last=False)
        return found

    def cosine(self, query: NDArray[np.float32], ref: str) -> float | None:
        """Cosine of ``query`` with the unit ``ref`` (None when it is not indexed)."""
        return self._at(query, self.rows.get(ref))

    def cosine_of_hash(self, query: NDArray[np.float32], text_hash: str) -> float | None:
        """Cosine of ``query`` with the indexed text whose content hash is ``text_hash``."""
        return self._at(query, self.hashes.get(text_hash))

    def _at(self, query: NDArray[np.float32], where: tuple[str, int] | None) -> float | None:
        return None if where is None else float(self.matrices[where[0]][where[1]] @ query)


class StoreNeighbours:
    """The same questions as :class:`VectorIndex`, answered by a store that searches vectors
    itself (PostgreSQL with pgvector's HNSW index): nothing is loaded into memory, so any number
    of scopes and workers share the database's index."""

    def __init__(self, store: NearestNeighbours, scope: Scope, model: str) -> None:
        self.store, self.scope, self.model = store, scope, model

    def empty(self) -> bool:
        """Whether no unit of the scope is embedded with the model (the newest row, if any)."""
        store = cast("BrainStore", self.store)  # every NearestNeighbours store is a BrainStore
        return not store.vector_rows(self.scope, self.model, 0, newest=1)

    def search(
        self, query: NDArray[np.float32], k: int, kind: str, *, newest: int | None = None
    ) -> list[VectorHit]:
        if k <= 0:
            return []
        hits = self.store.vector_search(
            self.scope, self.model, query.tobytes(), k, kind, newest=newest
        )
        return [VectorHit(kind, ref, cosine) for kind, ref, cosine in hits]

    def compared(self, *, newest: int | None = None) -> int:
        """Not counted in the database: the fixed floors apply (:mod:`reverie.recall.floor`)."""
        return 0

    def cosines(
        self, query: NDArray[np.float32], refs: Sequence[str], hashes: Sequence[str]
    ) -> tuple[dict[str, float], dict[str, float]]:
        if not refs and not hashes:
            return {}, {}
        return self.store.vector_cosines(self.scope, self.model, query.tobytes(), refs, hashes)


Neighbours = VectorIndex | StoreNeighbours
"""Where recall's vector questions go: memory (SQLite) or the database (PostgreSQL)."""


class VectorSearch:
    """An embedder plus the per-scope indexes recall searches; one per engine, thread-safe.

    A query is embedded on a worker thread while the full-text side of recall runs
    (:meth:`prefetch`, then :meth:`embed_query` waits for it): ONNX Runtime and SQLite both
    release the GIL, so on two cores the query vector costs little more than the slower of the
    two. The last :data:`QUERY_CACHE` query vectors are kept: an agent that asks again pays
    nothing.
    """

    def __init__(
        self,
        embedder: Embedder,
        *,
        window: int | None = None,
        kept: int = 16,
        before_write: Callable[[], None] | None = None,
    ) -> None:
        self.embedder = embedder
        self.before_write = before_write  # the engine records the brain's embedder here
        self.window = window  # episodes an index loads at first: RecallConfig.vector_window
        self.kept = max(kept, 1)  # indexes kept in memory: RecallConfig.vector_indexes
        self._indexes: OrderedDict[str, VectorIndex] = OrderedDict()
        self._lock = threading.Lock()
        self._queries: OrderedDict[str, Future[Vector]] = OrderedDict()
        self._pool: ThreadPoolExecutor | None = None

    def index(self, store: BrainStore, scope: Scope) -> Neighbours:
        """Where ``scope``'s vectors are searched: the store itself when it can (PostgreSQL),
        else an in-memory index brought up to date with the rows stored since last time."""
        if isinstance(store, NearestNeighbours):
            return StoreNeighbours(store, scope, self.embedder.model_id)
        with self._lock:
            index = self._indexes.get(scope.key)
            if index is None:
                index = VectorIndex(scope, self.embedder.model_id, episode_window=self.window)
                self._indexes[scope.key] = index
                while len(self._indexes) > self.kept:  # a service recalling in many scopes
                    self._indexes.popitem(last=False)
            self._indexes.move_to_end(scope.key)
        with index.loading:  # not under self._lock: loading one scope stalls no other
            index.refresh(store)
        return index

    def catch_up(self, store: BrainStore, scope: Scope, limit: int = CATCH_UP) -> int:
        """Embed up to ``limit`` of ``scope``'s episodes stored since the last indexing (oldest
        first; the rest on later recalls or after the next cycle); how many were embedded. A
        store that cannot be written (read-only) is left as it is: recall goes on without."""
        try:
            pending = store.unembedded_episodes(scope, self.embedder.model_id, limit)
            if not pending:
                return 0
            if self.before_write is not None:
                self.before_write()
            return _store_units(store, self.embedder, _units(scope, pending, ()))
        except Exception as exc:  # derived data: the episodes are still found by their words
            log.warning(
                "embedding new episodes of %s failed: %s: %s", scope.key, type(exc).__name__, exc
            )
            return 0

    def prefetch(self, query: str) -> None:
        """Start embedding ``query`` in the background (a no-op when it is cached or running)."""
        with self._lock:
            if query in self._queries:
                self._queries.move_to_end(query)
                return
            if self._pool is None:
                self._pool = ThreadPoolExecutor(1, thread_name_prefix="reverie-query-embed")
            self._queries[query] = self._pool.submit(self._embed_one, query)
            while len(self._queries) > QUERY_CACHE:
                self._queries.popitem(last=False)

    def embed_query(self, query: str) -> Vector:
        """The unit vector of ``query``: from the cache, the prefetch under way, or computed
        now. A failed prefetch is forgotten, so the next call tries again."""
        with self._lock:
            pending = self._queries.get(query)
        if pending is None:
            return self._embed_one(query)
        try:
            return pending.result()
        except BaseException:
            with self._lock:
                if self._queries.get(query) is pending:
                    del self._queries[query]
            raise

    def _embed_one(self, query: str) -> Vector:
        vector: Vector = self.embedder.embed([query])[0]
        return vector

    def drop(self, scope_keys: Iterable[str]) -> None:
        """Forget the in-memory indexes of these scopes and every query vector kept: after an
        erasure they may hold what was erased. An index is loaded afresh when next asked."""
        with self._lock:
            for key in scope_keys:
                self._indexes.pop(key, None)
            self._queries.clear()

    def close(self) -> None:
        """Stop the query thread (the engine calls it on close)."""
        with self._lock:
            pool, self._pool = self._pool, None
            self._queries.clear()
        if pool is not None:
            pool.shutdown(wait=True)
