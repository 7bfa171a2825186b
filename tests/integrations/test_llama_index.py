"""ReverieMemoryBlock inside LlamaIndex's own Memory: flushed turns become episodes, and after a
dream the recalled lesson is in the system message the chat engine sends its (scripted) LLM."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import pytest

from reverie import Reverie
from reverie.models import Scope

pytest.importorskip("llama_index.core", reason="needs the llama-index extra (in dev)")
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.llms.mock import MockLLMWithChatMemoryOfLastCall as MockLLM
from llama_index.core.memory import Memory
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from reverie.integrations.llama_index import ReverieMemoryBlock

# LlamaIndex's sync wrappers open event loops they never close (conftest closes the current one);
# the ResourceWarning of any other such loop is collected inside these tests, not after them
pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


SCOPE = "acme/helpdesk"
LESSON = "Password resets need the ticket number before the reset link is sent."


def _memory(rv: Reverie, session: str, folder: Path, token_limit: int = 60) -> Memory:
    """LlamaIndex's Memory with its chat store in a file beside the brain; connections are not
    pooled, so none is left open when the test's event loops are gone."""
    chats = folder / "chats.db"
    engine = create_async_engine(f"sqlite+aiosqlite:///{chats}", poolclass=NullPool)
    return Memory.from_defaults(
        session_id=session,
        async_engine=engine,
        token_limit=token_limit,
        chat_history_token_ratio=0.5,
        token_flush_size=20,
        memory_blocks=[ReverieMemoryBlock(memory=rv, scope=SCOPE)],
    )


def test_flushed_turns_are_episodes_and_recall_reaches_the_llm(tmp_path: Path) -> None:
    with Reverie.open(tmp_path / "brain.db") as rv:
        memory = _memory(rv, "s1", tmp_path)
        for n in range(6):
            asyncio.run(
                memory.aput_messages(
                    [
                        ChatMessage(
                            role=MessageRole.USER, content=f"Reset my password please ({n})"
                        ),
                        ChatMessage(role=MessageRole.ASSISTANT, content=f"Sent link {n}. {LESSON}"),
                    ]
                )
            )
        asyncio.run(memory.aget())  # the Memory flushes what no longer fits into its blocks
        stored = rv.status(SCOPE).episodes
        assert 0 < stored < 6  # the older turns, not the ones still in the window
        rv.remember(
            {"situation": "password reset", "action": "asked", "lesson": LESSON}, scope=SCOPE
        )
        rv.dream(SCOPE, now=datetime(2030, 1, 1, tzinfo=UTC))

        llm = MockLLM()
        engine = SimpleChatEngine.from_defaults(llm=llm, memory=_memory(rv, "s2", tmp_path, 2000))
        asyncio.run(engine.achat("How do password resets work here?"))
        system = llm.last_chat_messages[0]  # what the scripted LLM was sent
        assert system.role == MessageRole.SYSTEM
        assert "<reverie>" in str(system.content)  # the block, under its name
        assert "ticket number" in str(system.content)

        asyncio.run(memory.aget())  # flushing again stores nothing twice
        assert rv.status(SCOPE).episodes == stored + 1


def test_a_failing_memory_leaves_the_block_empty(tmp_path: Path) -> None:
    rv = Reverie.open(tmp_path / "brain.db")
    rv.close()
    llm = MockLLM()
    engine = SimpleChatEngine.from_defaults(llm=llm, memory=_memory(rv, "s3", tmp_path, 2000))
    asyncio.run(engine.achat("How do password resets work here?"))
    assert [m.role for m in llm.last_chat_messages] == [MessageRole.USER]


def test_chat_turns_flushed_through_the_block_become_pages(tmp_path: Path) -> None:
    """Five turns about one VPN error, flushed and dreamed: a dialogue page, and the user's
    statement about their setup kept as a fact page of its own."""
    scope = "acme/it-desk/noor"
    said = [
        "I'm getting VPN error 809 when I connect from the hotel wifi.",
        "I use the built-in Windows 11 VPN client.",
        "It still says error 809 after the reboot.",
        "Okay, switching the protocol to SSTP worked.",
        "Thanks!",
    ]
    with Reverie.open(tmp_path / "brain.db") as rv:
        block = ReverieMemoryBlock(memory=rv, scope=scope)
        messages = []
        for text in said:
            messages += [
                ChatMessage(role=MessageRole.USER, content=text),
                ChatMessage(role=MessageRole.ASSISTANT, content="Let's look at that."),
            ]
        asyncio.run(block.aput(messages))
        rv.dream(scope, now=datetime(2030, 1, 1, tzinfo=UTC))
        pages = rv.store.pages(Scope.parse(scope), None)
        assert any("809" in c.text for p in pages for c in p.revision.claims)
        assert "user: I use the built-in Windows 11 VPN client." in {p.title for p in pages}
