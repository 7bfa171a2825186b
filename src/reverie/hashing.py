"""Content hashes tagged with their algorithm (``sha256:<hex>``), over a canonical JSON form.

The tag lets a later version change the algorithm while old hashes stay verifiable; the
canonical form (sorted keys, no whitespace, UTF-8) makes the hash independent of dict order.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

__all__ = ["ALGORITHM", "canonical_json", "content_hash", "short_id"]

ALGORITHM = "sha256"


_CANONICAL = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
)


def canonical_json(value: Any) -> str:
    """Serialise ``value`` the same way every time (sorted keys, compact, non-ASCII kept)."""
    return _CANONICAL.encode(value)


def content_hash(value: Any) -> str:
    """Return ``sha256:<hex>`` of the canonical JSON of ``value`` (bytes are hashed as given)."""
    data = value if isinstance(value, bytes) else canonical_json(value).encode("utf-8")
    return f"{ALGORITHM}:{hashlib.sha256(data).hexdigest()}"


def short_id(prefix: str, *parts: str, length: int = 20) -> str:
    """A deterministic id ``<prefix>_<hex>`` derived from ``parts``."""
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()
    return f"{prefix}_{digest[:length]}"
