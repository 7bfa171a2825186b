"""An :class:`reverie.embed.Embedder` over an OpenAI-compatible ``POST /embeddings`` endpoint.

OpenAI, vLLM, Ollama, llama.cpp server, LM Studio and text-embeddings-inference speak it. Needs
httpx (``pip install 'reverie[llm]'``); it is imported on the first call, not at construction.
Retries, backoff and the concurrency cap are the LLM clients' (:mod:`reverie.llm._http`).
Vectors are L2-normalised here, whatever the server returns; ``dim`` is learnt from the first
answer unless given.

Configuration: arguments, else ``REVERIE_EMBED_BASE_URL`` (then ``REVERIE_LLM_BASE_URL``,
default ``https://api.openai.com/v1``), ``REVERIE_EMBED_MODEL`` and ``REVERIE_EMBED_API_KEY``
(then ``REVERIE_LLM_API_KEY``; local servers need none).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from reverie.errors import LLMBadOutput
from reverie.llm._http import HTTPSettings, Poster, env_or, require_httpx

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from reverie.llm._http import HTTPSettings, Poster

__all__ = ["OpenAIEmbedder"]

BATCH = 128


class OpenAIEmbedder:
    """Embeddings from ``{base_url}/embeddings``; ``model_id`` is ``openai:<model>``."""

    def __init__(
        self,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        dim: int = 0,
        settings: HTTPSettings | None = None,
    ) -> None:
        self.model = env_or(model, "REVERIE_EMBED_MODEL", field_name="model")
        self.base_url = env_or(
            base_url, "REVERIE_EMBED_BASE_URL", "REVERIE_LLM_BASE_URL",
            field_name="base_url", default="https://api.openai.com/v1",
        ).rstrip("/")  # fmt: skip
        self.api_key = api_key or _env("REVERIE_EMBED_API_KEY", "REVERIE_LLM_API_KEY")
        self.model_id = f"openai:{self.model}"
        self.dim = dim
        self._settings = settings
        self._poster: Poster | None = None

    def __repr__(self) -> str:
        return f"OpenAIEmbedder(model={self.model!r}, base_url={self.base_url!r})"

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        if self._poster is None:
            settings = self._settings or HTTPSettings()
            client = require_httpx().Client(timeout=settings.timeout_s)
            self._poster = Poster(client, settings)
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        return self._poster.post(f"{self.base_url}/embeddings", body, headers)

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        import numpy as np  # noqa: PLC0415 (numpy stays out of `import reverie`)

        rows: list[list[float]] = []
        for start in range(0, len(texts), BATCH):
            batch = [t if t.strip() else " " for t in texts[start : start + BATCH]]
            rows += _vectors(self._post({"model": self.model, "input": batch}), len(batch))
        if rows and not self.dim:
            self.dim = len(rows[0])
        matrix = np.asarray(rows, dtype=np.float64).reshape(len(texts), self.dim)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        out = np.asarray(matrix / np.where(norms > 0, norms, 1.0), dtype=np.float32)
        out[[i for i, t in enumerate(texts) if not t.strip()]] = 0.0
        return out


def _env(*names: str) -> str | None:
    return next((os.environ[n] for n in names if os.environ.get(n)), None)


def _vectors(answer: dict[str, Any], expected: int) -> list[list[float]]:
    data = answer.get("data")
    if not isinstance(data, list) or len(data) != expected:
        raise LLMBadOutput(f"embeddings answer has no data list of {expected} items")
    ordered = sorted(data, key=lambda d: int(d.get("index", 0)) if isinstance(d, dict) else 0)
    try:
        return [[float(x) for x in d["embedding"]] for d in ordered]
    except (KeyError, TypeError, ValueError) as exc:
        raise LLMBadOutput(f"embeddings answer is malformed: {exc}") from exc
