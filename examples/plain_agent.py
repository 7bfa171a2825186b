"""A plain Python agent with a sleep cycle: recall before each turn, an episode after, a dream
each night. Runs offline with no model: ``python examples/plain_agent.py``.

The "agent" deploys a service with a flaky tool. On the first night it dreams over its failures;
the next morning recall puts what it learned into its prompt, and it passes the fix.
"""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime
from pathlib import Path

from reverie import Reverie
from reverie.integrations.hook import AgentHook, Turn, with_context


def deploy(command: str) -> str:
    """A tool: deploying without a longer timeout always times out."""
    if "--timeout=10m" not in command:
        raise TimeoutError("timed out waiting for the condition")
    return "deployment rolled out"


def agent_turn(hook: AgentHook, task: str) -> None:
    with hook.turn(task) as turn:
        prompt = with_context(task, turn.context)
        knows_fix = "--timeout=10m" in prompt
        command = "kubectl apply -f k8s/ --wait" + (" --timeout=10m" if knows_fix else "")
        try:
            result = deploy(command)
        except TimeoutError as exc:
            fix = f"To {task.partition(' (')[0]}: pass --timeout=10m to kubectl apply --wait."
            turn.failed(command, str(exc), tools=["kubectl"], lesson=fix)
            print(f"[{task}] {command} -> failed: {exc}")
            return
        turn.succeeded(command, tools=["kubectl"])
        print(f"[{task}] {command} -> {result}")
    _report(turn)


def _report(turn: Turn) -> None:
    if turn.context:
        print("  recalled before acting:\n    " + turn.context.replace("\n", "\n    "))


def main(db: Path | None = None) -> None:
    path = db or Path(tempfile.mkdtemp(prefix="reverie-example-")) / "brain.db"
    with Reverie.open(path) as rv:
        hook = AgentHook(rv, "acme/deployer", session_id="example", category="deploy")
        for n in range(3):
            agent_turn(hook, f"deploy api to staging with kubectl (try {n + 1})")
        report = rv.dream("acme/deployer", now=datetime(2026, 11, 30, 3, 0, tzinfo=UTC))
        print(f"dream: {report.created} page(s) created from {report.episodes_marked} episodes")
        agent_turn(hook, "deploy api to staging with kubectl, next morning")


if __name__ == "__main__":
    main()
