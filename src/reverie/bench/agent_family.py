"""``reverie bench agent --worlds``: the same benchmark on every world, one table, with the
product's targets checked on the worlds it was not tuned on.

Each world (:data:`reverie.bench.agent_data.WORLDS`) has its own vocabulary, filler, phrasing
and noise rates, so a constant or a word list fitted to one world shows on the others. The
worlds are split in two: **tune** worlds, on which the product's thresholds and constants may be
chosen, and **report** (held-out) worlds, whose figures are the ones that count. The split is
the caller's (``tune``, ``report``) and is written into the result, so that a table always says
which of its rows were looked at while tuning.

Every world runs every system in the same run (:func:`reverie.bench.agent.run_agent`), BM25 over
the raw episodes included, so that "≥ BM25 + 0.2" compares like with like.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from reverie.bench.agent import BUDGETS, SYSTEMS, AgentResult, run_agent
from reverie.bench.agent_data import WORLDS
from reverie.bench.agent_gen import GenConfig
from reverie.errors import InvalidInput

__all__ = ["BASELINE", "MARGIN", "TARGETS", "FamilyResult", "Target", "check_targets", "run_family",
           "split_worlds"]  # fmt: skip

BASELINE = "bm25"
MARGIN = 0.2
"""How far above BM25 lesson recall at the small budget has to be."""


@dataclass(frozen=True)
class Target:
    """One of the product's targets on a held-out world: ``metric`` compared with ``bound``."""

    label: str
    metric: str
    bound: float
    at_least: bool

    def holds(self, figures: dict[str, float]) -> bool:
        value = figures[self.metric]
        return value >= self.bound if self.at_least else value <= self.bound


TARGETS = (
    Target("lesson @100 ≥ 0.85", "lesson_recall@100", 0.85, True),
    Target("current @100 ≥ 0.95", "fact_current@100", 0.95, True),
    Target("stale @250 ≤ 0.05", "fact_stale@250", 0.05, False),
    Target("never-stored → empty ≥ 0.9", "never_empty", 0.9, True),
    Target("0 leaks", "leaks", 0.0, False),
)


def check_targets(figures: dict[str, float], base: dict[str, float] | None) -> dict[str, bool]:
    """Which targets ``figures`` meet, by label; ``≥ BM25+0.2`` against ``base`` when given."""
    out = {t.label: t.holds(figures) for t in TARGETS}
    if base is not None:
        gap = figures["lesson_recall@100"] - base["lesson_recall@100"]
        out[f"≥ BM25+{MARGIN:g}"] = gap >= MARGIN - 1e-9
    return out


@dataclass
class FamilyResult:
    config: GenConfig
    """Seed, scale and days shared by every world (its ``world`` is unused)."""
    tune: tuple[str, ...]
    report: tuple[str, ...]
    worlds: dict[str, AgentResult]

    def figures(self, world: str) -> dict[str, dict[str, float]]:
        """Per system of ``world`` that ran, its headline metrics."""
        return {s.name: s.metrics() for s in self.worlds[world].systems if s.skipped is None}

    def checks(self, world: str) -> dict[str, dict[str, bool]]:
        """Per Reverie system of ``world``, which targets it meets."""
        figures = self.figures(world)
        base = figures.get(BASELINE)
        return {name: check_targets(f, base) for name, f in figures.items() if name != BASELINE}

    def held(self, system: str) -> bool:
        """Every target met by ``system`` on every held-out world."""
        return bool(self.report) and all(
            all(self.checks(w).get(system, {"ran": False}).values()) for w in self.report
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "seed": self.config.seed, "scale": self.config.scale, "days": self.config.days,
            "tune_worlds": list(self.tune), "report_worlds": list(self.report),
            "targets": [t.label for t in TARGETS] + [f"≥ BM25+{MARGIN:g}"],
            "worlds": {name: {**r.to_dict(), "checks": self.checks(name)}
                       for name, r in self.worlds.items()},
        }  # fmt: skip


def _names(text: str | Sequence[str]) -> list[str]:
    parts = text.split(",") if isinstance(text, str) else list(text)
    names = [p.strip() for p in parts if p.strip()]
    if names == ["all"]:
        return list(WORLDS)
    unknown = [n for n in names if n not in WORLDS]
    if unknown:
        raise InvalidInput("worlds", f"unknown {', '.join(unknown)}; choose from {WORLDS} or all")
    return names


def split_worlds(
    worlds: str | Sequence[str], tune: str | Sequence[str] = "ops",
    report: str | Sequence[str] | None = None,
) -> tuple[tuple[str, ...], tuple[str, ...]]:  # fmt: skip
    """(tune, report) worlds, in :data:`WORLDS` order: ``report`` defaults to every world of
    ``worlds`` not tuned on; a world cannot be both, and both come from ``worlds``."""
    chosen = set(_names(worlds))
    tuned = set(_names(tune)) & chosen if tune else set()
    held = set(_names(report)) if report else chosen - tuned
    if tuned & held:
        raise InvalidInput("report-worlds", f"{', '.join(sorted(tuned & held))} is also tuned on")
    if held - chosen:
        raise InvalidInput("report-worlds", f"{', '.join(sorted(held - chosen))} is not run")
    order = [w for w in WORLDS if w in tuned | held]
    return tuple(w for w in order if w in tuned), tuple(w for w in order if w in held)


def run_family(
    tune: Sequence[str], report: Sequence[str], config: GenConfig | None = None, *,
    systems: Sequence[str] = SYSTEMS, progress: Callable[[str], None] | None = None,
) -> FamilyResult:  # fmt: skip
    """Run :func:`run_agent` on every tune and report world with the same seed and scale, at
    the budgets the targets are stated in (:data:`reverie.bench.agent.BUDGETS`)."""
    config = config or GenConfig()
    results: dict[str, AgentResult] = {}
    for world in [w for w in WORLDS if w in {*tune, *report}]:
        if progress is not None:
            progress(f"world {world}")
        one = GenConfig(config.seed, world, config.scale, config.days, config.backfill_day)
        results[world] = run_agent(one, systems=systems, budgets=BUDGETS, progress=progress)
    return FamilyResult(config, tuple(tune), tuple(report), results)
