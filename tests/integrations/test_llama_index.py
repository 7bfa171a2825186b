"""ReverieMemoryBlock inside LlamaIndex's own Memory: flushed turns become episodes, and after a
dream the recalled lesson is in the system message the chat engine sends its (scripted) LLM."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from reverie import Reverie
from reverie.models import Scope

pytest.importorskip("llama_index.core", reason="needs the llama-index extra (in dev)")
from llama_index.core.agent.workflow import ReActAgent
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.llms import CompletionResponse, CustomLLM, LLMMetadata
from llama_index.core.llms.callbacks import llm_completion_callback
from llama_index.core.llms.mock import MockLLMWithChatMemoryOfLastCall as MockLLM
from llama_index.core.memory import InsertMethod, Memory
from pydantic import Field
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from reverie.integrations.llama_index import ReverieMemoryBlock

# LlamaIndex's sync wrappers open event loops they never close (conftest closes the current one);
# the ResourceWarning of any other such loop is collected inside these tests, not after them
pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


SCOPE = "acme/helpdesk"
LESSON = "Password resets need the ticket number before the reset link is sent."


def _memory(
    rv: Reverie,
    session: str,
    folder: Path,
    token_limit: int = 60,
    block: ReverieMemoryBlock | None = None,
    insert: str = "system",
) -> Memory:
    """LlamaIndex's Memory with its chat store in a file beside the brain; connections are not
    pooled, so none is left open when the test's event loops are gone."""
    folder.mkdir(parents=True, exist_ok=True)
    chats = folder / "chats.db"
    engine = create_async_engine(f"sqlite+aiosqlite:///{chats}", poolclass=NullPool)
    return Memory.from_defaults(
        session_id=session,
        async_engine=engine,
        token_limit=token_limit,
        chat_history_token_ratio=0.5,
        token_flush_size=20,
        memory_blocks=[block or ReverieMemoryBlock(memory=rv, scope=SCOPE)],
        insert_method=InsertMethod(insert),
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


class Scripted(CustomLLM):
    """A completion model that answers at once in ReAct's format and keeps each prompt."""

    prompts: list[str] = Field(default_factory=list)

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(is_chat_model=False)

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        self.prompts.append(prompt)
        return CompletionResponse(text="Thought: I can answer without any tools.\nAnswer: ok")

    @llm_completion_callback()
    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> Iterator[CompletionResponse]:
        reply = self.complete(prompt)
        yield CompletionResponse(text=reply.text, delta=reply.text)


# LlamaIndex's agent workflow warns of its own deprecated calls (pydantic's __fields__ and
# model_computed_fields, its is_running) while it runs
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_two_users_share_one_agent_and_neither_sees_the_others_memory(tmp_path: Path) -> None:
    """One ReActAgent and one block; each user's conversation is a Memory whose session id
    names the user."""
    with Reverie.open(tmp_path / "brain.db") as rv:
        block = ReverieMemoryBlock(memory=rv, scope="acme/chef", user_from_session=True)
        said = {"alice": "I am allergic to peanuts.", "bob": "I am allergic to shellfish."}
        for user, text in said.items():
            memory = _memory(rv, user, tmp_path / user, block=block)
            turns = [ChatMessage(role=MessageRole.USER, content=f"{text} ({n})") for n in range(4)]
            asyncio.run(memory.aput_messages(turns))
            asyncio.run(memory.aget())  # flushed into the block: episodes of the user's scope
        assert {str(s) for s in rv.scopes()} == {"acme/chef/alice", "acme/chef/bob"}

        llm = Scripted()
        agent = ReActAgent(tools=[], llm=llm)
        heard = {}
        for user in said:
            # ReActAgent writes its own system prompt over the Memory's: the block goes with
            # the user's message instead
            memory = _memory(rv, user, tmp_path / f"{user}-2", 2000, block=block, insert="user")
            asyncio.run(_ask(agent, "What am I allergic to?", memory))
            heard[user] = llm.prompts[-1]
        assert "peanuts" in heard["alice"] and "shellfish" not in heard["alice"]
        assert "shellfish" in heard["bob"] and "peanuts" not in heard["bob"]


async def _ask(agent: ReActAgent, question: str, memory: Memory) -> None:
    await agent.run(user_msg=question, memory=memory)
