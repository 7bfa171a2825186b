"""``reverie bench transcripts``: published runs of either benchmark's shape, read where they lie,
measured by purity and utterance titles."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from reverie.bench.transcripts import is_utterance_title, run_transcripts, task_kind
from reverie.bench.transcripts_read import read_runs
from reverie.errors import InvalidInput


def _tau2_simulation(task: str, n: int, ok: bool, *, named: bool = True) -> dict[str, Any]:
    call = {"id": f"c{n}", "name": "cancel_pending_order", "arguments": {"order_id": f"#W{n}"}}
    result = {"id": f"c{n}", "role": "tool", "content": "order not pending", "error": not ok}
    sim: dict[str, Any] = {
        "id": f"sim-{n}",
        "reward_info": {
            "reward": 1.0 if ok else 0.0,
            "action_checks": [{"action": {"action_id": f"{task}_0"}}],
        },
        "messages": [
            {"role": "assistant", "content": "Hi! How can I help you today?"},
            {"role": "user", "content": f"Please cancel my order #W{n}, I ordered it by mistake."},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            result,
            {"role": "assistant", "content": "Done."},
        ],
    }
    if named:
        sim |= {"task_id": task, "trial": 7}
    return sim


def _tau2_file(tmp_path: Path, name: str, sims: list[dict[str, Any]]) -> Path:
    actions = [{"name": "find_user_id_by_email"}, {"name": "cancel_pending_order"}]
    data = {
        "tasks": [{"id": "3", "evaluation_criteria": {"actions": actions}}],
        "simulations": sims,
    }
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_tau2_results_read_as_tau_bench_runs_one_trial_per_run_of_a_task(tmp_path: Path) -> None:
    first = _tau2_file(tmp_path, "a.json", [_tau2_simulation("3", 1, True)])
    second = _tau2_file(tmp_path, "b.json", [_tau2_simulation("3", 2, False, named=False)])
    runs = read_runs([first, second])
    assert [(r["task_id"], r["trial"], r["reward"]) for r in runs] == [("3", 0, 1.0), ("3", 1, 0.0)]
    assert task_kind(runs[0]) == "cancel_pending_order"  # reads are not the kind
    assistant = runs[0]["traj"][2]
    assert assistant["tool_calls"][0]["function"] == {
        "name": "cancel_pending_order",
        "arguments": json.dumps({"order_id": "#W1"}),
    }
    assert runs[1]["traj"][3] == {
        "role": "tool",
        "tool_call_id": "c2",
        "content": "Error: order not pending",
    }
    result = run_transcripts([first, second], nights=1)
    assert result.runs == 2 and result.utterance_titles == 0
    assert result.pages >= 1 and result.purity == 1.0


def test_a_title_is_an_utterance_with_or_without_a_speaker_label() -> None:
    said = ["I'd like to make some changes if possible.", "Can you help me?"]
    assert is_utterance_title("user: I'd like to make some changes if possible.", said)
    assert is_utterance_title("I'd like to make some changes…", said)
    assert is_utterance_title("Hello there, I need help", said)
    assert is_utterance_title("Make some changes if possible", said)  # quoted mid-sentence
    assert not is_utterance_title("Making changes", said)
    assert not is_utterance_title("Changing the items of a pending order", said)
    assert not is_utterance_title("note: Changing the items", said)


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("", "is not JSON"),
        ('{"results": []}', "holds no runs"),
        ("7", "holds no runs"),
        ('[{"task_id": 1}]', "run 0: needs 'task_id' and 'traj'"),
    ],
)
def test_a_file_that_holds_no_runs_is_refused_with_what_is_wrong(
    tmp_path: Path, content: str, says: str
) -> None:
    path = tmp_path / "runs.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InvalidInput, match=re.escape(says)):
        read_runs([path])
