"""An :class:`reverie.embed.Embedder` over a sentence-transformers model (``st:NAME``).

For a model ONNX Runtime does not serve, or one fine-tuned in-house. It needs the
``sentence-transformers`` extra (``pip install 'reverie[st]'``, which brings torch: about
1.4 GB, several seconds to import — the default MiniLM on ONNX Runtime needs neither). Nothing
is imported or loaded until the first ``embed``. ``NAME`` is a local directory or a name the
library resolves from its cache; Reverie never asks it to download, and with
``HF_HUB_OFFLINE=1`` the library will not either. Rows come back L2-normalised, empty texts
as zero rows, as every embedder's do.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from reverie.errors import MissingExtra

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["SentenceTransformerEmbedder"]

BATCH = 64


class SentenceTransformerEmbedder:
    """``model`` is a name or path (loaded lazily) or an already loaded model object."""

    def __init__(self, model: str | Any, *, device: str | None = None) -> None:
        self._model: Any = None if isinstance(model, str) else model
        self.name = model if isinstance(model, str) else str(getattr(model, "name", "model"))
        self.model_id = f"st:{self.name}"
        self.device = device
        self._dim = 0
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"SentenceTransformerEmbedder({self.name!r})"

    @property
    def dim(self) -> int:
        return self._dim

    def _loaded(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    from sentence_transformers import (  # noqa: PLC0415 (extra: st)
                        SentenceTransformer,
                    )
                except ImportError as exc:
                    raise MissingExtra("sentence-transformers", "st") from exc
                self._model = SentenceTransformer(self.name, device=self.device)
            if not self._dim:
                self._dim = int(self._model.get_sentence_embedding_dimension())
            return self._model

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        import numpy as np  # noqa: PLC0415 (numpy stays out of `import reverie`)

        model = self._loaded()
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        filled = [i for i, t in enumerate(texts) if t.strip()]
        if filled:
            rows = model.encode(
                [texts[i] for i in filled], batch_size=BATCH, convert_to_numpy=True,
                normalize_embeddings=True, show_progress_bar=False,
            )  # fmt: skip
            rows = np.asarray(rows, dtype=np.float32)
            norms = np.linalg.norm(rows, axis=1, keepdims=True)  # whatever the model returned
            out[filled] = rows / np.where(norms > 0, norms, 1.0)
        return out
