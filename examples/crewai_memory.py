"""A CrewAI crew whose memory is a Reverie scope.

Runs offline: ``pip install 'reverie[crewai]' && python examples/crewai_memory.py``. A scripted
OpenAI-compatible server on 127.0.0.1 (``reverie.llm.fake_server``) stands in for a model; give
the agent any ``crewai.LLM`` instead. Three deploys are remembered as episodes, a dream cycle
distils them, and the fourth task's prompt carries the lesson.
"""

from __future__ import annotations

import os
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from crewai import LLM, Agent, Crew, Task

from reverie import Reverie
from reverie.integrations.crewai import ReverieMemory
from reverie.llm.fake_server import FakeLLMServer, openai_reply

SCOPE = "acme/deploy-crew"
RESULT = "Deployed. Lesson: run kubectl rollout status before the smoke test."


def _crew(agent: Agent, memory: ReverieMemory, description: str) -> Crew:
    task = Task(description=description, expected_output="What was done", agent=agent)
    return Crew(agents=[agent], tasks=[task], memory=memory)


def main(db: Path | None = None) -> str:
    # stay on this machine: CrewAI's telemetry is on unless switched off
    os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
    os.environ.setdefault("OTEL_SDK_DISABLED", "true")
    path = db or Path(tempfile.mkdtemp(prefix="reverie-crewai-")) / "brain.db"
    with FakeLLMServer() as server, Reverie.open(path) as rv:
        llm = LLM(model="openai/gpt-4o-mini", base_url=server.openai_base_url, api_key="sk-local")
        agent = Agent(role="Deployer", goal="Ship safely", backstory="Runs the deploys", llm=llm)
        memory = ReverieMemory(rv, SCOPE)
        for n in range(3):
            server.push(openai_reply(RESULT))
            _crew(agent, memory, f"Deploy the billing api, release {n}").kickoff()
        rv.dream(SCOPE, now=datetime.now(UTC))
        server.push(openai_reply("Deployed after checking the rollout status."))
        _crew(agent, memory, "Deploy the billing api to production").kickoff()
        prompt = str(server.requests[-1].body["messages"][-1]["content"])
        print(prompt)
        return prompt


if __name__ == "__main__":
    main()
