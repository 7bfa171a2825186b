"""A LlamaIndex memory block (``BaseMemoryBlock``) backed by Reverie.

Add ``ReverieMemoryBlock(memory=rv, scope="acme/assistant")`` to
``llama_index.core.memory.Memory.from_defaults(memory_blocks=[...])``:

* reading the block (``aget``) recalls, for the newest user message, what the scope has
  learned, under ``budget_tokens``; the Memory puts it in the system message (or wherever its
  ``insert_method`` says);
* messages the Memory flushes out of its short-term window (``aput``) are stored as episodes,
  one per user turn, by the ``openai-chat`` adapter (ids derive from the content, so a flush
  seen twice stores nothing twice). The dream cycle then distils them like any other episodes.

Recall that fails yields an empty block and a logged warning (the agent's turn goes on); so does
a store that cannot take the flushed turns. Needs the ``llama-index`` extra.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.memory.memory import BaseMemoryBlock
from pydantic import ConfigDict, Field

from reverie.adapters import parse
from reverie.integrations.hook import Memory, recall_text
from reverie.models import Scope

__all__ = ["ReverieMemoryBlock"]

log = logging.getLogger("reverie.integrations.llama_index")


def _wire(message: ChatMessage) -> dict[str, Any]:
    role = message.role.value if isinstance(message.role, MessageRole) else str(message.role)
    return {"role": role, "content": message.content or ""}


class ReverieMemoryBlock(BaseMemoryBlock[str]):
    """Recall from, and episodes into, one Reverie scope."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str = "reverie"
    description: str | None = "What this agent learned in earlier sessions"
    memory: Any = Field(description="a reverie.Reverie, or anything with recall and ingest")
    scope: str = Field(description="the scope: tenant/agent or tenant/agent/user")
    budget_tokens: int | None = Field(default=None, description="recall's token budget")

    async def _aget(self, messages: list[ChatMessage] | None = None, **kwargs: Any) -> str:
        users = [m for m in messages or [] if m.role == MessageRole.USER and m.content]
        if not users:
            return ""
        memory: Memory = self.memory
        query = str(users[-1].content)
        return recall_text(memory, query, self.scope, self.budget_tokens, logger=log)

    async def _aput(self, messages: list[ChatMessage]) -> None:
        line = json.dumps({"messages": [_wire(m) for m in messages]}, ensure_ascii=False)
        parsed = parse("openai-chat", [(1, line)], scope=Scope.parse(self.scope))
        if not parsed.items:
            return
        try:
            self.memory.ingest(parsed.items, scope=self.scope)
        except Exception as exc:
            log.warning("reverie ingest skipped: %s: %s", type(exc).__name__, exc)
