"""Published agent runs as ``reverie bench transcripts`` reads them, whatever file shape.

Two public shapes are read, each from where it lies (never copied):

* **tau-bench** (``historical_trajectories/*.json``): a list of runs, each ``task_id``,
  ``trial``, ``reward``, ``traj`` (OpenAI chat messages) and ``info.task.actions``.
* **tau2-bench** (``results/*.json``, leaderboard ``trajectories/*.json``): an object with
  ``tasks`` (each ``id`` and ``evaluation_criteria.actions``) and ``simulations`` (each
  ``task_id``, ``trial``, ``reward_info.reward`` and ``messages``). Its messages name a call as
  ``{"id", "name", "arguments"}`` and answer it with ``{"role": "tool", "id", "content",
  "error"}``; they are rewritten as OpenAI chat messages, the shape the ``openai-chat``
  adapter reads. A simulation without ``task_id`` is known by the task prefix of its action
  checks' ids (``"89_0"``: task 89).

Every run comes out in the tau-bench shape. Several files are one set: a run's ``trial`` is its
place among the runs of its task in reading order, so the same task run by two agents is two
trials.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reverie.errors import InvalidInput

__all__ = ["read_runs"]


def read_runs(paths: Sequence[Path]) -> list[dict[str, Any]]:
    """The runs of every file at ``paths``, in the tau-bench shape (module docstring)."""
    runs: list[dict[str, Any]] = []
    for path in paths:
        runs += _runs_of(path)
    seen: Counter[str] = Counter()
    for run in runs:
        key = str(run["task_id"])
        run["trial"] = seen[key]
        seen[key] += 1
    return runs


def _runs_of(path: Path) -> list[dict[str, Any]]:
    """The runs of one file, or a clear refusal naming what is wrong with it."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise InvalidInput(str(path), "not found") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InvalidInput(str(path), f"is not JSON ({exc})") from exc
    if isinstance(data, dict):
        runs = _tau2_runs(data)
    elif isinstance(data, list):
        runs = data
    else:
        runs = []
    shape = "tau-bench's list of runs or tau2-bench's {tasks, simulations}"
    if not runs:
        raise InvalidInput(str(path), f"holds no runs: expected {shape}")
    for i, run in enumerate(runs):
        if not isinstance(run, dict) or "task_id" not in run or "traj" not in run:
            raise InvalidInput(f"{path} run {i}", f"needs 'task_id' and 'traj': expected {shape}")
    return runs


def _tau2_runs(data: dict[str, Any]) -> list[dict[str, Any]]:
    actions = {
        str(t["id"]): (t.get("evaluation_criteria") or {}).get("actions") or []
        for t in data.get("tasks", [])
    }
    out = []
    for sim in data.get("simulations", []):
        task = _task_id(sim)
        reward = (sim.get("reward_info") or {}).get("reward")
        if task is None or reward is None:
            continue
        out.append(
            {
                "task_id": task,
                "reward": float(reward),
                "traj": [m for m in map(_openai_message, sim.get("messages", [])) if m],
                "info": {"task": {"actions": actions.get(task, [])}},
            }
        )
    return out


def _task_id(sim: dict[str, Any]) -> str | None:
    if sim.get("task_id") is not None:
        return str(sim["task_id"])
    checks = (sim.get("reward_info") or {}).get("action_checks") or []
    ids = [str((c.get("action") or {}).get("action_id", "")) for c in checks]
    prefixes = {i.rsplit("_", 1)[0] for i in ids if "_" in i}
    return prefixes.pop() if len(prefixes) == 1 else None


def _openai_message(message: dict[str, Any]) -> dict[str, Any] | None:
    role = message.get("role")
    content = message.get("content") or ""
    if role == "tool":
        flagged = message.get("error") is True and not content.lower().startswith("error")
        text = f"Error: {content}" if flagged else content
        return {"role": "tool", "tool_call_id": str(message.get("id", "")), "content": text}
    if role == "assistant":
        calls = [_openai_call(c) for c in message.get("tool_calls") or []]
        return {"role": "assistant", "content": content, **({"tool_calls": calls} if calls else {})}
    if role in ("user", "system"):
        return {"role": role, "content": content}
    return None


def _openai_call(call: dict[str, Any]) -> dict[str, Any]:
    args = call.get("arguments")
    return {
        "id": str(call.get("id", "")),
        "type": "function",
        "function": {
            "name": str(call.get("name") or "tool"),
            "arguments": args if isinstance(args, str) else json.dumps(args or {}),
        },
    }
