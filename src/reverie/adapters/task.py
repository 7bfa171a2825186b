"""A whole agent run as one task episode: the request, the calls it made, and its result.

A transcript (or an :class:`~reverie.integrations.hook.AgentHook` run) may carry its result:
``outcome`` (``success``, ``failure``, ...), ``reward`` (a number: above zero is a success, zero
or below a failure) or ``feedback`` (a user's rating, as a number read like a reward, or a
comment, or ``{"rating" | "score": n, "comment" | "text": "..."}``). An explicit outcome wins,
then the reward, then a rated feedback. A run with a result becomes one episode, beside the
per-turn ones:

* ``situation`` — the request: the first user message, its leading salutation left out (a
  fragment of at most :data:`SALUTATION_WORDS` words closed by ``!`` ``,`` ``.`` or ``?``,
  such as "Hi there!"); a message that is nothing more gives way to the next one;
* ``action`` — the calls in order, ``tool {compact JSON args}``, joined by `` → ``;
* ``outcome`` — the run's result, ``outcome_details`` the feedback's comment;
* ``category`` ``task``, ``metadata["task"]`` true, ``metadata["calls"]`` the calls with
  their own results (:mod:`reverie.text.calls` reads them), ``reward`` and ``feedback``.

Runs of one kind of request are then grouped and compared by the dream
(:mod:`reverie.dream.tasks`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from reverie.adapters.shared import compact, excerpt

__all__ = [
    "TASK_CATEGORY",
    "RunCall",
    "RunResult",
    "call_record",
    "request_of",
    "run_result",
    "task_fields",
]

TASK_CATEGORY = "task"
SALUTATION_WORDS = 2
MAX_CALLS = 64
ARGS_CHARS = 2000
_FRAGMENT = re.compile(r"^\s*([^!,.?\n]*)[!,.?]+\s*")
_OUTCOMES = {"success", "failure", "partial", "timeout", "unknown"}


@dataclass(frozen=True)
class RunCall:
    """One tool call of a run: the tool, its arguments (JSON object or text), its result."""

    tool: str
    args: Any
    ok: bool | None = None


@dataclass(frozen=True)
class RunResult:
    """What a run achieved: its outcome, the reward and feedback it was given, if any."""

    outcome: str
    reward: float | None = None
    feedback: Any = None

    @property
    def comment(self) -> str | None:
        fb = self.feedback
        if isinstance(fb, str):
            return fb
        if isinstance(fb, Mapping):
            text = fb.get("comment", fb.get("text"))
            return str(text) if text else None
        return None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _rating(feedback: Any) -> float | None:
    if isinstance(feedback, Mapping):
        return _number(feedback.get("rating", feedback.get("score")))
    return _number(feedback)


def run_result(outcome: Any = None, reward: Any = None, feedback: Any = None) -> RunResult | None:
    """The result a run carries, or None when it carries none (module docstring); a value of
    the wrong kind raises ValueError naming it."""
    if outcome is None and reward is None and feedback is None:
        return None
    if outcome is not None and (not isinstance(outcome, str) or outcome not in _OUTCOMES):
        raise ValueError(f"outcome must be one of {', '.join(sorted(_OUTCOMES))}, got {outcome!r}")
    if reward is not None and _number(reward) is None:
        raise ValueError(f"reward must be a number, got {reward!r}")
    score = _number(reward) if reward is not None else _rating(feedback)
    if outcome is None:
        outcome = "unknown" if score is None else "success" if score > 0 else "failure"
    return RunResult(outcome, _number(reward), feedback)


def request_of(user_texts: Sequence[str]) -> str:
    """The request of a run: its first user message that says more than a salutation, the
    salutation left out."""
    for text in user_texts:
        rest = text.strip()
        while (m := _FRAGMENT.match(rest)) and len(m.group(1).split()) <= SALUTATION_WORDS:
            rest = rest[m.end() :]
        if rest:
            return rest
    return user_texts[0].strip() if user_texts else ""


def call_record(call: RunCall) -> dict[str, Any]:
    """A call as ``metadata["calls"]`` holds it; arguments too long to keep are cut as text."""
    args = call.args if call.args is not None else {}
    if len(compact(args)) > ARGS_CHARS:
        args = {"input": excerpt(compact(args), ARGS_CHARS)}
    record: dict[str, Any] = {"tool": call.tool, "args": args}
    if call.ok is not None:
        record["ok"] = call.ok
    return record


def _action(calls: Sequence[RunCall]) -> str:
    if not calls:
        return "(no tool calls)"
    return " → ".join(f"{c.tool} {compact(c.args if c.args is not None else {})}" for c in calls)


def task_fields(
    request: str, calls: Sequence[RunCall], result: RunResult, error: str | None = None
) -> dict[str, Any]:
    """The episode fields of a run (no id, scope or time: the caller's)."""
    kept = list(calls)[:MAX_CALLS]
    metadata: dict[str, Any] = {"task": True, "calls": [call_record(c) for c in kept]}
    if result.reward is not None:
        metadata["reward"] = result.reward
    if result.feedback is not None:
        metadata["feedback"] = result.feedback
    item: dict[str, Any] = {
        "situation": excerpt(request, 8000) or "(no request recorded)",
        "action": excerpt(_action(kept), 8000),
        "outcome": result.outcome,
        "tools": list(dict.fromkeys(c.tool for c in kept)),
        "category": TASK_CATEGORY,
        "metadata": metadata,
    }
    if result.comment:
        item["outcome_details"] = excerpt(result.comment, 4000)
    if error and result.outcome in ("failure", "partial", "timeout"):
        item["error"] = excerpt(error, 4000)
    return item
