"""A LlamaIndex memory block (``BaseMemoryBlock``) backed by Reverie.

Add ``ReverieMemoryBlock(memory=rv, scope="acme/assistant")`` to
``llama_index.core.memory.Memory.from_defaults(memory_blocks=[...])``:

* reading the block (``aget``) recalls, for the newest user message, what the scope has
  learned, under ``budget_tokens``; the Memory puts it in the system message (or wherever its
  ``insert_method`` says);
* messages the Memory flushes out of its short-term window (``aput``) are stored as episodes,
  one per user turn, by the ``openai-chat`` adapter (ids derive from the content, so a flush
  seen twice stores nothing twice). The dream cycle then distils them like any other episodes.

One block serves every user. LlamaIndex keeps one ``Memory`` per conversation, named by its
``session_id`` (the chat store key), and hands that id to its blocks on every read and with every
flushed message. With ``user_from_session=True`` the session id names the scope's user
(``tenant/agent/<session_id>`` over ``scope``); otherwise it is the episodes' session. Ids the
application passes itself (``memory.aget(user_id=...)``, or ``user_id`` / ``agent_id`` /
``run_id`` / ``scope`` in a message's ``additional_kwargs``) take precedence, read by
:mod:`reverie.integrations.scoping`; ``scope`` is what a call that names nothing gets.

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
from reverie.integrations.scoping import CallScope, call_scope

__all__ = ["ReverieMemoryBlock"]

log = logging.getLogger("reverie.integrations.llama_index")


def _wire(message: ChatMessage) -> dict[str, Any]:
    role = message.role.value if isinstance(message.role, MessageRole) else str(message.role)
    return {"role": role, "content": message.content or ""}


class ReverieMemoryBlock(BaseMemoryBlock[str]):
    """Recall from, and episodes into, the Reverie scope of each conversation."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str = "reverie"
    description: str | None = "What this agent learned in earlier sessions"
    memory: Any = Field(description="a reverie.Reverie, or anything with recall and ingest")
    scope: str | None = Field(
        default=None, description="the default scope: tenant/agent or tenant/agent/user"
    )
    user_from_session: bool = Field(
        default=False, description="the Memory's session_id names the scope's user"
    )
    budget_tokens: int | None = Field(default=None, description="recall's token budget")

    def _where(self, given: dict[str, Any]) -> CallScope:
        """The scope of a call whose context (block kwargs, a message's additional_kwargs)
        is ``given``; the session names the user when :attr:`user_from_session` says so."""
        context = dict(given)
        session = context.pop("session_id", None)
        if session and self.user_from_session:
            context.setdefault("user_id", session)
        elif session:
            context.setdefault("run_id", session)
        return call_scope(self.scope, context)

    async def _aget(self, messages: list[ChatMessage] | None = None, **kwargs: Any) -> str:
        users = [m for m in messages or [] if m.role == MessageRole.USER and m.content]
        if not users:
            return ""
        memory: Memory = self.memory
        query, budget = str(users[-1].content), self.budget_tokens
        return recall_text(memory, query, lambda: self._where(kwargs).scope, budget, logger=log)

    async def _aput(self, messages: list[ChatMessage]) -> None:
        context = next((m.additional_kwargs for m in messages if m.additional_kwargs), {})
        try:
            where = self._where(context)
            line = json.dumps({"messages": [_wire(m) for m in messages]}, ensure_ascii=False)
            items = parse("openai-chat", [(1, line)], scope=where.scope).items
            for item in items:
                if where.run_id:
                    item["session_id"] = where.run_id
            if items:
                self.memory.ingest(items, scope=where.scope)
        except Exception as exc:
            log.warning("reverie ingest skipped: %s: %s", type(exc).__name__, exc)
