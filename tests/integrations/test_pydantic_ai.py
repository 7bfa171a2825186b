"""Pydantic AI's own Agent with its scripted FunctionModel: the recalled lesson is in the
instructions the model receives, and a run's tool calls (a retry among them) become episodes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from reverie import Reverie
from reverie.models import Scope

pytest.importorskip("pydantic_ai", reason="needs the pydantic-ai extra (in dev)")
from pydantic_ai import Agent, ModelRetry
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from reverie.integrations.pydantic_ai import recall_instructions, remember_run, reverie_toolset

SCOPE = "acme/analyst"
LESSON = "Quarterly revenue queries must filter out test accounts."


def _script(seen: list[str]) -> FunctionModel:
    replies = iter(
        [
            ModelResponse(parts=[ToolCallPart("query", {"sql": "select sum(x) from revenue"})]),
            ModelResponse(parts=[ToolCallPart("query", {"sql": "select 1 where not test"})]),
            ModelResponse(parts=[TextPart("Revenue is 42.")]),
        ]
    )

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(info.instructions or "")
        return next(replies)

    return FunctionModel(model)


def _agent(rv: Reverie, seen: list[str]) -> Agent[None, str]:
    agent = Agent(_script(seen), instructions=recall_instructions(rv, SCOPE))

    @agent.tool_plain
    def query(sql: str) -> str:
        """Run a SQL query against the warehouse."""
        if "not test" not in sql:
            raise ModelRetry("Error: test accounts inflate revenue; filter them out")
        return "42"

    return agent


def test_runs_are_remembered_and_recall_reaches_the_instructions(tmp_path: Path) -> None:
    with Reverie.open(tmp_path / "brain.db") as rv:
        seen: list[str] = []
        result = _agent(rv, seen).run_sync("What was revenue last quarter?")
        assert result.output == "Revenue is 42."
        stored = remember_run(rv, SCOPE, result.all_messages(), session_id="run-1")
        assert stored is not None and stored.stored == 2
        episodes: list[Any] = rv.store.scan(rv.scopes()[0], 0, 10)
        assert [e.outcome for e in episodes] == ["failure", "success"]
        assert "test accounts inflate revenue" in (episodes[0].error or "")
        assert episodes[0].situation == "What was revenue last quarter?"
        assert episodes[1].metadata["source"] == "pydantic-ai"
        again = remember_run(rv, SCOPE, result.all_messages(), session_id="run-1")
        assert again is not None and again.stored == 0

        rv.remember({"situation": "revenue query", "action": "sql", "lesson": LESSON}, scope=SCOPE)
        rv.dream(SCOPE, now=datetime(2030, 1, 1, tzinfo=UTC))
        seen.clear()
        _agent(rv, seen).run_sync("What was quarterly revenue, without test accounts?")
        assert LESSON in seen[0]


def test_a_failing_memory_never_breaks_the_run(tmp_path: Path) -> None:
    rv = Reverie.open(tmp_path / "brain.db")
    rv.close()
    seen: list[str] = []
    result = _agent(rv, seen).run_sync("What was revenue last quarter?")
    assert result.output == "Revenue is 42." and seen[0] == ""
    assert remember_run(rv, SCOPE, result.all_messages()) is None


@dataclass
class Deps:
    """The application's own deps: who the run is for."""

    user_id: str
    run_id: str | None = None


def _memory_model(seen: list[str]) -> FunctionModel:
    """Saves a prompt that starts with "Remember:", searches for any other; then answers."""

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(info.instructions or "")
        last = messages[-1].parts[-1]
        if isinstance(last, ToolReturnPart):
            seen.append(str(last.content))
            return ModelResponse(parts=[TextPart("Done.")])
        prompt = str(getattr(last, "content", ""))
        if prompt.startswith("Remember: "):
            call = ToolCallPart("save_memory", {"fact": prompt.removeprefix("Remember: ")})
        else:
            call = ToolCallPart("search_memory", {"query": prompt})
        return ModelResponse(parts=[call])

    return FunctionModel(model)


def test_two_users_share_one_agent_and_neither_sees_the_others_memory(tmp_path: Path) -> None:
    with Reverie.open(tmp_path / "brain.db") as rv:
        seen: list[str] = []
        agent = Agent(
            _memory_model(seen), deps_type=Deps, toolsets=[reverie_toolset(rv, "acme/analyst")]
        )
        agent.run_sync("Remember: my warehouse is Snowflake.", deps=Deps("ada", "r1"))
        agent.run_sync("Remember: my warehouse is BigQuery.", deps=Deps("bo"))
        assert {str(s) for s in rv.scopes()} == {"acme/analyst/ada", "acme/analyst/bo"}
        [saved] = rv.store.scan(Scope.parse("acme/analyst/ada"), 0, 5)
        assert saved.session_id == "r1"

        heard = {}
        for user in ("ada", "bo"):
            seen.clear()
            agent.run_sync("Which warehouse do I use?", deps=Deps(user))
            heard[user] = "\n".join(seen)  # the instructions of each request, the tool's answer
        assert "Snowflake" in heard["ada"] and "BigQuery" not in heard["ada"]
        assert "BigQuery" in heard["bo"] and "Snowflake" not in heard["bo"]
        assert heard["ada"].count("Snowflake") >= 2  # in the instructions and in the answer


def test_remember_run_takes_the_scope_from_the_runs_deps(tmp_path: Path) -> None:
    with Reverie.open(tmp_path / "brain.db") as rv:
        result = _agent(rv, []).run_sync("What was revenue last quarter?")
        stored = remember_run(rv, SCOPE, result.all_messages(), deps=Deps("cy", "run-9"))
        assert stored is not None and stored.stored == 2
        episodes = rv.store.scan(Scope.parse(f"{SCOPE}/cy"), 0, 5)
        assert {e.session_id for e in episodes} == {"run-9"}
        assert rv.status(SCOPE).episodes == 0
