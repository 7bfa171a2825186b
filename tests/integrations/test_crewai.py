"""ReverieMemory inside CrewAI's own Crew, Agent, Task and memory tools, with CrewAI's LLM class
talking to a scripted OpenAI-compatible server on 127.0.0.1.

CrewAI pins mcp<2 and pydantic<2.13, so these tests run in a venv of their own (.venv-crewai,
made and run by scripts/test); where crewai is not installed they skip.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

if importlib.util.find_spec("crewai") is None:
    pytest.skip("needs the crewai extra (.venv-crewai: scripts/test)", allow_module_level=True)
# CrewAI's telemetry and tracing are opt-out, read when it loads; these tests stay on 127.0.0.1
os.environ.update(
    OTEL_SDK_DISABLED="true", CREWAI_DISABLE_TELEMETRY="true", CREWAI_TRACING_ENABLED="false"
)
pytest.importorskip("crewai")  # quietly: importing it raises an ImportWarning of its own
from crewai import LLM, Agent, Crew, Task

from reverie import InvalidInput, NotFound, Reverie
from reverie.integrations.crewai import ReverieMemory, task_episode
from reverie.llm.fake_server import FakeLLMServer, RecordedRequest, Reply, openai_reply

# CrewAI's Agent reads its own deprecated fields while it sets itself up
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:crewai")

SCOPE = "acme/crew"
TASK = "Deploy the billing api to staging"
RESULT = "Deployed. Lesson: run kubectl rollout status before the smoke test."


@pytest.fixture(autouse=True)
def _crewai_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """CrewAI keeps its task outputs under the user's data directory: a temporary one here."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "home" / "data"))


@pytest.fixture
def brain(tmp_path: Path) -> Iterator[Reverie]:
    with Reverie.open(tmp_path / "brain.db") as rv:
        yield rv


def _tool_call(name: str, arguments: dict[str, Any]) -> Reply:
    """A chat-completions answer that calls the function ``name``."""
    call = {
        "id": f"call_{name}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    return Reply(
        body={
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "model": "fake",
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60},
        }
    )


def _crew(server: FakeLLMServer, memory: ReverieMemory, description: str = TASK) -> Crew:
    llm = LLM(model="openai/gpt-4o-mini", base_url=server.openai_base_url, api_key="sk-fake")
    agent = Agent(role="Deployer", goal="Ship safely", backstory="Runs the deploys", llm=llm)
    task = Task(description=description, expected_output="What was done", agent=agent)
    return Crew(agents=[agent], tasks=[task], memory=memory)


def _prompt(request: RecordedRequest) -> str:
    return "\n".join(str(m.get("content") or "") for m in request.body["messages"])


def test_a_task_is_an_episode_and_after_a_dream_its_lesson_is_in_the_next_prompt(
    brain: Reverie,
) -> None:
    memory = ReverieMemory(brain, SCOPE)
    with FakeLLMServer() as server:
        for n in range(3):
            server.push(openai_reply(RESULT))
            crew = _crew(server, memory, f"{TASK} (release {n})")
            assert crew.memory is memory  # CrewAI keeps the instance: no copy, no LanceDB
            assert crew.kickoff().raw == RESULT
        [first, *_] = brain.store.scan(brain.store.scopes()[0], 0, 10)
        assert first.situation == f"{TASK} (release 0)" and first.action == RESULT
        assert first.category == "Deployer" and str(first.outcome) == "success"
        assert first.metadata["expected_output"] == "What was done"
        assert brain.status(SCOPE).episodes == 3

        brain.dream(SCOPE, now=datetime(2030, 1, 1, tzinfo=UTC))
        server.push(openai_reply("Done, after the rollout status."))
        _crew(server, memory, "Deploy the billing api to production").kickoff()
        prompt = _prompt(server.requests[-1])
    assert "Relevant memories:" in prompt  # CrewAI's own memory section, filled by Reverie
    assert "kubectl rollout status" in prompt
    assert "kind: " in prompt and "citations: " in prompt


def test_the_agent_saves_and_searches_through_crewais_memory_tools(brain: Reverie) -> None:
    memory = ReverieMemory(brain, SCOPE)
    note = "The staging cluster is called blue-7."
    with FakeLLMServer() as server:
        server.push(
            _tool_call("save_to_memory", {"contents": [note]}),
            _tool_call("search_memory", {"queries": ["staging cluster"]}),
            openai_reply("Staging is blue-7."),
        )
        tools = [t["function"]["name"] for t in _first_tools(server, memory)]
        assert tools == ["search_memory", "save_to_memory"]
        results = [
            m["content"] for r in server.requests for m in r.body["messages"] if m["role"] == "tool"
        ]
    assert any("Saved to memory" in r for r in results)
    assert any("Found memories:" in r and "blue-7" in r for r in results)
    saved, task = memory.list_records()  # the agent's note, then CrewAI's record of the task
    assert saved.content.startswith(note) and saved.categories == ["episode"]
    assert "Where is staging?" in task.content and "blue-7" in task.content


def _first_tools(server: FakeLLMServer, memory: ReverieMemory) -> list[dict[str, Any]]:
    assert _crew(server, memory, "Where is staging?").kickoff().raw == "Staging is blue-7."
    tools: list[dict[str, Any]] = server.requests[0].body["tools"]
    return tools


def test_recall_maps_search_onto_memory_matches(brain: Reverie) -> None:
    memory = ReverieMemory(brain, SCOPE)
    record = memory.remember("Billing deploys need the finance freeze calendar.", importance=0.9)
    assert record is not None and record.importance == 0.9
    [match] = memory.recall("finance freeze calendar for billing deploys")
    assert match.record.id == record.id and 0 < match.score <= 1
    assert match.record.metadata["kind"] == "episode"
    assert memory.info().record_count == 1 and memory.list_categories() == {"episode": 1}


def test_forget_erases_by_id_and_what_has_no_meaning_is_refused(brain: Reverie) -> None:
    memory = ReverieMemory(brain, SCOPE)
    record = memory.remember("Temporary: the release train is paused.")
    assert record is not None
    assert memory.forget(record_ids=[record.id]) == 1
    with pytest.raises(NotFound):
        brain.get(record.id)
    assert brain.erasures()[0].request["episodes"] == [record.id]
    with pytest.raises(InvalidInput, match="record id only"):
        memory.forget(scope="/")
    with pytest.raises(InvalidInput, match="reverie forget --scope acme/crew"):
        memory.reset()
    with pytest.raises(InvalidInput, match="privacy boundary"):
        memory.remember("secret plan", private=True)
    with pytest.raises(InvalidInput, match="immutable"):
        memory.update(record.id, content="changed")


def test_a_read_only_memory_stores_nothing_and_copies_share_the_brain(brain: Reverie) -> None:
    reader = ReverieMemory(brain, SCOPE, read_only=True)
    assert reader.remember("ignored") is None and reader.remember_many(["x", "y"]) == []
    assert brain.status(SCOPE).episodes == 0
    twin = copy.deepcopy(ReverieMemory(brain, SCOPE))
    assert twin.engine is brain


def test_a_failing_store_recalls_nothing_and_the_crew_goes_on(tmp_path: Path) -> None:
    rv = Reverie.open(tmp_path / "closed.db")
    rv.close()
    memory = ReverieMemory(rv, SCOPE, read_only=True)
    assert memory.recall("anything at all") == []
    with FakeLLMServer() as server:
        server.push(openai_reply("Done."))
        assert _crew(server, memory).kickoff().raw == "Done."
        assert "Relevant memories:" not in _prompt(server.requests[0])


FAILED = "Error: no access"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (
            f"Task: t\nAgent: Writer\nExpected result: e\nResult: {FAILED}",
            {
                "situation": "t",
                "outcome": "failure",
                "category": "Writer",
                "error": "Error: no access",
            },
        ),
        ("Input: hello\nAgent: Bot\nResult: hi", {"situation": "hello", "action": "hi"}),
        ("just a note", None),
    ],
)
def test_task_episode_reads_crewais_records(content: str, expected: dict[str, Any] | None) -> None:
    found = task_episode(content)
    if expected is None:
        assert found is None
    else:
        assert found is not None and expected.items() <= found.items()


def test_the_example_runs_offline(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location(
        "crewai_memory", root / "examples/crewai_memory.py"
    )
    assert spec and spec.loader
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    prompt = example.main(tmp_path / "b.db")
    assert "Relevant memories:" in prompt and "kubectl rollout status" in prompt


def test_two_users_share_one_memory_and_neither_sees_the_others(brain: Reverie) -> None:
    """CrewAI's per-user idiom: one memory, a ``memory.scope("/user/<id>")`` view per user.

    The crew is built per request, as CrewAI's ``@CrewBase`` classes build it: CrewAI 1.15
    reuses an agent's executor in a later crew and that executor saves to its first crew's
    memory, so one Agent object shared by two crews would save the second user's task into the
    first user's view (CrewAI's own behaviour, whatever the memory)."""
    memory = ReverieMemory(brain, "acme/chef")
    said = {"alice": "I am vegan and love tofu.", "bob": "I eat salmon every week."}
    with FakeLLMServer() as server:
        llm = LLM(model="openai/gpt-4o-mini", base_url=server.openai_base_url, api_key="sk-fake")

        def kickoff(user: str, description: str) -> str:
            chef = Agent(role="Chef", goal="Cook well", backstory="Plans dinners", llm=llm)
            task = Task(description=description, expected_output="A dish", agent=chef)
            crew = Crew(agents=[chef], tasks=[task], memory=memory.scope(f"/user/{user}"))
            crew.kickoff()
            return _prompt(server.requests[-1])

        for user, text in said.items():
            server.push(openai_reply(f"Noted: {text}"))
            kickoff(user, f"Plan my dinner. {text}")
        assert {str(s) for s in brain.scopes()} == {"acme/chef/alice", "acme/chef/bob"}
        prompts = {}
        for user in said:
            server.push(openai_reply("A dish."))
            prompts[user] = kickoff(user, "Plan my dinner for tomorrow.")
    assert "Relevant memories:" in prompts["alice"] and "Relevant memories:" in prompts["bob"]
    assert "tofu" in prompts["alice"] and "salmon" not in prompts["alice"]
    assert "salmon" in prompts["bob"] and "tofu" not in prompts["bob"]
    [tofu] = [r for r in memory.list_records("/user/alice") if "tofu" in r.content]
    assert memory.scope("/user/alice").forget(record_ids=[tofu.id]) == 1
    assert [r.id for r in memory.list_records("/user/alice") if "tofu" in r.content] == []
    assert brain.status("acme/chef/bob").episodes == 2
