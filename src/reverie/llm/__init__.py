"""Model clients behind one narrow protocol: structured JSON out of a system and a user prompt.

Importing this package imports no HTTP library; a client imports ``httpx`` when it is built and
raises :class:`reverie.errors.MissingExtra` naming the ``llm`` extra when it is missing.
"""

from __future__ import annotations

from reverie.llm._http import HTTPSettings
from reverie.llm.protocol import LLM, Check, LLMResponse, MeteredDistiller, ModelUsage
from reverie.llm.providers import llm_from_env

__all__ = [
    "LLM",
    "Check",
    "HTTPSettings",
    "LLMResponse",
    "MeteredDistiller",
    "ModelUsage",
    "llm_from_env",
]
