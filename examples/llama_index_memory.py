"""A LlamaIndex chat engine whose Memory has a Reverie block.

Runs offline: ``pip install 'reverie[llama-index]' && python examples/llama_index_memory.py``.
``MockLLM`` (LlamaIndex's own) stands in for a model; pass any LlamaIndex LLM instead.
"""

from __future__ import annotations

import asyncio
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.llms.mock import MockLLMWithChatMemoryOfLastCall
from llama_index.core.memory import Memory
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from reverie import Reverie
from reverie.integrations.llama_index import ReverieMemoryBlock

SCOPE = "acme/helpdesk"


def main(db: Path | None = None) -> str:
    path = db or Path(tempfile.mkdtemp(prefix="reverie-llama-")) / "brain.db"
    with Reverie.open(path) as rv:
        lesson = "VPN resets need the employee's badge number first."
        rv.remember({"situation": "VPN reset", "action": "asked", "lesson": lesson}, scope=SCOPE)
        rv.dream(SCOPE, now=datetime.now(UTC))
        chats = create_async_engine(
            f"sqlite+aiosqlite:///{path.with_name('chats.db')}", poolclass=NullPool
        )
        memory = Memory.from_defaults(
            session_id="s1",
            async_engine=chats,
            memory_blocks=[ReverieMemoryBlock(memory=rv, scope=SCOPE)],
        )
        llm = MockLLMWithChatMemoryOfLastCall()
        engine = SimpleChatEngine.from_defaults(llm=llm, memory=memory)
        asyncio.run(engine.achat("How do VPN resets work?"))
        system = str(llm.last_chat_messages[0].content)  # type: ignore[index]
        print(system)
        return system


if __name__ == "__main__":
    main()
