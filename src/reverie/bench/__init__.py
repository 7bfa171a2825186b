"""Benchmarks that ship with Reverie (``reverie bench ...``).

Each benchmark measures Reverie against the cheapest thing that could possibly do the same
storage work in the same process (a baseline), prints the ratio, and checks a stated target.
"""

from __future__ import annotations

from reverie.bench.core import (
    CoreResult,
    CycleFigure,
    IngestFigure,
    RecallFigure,
    render_core,
    run_core,
)

__all__ = ["CoreResult", "CycleFigure", "IngestFigure", "RecallFigure", "render_core", "run_core"]
