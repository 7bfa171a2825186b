"""The OpenAI Agents SDK's own Runner, its chat-completions model pointed at the local fake
server: tool calls land as episodes through the run hooks, and after a dream the recalled
lesson is in the system prompt the SDK sends."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from reverie import Reverie
from reverie.llm.fake_server import FakeLLMServer, Reply, openai_reply
from reverie.models import Scope

agents = pytest.importorskip("agents", reason="needs the openai-agents extra (in dev)")
from openai import AsyncOpenAI  # noqa: E402

from reverie.integrations.openai_agents import (  # noqa: E402
    ReverieRunHooks,
    ReverieSession,
    recall_instructions,
    recall_tool,
    save_tool,
)

SCOPE = "acme/deployer"
TASK = "Deploy the billing service to staging."


def _tool_call(call_id: str, name: str, arguments: dict[str, Any]) -> Reply:
    call = {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }
    body = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "model": "fake",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": None, "tool_calls": [call]},
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }
    return Reply(body=body)


@agents.function_tool
def deploy(service: str, drain_first: bool = False) -> str:
    """Deploy a service to staging.

    Args:
        service: The service to deploy.
        drain_first: Drain the migration queue before deploying.
    """
    if not drain_first:
        return "Error: migration lock held by the previous deploy"
    return f"{service} deployed to staging"


def _run(rv: Reverie, server: FakeLLMServer, session: str) -> Any:
    model = agents.OpenAIChatCompletionsModel(
        model="fake", openai_client=AsyncOpenAI(base_url=server.openai_base_url, api_key="t")
    )
    agent = agents.Agent(
        name="deployer",
        instructions=recall_instructions(rv, SCOPE, "You deploy services."),
        tools=[deploy, recall_tool(rv, SCOPE)],
        model=model,
    )
    hooks = ReverieRunHooks(rv, SCOPE, session_id=session, category="deploy")
    return asyncio.run(agents.Runner.run(agent, TASK, hooks=hooks))


def test_tool_calls_become_episodes_and_recall_reaches_the_prompt(tmp_path: Path) -> None:
    agents.set_tracing_disabled(True)
    lesson = "drain the migration queue before deploying billing"
    with Reverie.open(tmp_path / "brain.db") as rv, FakeLLMServer() as server:
        server.push(
            _tool_call("call_1", "deploy", {"service": "billing"}),
            _tool_call("call_2", "deploy", {"service": "billing", "drain_first": True}),
            openai_reply("Deployed after draining the queue."),
        )
        result = _run(rv, server, "s1")
        assert result.final_output == "Deployed after draining the queue."
        episodes = rv.store.scan(rv.store.scopes()[0], 0, 10)
        assert [e.outcome for e in episodes] == ["failure", "success"]
        assert episodes[0].situation == TASK
        assert episodes[0].error == "Error: migration lock held by the previous deploy"
        assert json.loads(episodes[1].action.removeprefix("deploy ")) == {
            "service": "billing",
            "drain_first": True,
        }
        assert episodes[1].metadata["call_id"] == "call_2"

        rv.remember({"situation": TASK, "action": "deploy", "lesson": lesson}, scope=SCOPE)
        rv.dream(SCOPE, now=datetime(2030, 1, 1, tzinfo=UTC))
        server.push(
            _tool_call("call_3", "search_memory", {"query": "deploy billing"}),
            openai_reply("Draining first."),
        )
        _run(rv, server, "s2")
        system = server.requests[-2].body["messages"][0]
        assert system["role"] == "system" and lesson in system["content"]
        tool_answer = server.requests[-1].body["messages"][-1]
        assert tool_answer["role"] == "tool" and lesson in tool_answer["content"]

        _run_again_stores_nothing_twice(rv, server)


def _run_again_stores_nothing_twice(rv: Reverie, server: FakeLLMServer) -> None:
    before = rv.status(SCOPE).episodes
    server.push(_tool_call("call_1", "deploy", {"service": "billing"}), openai_reply("Stopped."))
    _run(rv, server, "s1")  # the same session and call id: the same episode
    assert rv.status(SCOPE).episodes == before


def test_a_failing_memory_never_breaks_the_run(tmp_path: Path) -> None:
    agents.set_tracing_disabled(True)
    rv = Reverie.open(tmp_path / "brain.db")
    rv.close()  # every recall and remember now fails
    with FakeLLMServer() as server:
        server.push(
            _tool_call("call_1", "deploy", {"service": "billing", "drain_first": True}),
            openai_reply("Done."),
        )
        assert _run(rv, server, "s1").final_output == "Done."
        assert server.requests[0].body["messages"][0]["content"] == "You deploy services."


BASE = "acme/assistant"


def _shared_agent(rv: Reverie, server: FakeLLMServer) -> Any:
    """One agent object for every user: its scope comes from each run's context."""
    model = agents.OpenAIChatCompletionsModel(
        model="fake", openai_client=AsyncOpenAI(base_url=server.openai_base_url, api_key="t")
    )
    return agents.Agent(
        name="assistant",
        instructions=recall_instructions(rv, BASE, "You help."),
        tools=[recall_tool(rv, BASE), save_tool(rv, BASE)],
        model=model,
    )


def _as(agent: Any, user: str, text: str, session: Any = None, hooks: Any = None) -> Any:
    context = {"user_id": user, "run_id": f"run-{user}"}
    run = agents.Runner.run(agent, text, context=context, session=session, hooks=hooks)
    return asyncio.run(run)


def test_two_users_share_one_agent_and_neither_sees_the_others_memory(tmp_path: Path) -> None:
    agents.set_tracing_disabled(True)
    with Reverie.open(tmp_path / "brain.db") as rv, FakeLLMServer() as server:
        agent = _shared_agent(rv, server)
        for user, fact in [("alice", "My editor is helix."), ("bob", "I deploy with ansible.")]:
            server.push(
                _tool_call(f"save_{user}", "save_memory", {"fact": fact}), openai_reply("Ok.")
            )
            _as(agent, user, fact)
        assert {str(s) for s in rv.scopes()} == {f"{BASE}/alice", f"{BASE}/bob"}
        [saved] = rv.store.scan(Scope.parse(f"{BASE}/alice"), 0, 10)
        assert saved.situation == "My editor is helix." and saved.session_id == "run-alice"

        seen: dict[str, list[str]] = {"alice": [], "bob": []}
        for user, texts in seen.items():
            for question in ("Which editor do I use?", "How do I deploy?"):
                server.push(
                    _tool_call(f"q_{user}", "search_memory", {"query": question}),
                    openai_reply("Done."),
                )
                _as(agent, user, question)
                texts.append(server.requests[-2].body["messages"][0]["content"])
                texts.append(server.requests[-1].body["messages"][-1]["content"])
        alice, bob = ("\n".join(texts) for texts in seen.values())
        assert "helix" in alice and "ansible" not in alice
        assert "ansible" in bob and "helix" not in bob

        hooks = ReverieRunHooks(rv, BASE, category="assistant")  # one for every run, too
        for user in ("alice", "bob"):
            server.push(_tool_call(f"h_{user}", "search_memory", {"query": "x"}), openai_reply("."))
            _as(agent, user, "Anything?", hooks=hooks)
            *_, call = rv.store.scan(Scope.parse(f"{BASE}/{user}"), 0, 10)
            assert call.tools == ["search_memory"] and call.session_id == f"run-{user}"


def test_a_session_records_each_users_turns_in_their_scope(tmp_path: Path) -> None:
    agents.set_tracing_disabled(True)
    with Reverie.open(tmp_path / "brain.db") as rv, FakeLLMServer() as server:
        agent = _shared_agent(rv, server)
        sessions = {u: ReverieSession(rv, BASE, session_id=f"chat-{u}") for u in ("ana", "ben")}
        for user, said in [("ana", "I live in Lyon."), ("ben", "I live in Oslo.")]:
            for n in range(2):
                server.push(openai_reply(f"Noted ({n})."))
                _as(agent, user, f"{said} ({n})", sessions[user])
        history = asyncio.run(sessions["ana"].get_items())
        assert [i.get("role") for i in history] == ["user", "assistant"] * 2
        for user, city, other in [("ana", "Lyon", "Oslo"), ("ben", "Oslo", "Lyon")]:
            episodes = rv.store.scan(Scope.parse(f"{BASE}/{user}"), 0, 10)
            assert [e.session_id for e in episodes] == [f"chat-{user}"] * 2  # each turn once
            assert all(city in e.situation and other not in e.situation for e in episodes)
        asyncio.run(sessions["ana"].clear_session())
        assert asyncio.run(sessions["ana"].get_items()) == []
        assert rv.status(f"{BASE}/ana").episodes == 2  # the evidence stays
