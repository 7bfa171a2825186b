"""The OpenAI Agents SDK with Reverie: tool calls remembered, recall in the instructions.

Runs offline: ``pip install 'reverie[openai-agents]' && python examples/openai_agents_hooks.py``.
A local server speaking the chat-completions wire format plays the model; give the SDK a real
model (or drop ``model=``) and nothing else changes.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, set_tracing_disabled
from openai import AsyncOpenAI

from reverie import Reverie
from reverie.integrations.openai_agents import ReverieRunHooks, recall_instructions
from reverie.llm.fake_server import FakeLLMServer, Reply, openai_reply

SCOPE = "acme/ops-agent"


@function_tool
def restart(service: str) -> str:
    """Restart a service.

    Args:
        service: Its name.
    """
    return f"{service} restarted"


def _calls_restart() -> Reply:
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "restart", "arguments": json.dumps({"service": "queue"})},
    }
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    return Reply(
        body={
            "id": "c",
            "object": "chat.completion",
            "model": "fake",
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
        }
    )


def main(db: Path | None = None) -> str:
    set_tracing_disabled(True)
    path = db or Path(tempfile.mkdtemp(prefix="reverie-agents-")) / "brain.db"
    with Reverie.open(path) as rv, FakeLLMServer() as server:
        server.push(_calls_restart(), openai_reply("The queue is back."))
        client = AsyncOpenAI(base_url=server.openai_base_url, api_key="offline")
        agent = Agent(
            name="ops",
            instructions=recall_instructions(rv, SCOPE, "You keep services running."),
            tools=[restart],
            model=OpenAIChatCompletionsModel(model="fake", openai_client=client),
        )
        hooks = ReverieRunHooks(rv, SCOPE, session_id="run-1")
        result = asyncio.run(Runner.run(agent, "The queue is stuck.", hooks=hooks))
        for ep in rv.store.scan(rv.scopes()[0], 0, 10):
            print(f"episode: {ep.action} -> {ep.outcome}")
        return str(result.final_output)


if __name__ == "__main__":
    print(main())
