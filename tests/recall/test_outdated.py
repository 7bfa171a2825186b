"""An older line telling a setting's value another way is outdated by the fact page.

A setting is changed with a config tool (read as a fact) but told in other ways too: a policy
check printing the limit, a note naming the vendor. Those lines are true of their day; beside
the fact page's current value they would read as current. Names and numbers are random."""

from __future__ import annotations

import random
import string
from datetime import UTC, datetime, timedelta
from pathlib import Path

from reverie import Reverie
from reverie.recall.outdated import shape

T0 = datetime(2026, 3, 1, 9, tzinfo=UTC)
SCOPE = "acme/payments"


def _name(rng: random.Random) -> str:
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(7)).capitalize()


def test_shapes_collapse_runs_of_one_class() -> None:
    assert shape("120000") == shape("75") == "9"
    assert shape("Laurentide") == shape("Borealis") == "Aa"
    assert shape("lbx-frankfurt") == "a-a" and shape("USD") == "A"


def test_an_older_line_naming_another_value_gives_way_to_the_fact(tmp_path: Path) -> None:
    rng = random.Random(5)
    old, new, other = _name(rng), _name(rng), _name(rng)
    rows = [
        {"id": "n1", "situation": "Inbox triage", "action": "note.write",
         "outcome": "success", "outcome_details": f"Payout partner route through {old} Trust.",
         "created_at": T0},
        {"id": "n2", "situation": "Checking the payout partner", "action": "policy.check",
         "outcome": "success", "outcome_details": f"payout partner in use: {old} Trust",
         "created_at": T0 + timedelta(days=2)},
        {"id": "n3", "situation": "Config change", "action": "cfg write",
         "outcome": "success",
         "outcome_details": f"payout.partner <- '{new} Fiduciary' (rev 4)",
         "created_at": T0 + timedelta(days=5)},
        {"id": "n4", "situation": "Payout partner review", "action": "review",
         "outcome": "success", "outcome_details": f"Payout partner {new} Fiduciary confirmed.",
         "created_at": T0 + timedelta(days=3)},
        {"id": "n5", "situation": "Payout partner onboarding of a second desk",
         "action": "desk.add", "outcome": "success",
         "outcome_details": "payout desk opened by the partner team", "created_at": T0},
        {"id": "n6", "situation": "Unrelated vendor", "action": "vendor.add",
         "outcome": "success", "outcome_details": f"Signed {other} for printing.",
         "created_at": T0},
    ]  # fmt: skip
    with Reverie.open(tmp_path / "brain.db", embedder=None) as rv:
        rv.ingest(rows, scope=SCOPE)
        rv.dream(SCOPE, now=T0 + timedelta(days=6))
        text = rv.recall("Which payout partner do we use?", SCOPE, 400).text
    assert f"{new} Fiduciary" in text
    assert old not in text  # older, of the same setting, another name in the value's place
    assert "Payout partner review" in text or f"{new} Fiduciary confirmed" in text
    assert "onboarding of a second desk" in text  # the setting's words, no value in its place
