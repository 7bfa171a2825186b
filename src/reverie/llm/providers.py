"""The client a configuration names: ``REVERIE_LLM_PROVIDER`` and the variables beside it.

Kept apart from :mod:`reverie.llm.protocol` (the protocol every client implements) because it
imports the clients, and every client imports the protocol.
"""

from __future__ import annotations

import os
from typing import Any

from reverie.errors import InvalidInput
from reverie.llm.anthropic import AnthropicLLM
from reverie.llm.openai_compat import OpenAICompatLLM
from reverie.llm.protocol import LLM

__all__ = ["PROVIDERS", "llm_from_env"]

PROVIDERS = ("openai", "anthropic")


def llm_from_env(provider: str | None = None, **options: Any) -> LLM:
    """A client configured from ``REVERIE_LLM_PROVIDER`` (``openai`` default), ``_BASE_URL``,
    ``_MODEL`` and ``_API_KEY``; ``options`` go to the client's constructor."""
    name = (provider or os.environ.get("REVERIE_LLM_PROVIDER") or "openai").lower()
    if name == "anthropic":
        return AnthropicLLM(**options)
    if name in ("openai", "openai_compat", "openai-compatible"):
        return OpenAICompatLLM(**options)
    raise InvalidInput("REVERIE_LLM_PROVIDER", f"{name!r} is not one of {', '.join(PROVIDERS)}")
