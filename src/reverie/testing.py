"""Fakes for tests and for users testing their own integrations.

Injected through public constructors (``Reverie(store, distiller=...)``), never by patching.
"""

from __future__ import annotations

from collections.abc import Callable

from reverie.models.plan import Evidence, Plan

__all__ = ["ScriptedDistiller"]


class ScriptedDistiller:
    """A distiller whose plan for each group is computed by ``script`` (evidence -> plan).

    ``calls`` records every evidence group it was shown, in order.
    """

    name = "scripted"

    def __init__(self, script: Callable[[Evidence], Plan]) -> None:
        self.script = script
        self.calls: list[Evidence] = []

    def distill(self, evidence: Evidence) -> Plan:
        self.calls.append(evidence)
        return self.script(evidence)
