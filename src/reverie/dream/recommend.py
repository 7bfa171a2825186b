"""Advisory tuning recommendations, written into each cycle's report. Pure; nothing acts on them.

Three signals, each from the current report and the scope's earlier reports (newest first):

* **tool failing more** — a tool's failure rate among this cycle's scanned episodes is at least
  ``RISING_MIN_RATE`` and ``RISING_DELTA`` above its rate over earlier cycles (each side needs
  ``MIN_SAMPLE`` episodes);
* **backlog** — eligible episodes were deferred by the caps and the backlog did not shrink since the
  previous cycle, or more is deferred than one cycle can take: dream more often (or raise the cap);
* **nothing eligible** — ``IDLE_CYCLES`` cycles in a row scanned new episodes and found none
  eligible: the thresholds are too strict for this agent (or it logs no lessons).
"""

from __future__ import annotations

from collections.abc import Sequence

from reverie.config import DreamConfig
from reverie.models import CycleReport, Episode, Outcome, Recommendation

__all__ = ["recommend", "tool_stats"]

MIN_SAMPLE = 5
RISING_MIN_RATE = 0.3
RISING_DELTA = 0.2
IDLE_CYCLES = 3
MAX_TOOLS = 50
_FAILING = {Outcome.FAILURE, Outcome.TIMEOUT}


def tool_stats(episodes: Sequence[Episode]) -> dict[str, list[int]]:
    """``{tool: [episodes, failures]}`` for the ``MAX_TOOLS`` most used tools."""
    stats: dict[str, list[int]] = {}
    for ep in episodes:
        for tool in ep.tools:
            row = stats.setdefault(tool.lower(), [0, 0])
            row[0] += 1
            row[1] += ep.outcome in _FAILING
    top = sorted(stats.items(), key=lambda kv: (-kv[1][0], kv[0]))[:MAX_TOOLS]
    return dict(sorted(top))


def _rising_tools(report: CycleReport, history: Sequence[CycleReport]) -> list[Recommendation]:
    out: list[Recommendation] = []
    for tool, (n, failed) in sorted(report.tool_stats.items()):
        before_n = sum(h.tool_stats.get(tool, [0, 0])[0] for h in history)
        before_failed = sum(h.tool_stats.get(tool, [0, 0])[1] for h in history)
        if n < MIN_SAMPLE or before_n < MIN_SAMPLE:
            continue
        now_rate, before_rate = failed / n, before_failed / before_n
        if now_rate >= RISING_MIN_RATE and now_rate - before_rate >= RISING_DELTA:
            out.append(
                Recommendation(
                    kind="tool-failing-more",
                    subject=tool,
                    message=f"{tool} failed in {now_rate:.0%} of {n} episodes this cycle, up from"
                    f" {before_rate:.0%} over the previous {before_n}: check the tool or its"
                    " inputs",
                )
            )
    return out


def _backlog(
    report: CycleReport, history: Sequence[CycleReport], config: DreamConfig
) -> list[Recommendation]:
    if report.deferred == 0:
        return []
    previous = history[0].deferred if history else 0
    over_cap = report.deferred > config.max_episodes_per_cycle
    if not over_cap and (previous == 0 or report.deferred < previous):
        return []
    trend = f"up from {previous}" if report.deferred > previous else f"was {previous}"
    return [
        Recommendation(
            kind="backlog",
            message=f"{report.deferred} eligible episodes wait for a later cycle ({trend}); the"
            " backlog outgrows the schedule: dream more often (a shorter interval) or raise"
            f" max_episodes_per_cycle ({config.max_episodes_per_cycle}) /"
            f" max_groups_per_cycle ({config.max_groups_per_cycle})",
        )
    ]


def _idle(
    report: CycleReport, history: Sequence[CycleReport], config: DreamConfig
) -> list[Recommendation]:
    streak, seen = 0, 0
    for r in (report, *history):
        if r.scanned == 0 or r.collected > 0:
            break
        streak, seen = streak + 1, seen + r.scanned
    if streak < IDLE_CYCLES:
        return []
    return [
        Recommendation(
            kind="nothing-eligible",
            message=f"{streak} cycles in a row found nothing eligible among {seen} new episodes:"
            f" lower importance_threshold ({config.importance_threshold}) or min_pattern"
            f" ({config.min_pattern}), or have the agent record lessons",
        )
    ]


def recommend(
    report: CycleReport, history: Sequence[CycleReport], config: DreamConfig
) -> list[Recommendation]:
    """Advice for ``report`` given the scope's earlier reports, newest first."""
    return [
        *_rising_tools(report, history),
        *_backlog(report, history, config),
        *_idle(report, history, config),
    ]
