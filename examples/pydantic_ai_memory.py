"""A Pydantic AI agent with Reverie: recall in its instructions, its tool calls remembered.

Runs offline: ``pip install 'reverie[pydantic-ai]' && python examples/pydantic_ai_memory.py``.
Pydantic AI's ``FunctionModel`` scripts the model; use ``Agent("openai:gpt-...")`` for a real one.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from reverie import Reverie
from reverie.integrations.pydantic_ai import recall_instructions, remember_run

SCOPE = "acme/analyst"


def scripted(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    if len(messages) == 1:
        return ModelResponse(parts=[ToolCallPart("lookup", {"city": "Lyon"})])
    return ModelResponse(parts=[TextPart("It is 14°C in Lyon.")])


def main(db: Path | None = None) -> str:
    path = db or Path(tempfile.mkdtemp(prefix="reverie-pydantic-ai-")) / "brain.db"
    with Reverie.open(path) as rv:
        agent = Agent(FunctionModel(scripted), instructions=recall_instructions(rv, SCOPE))

        @agent.tool_plain
        def lookup(city: str) -> str:
            """The weather in a city."""
            return f"{city}: 14°C"

        result = agent.run_sync("What's the weather in Lyon?")
        stored = remember_run(rv, SCOPE, result.all_messages(), session_id="run-1")
        print(f"{stored.stored if stored else 0} tool call(s) remembered")
        return result.output


if __name__ == "__main__":
    print(main())
