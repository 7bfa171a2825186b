"""A bounded erasure stays inside its bound, the org brain included; and what an erasure leaves
in the brain's derived views (tool tallies, support counts) follows the evidence kept."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from reverie import Reverie
from reverie.config import Config, DreamConfig
from reverie.models import Scope
from reverie.server.mcp_tools import Tools

T0 = datetime(2026, 5, 4, 9, 0, tzinfo=UTC)
CONFIG = Config(dream=DreamConfig(promote_after_cycles=1, min_pattern=2))
SUBJECT = "ticket ACME-4242"


def _failures(scope: str, prefix: str, n: int, tool: str = "kubectl") -> list[dict[str, Any]]:
    return [
        {
            "id": f"{prefix}-{i}",
            "scope": scope,
            "created_at": (T0 + timedelta(hours=i)).isoformat(),
            "situation": f"rollout failed on staging, see {SUBJECT} ({prefix} {i})",
            "action": f"retry the rollout with {tool}",
            "outcome": "failure",
            "error": "TimeoutError: timed out",
            "lesson": f"raise the rollout timeout to ten minutes ({SUBJECT})",
            "tools": [tool],
        }
        for i in range(n)
    ]


def _org_by_source(rv: Reverie) -> dict[str, str]:
    """Each org page's current revision hash, by the agent scope it was promoted from."""
    return {p.topic_key.split("|")[1]: p.revision.hash for p in rv.pages("acme/_org", status=None)}


def test_an_erasure_bound_to_one_agent_leaves_other_agents_org_copies(tmp_path: Path) -> None:
    with Reverie.open(tmp_path / "b.db", config=CONFIG, embedder=None) as rv:
        rv.ingest(_failures("acme/coder", "c", 3) + _failures("acme/support", "s", 3))
        rv.dream_all(now=T0 + timedelta(days=1))
        before = _org_by_source(rv)
        assert set(before) == {"acme/coder", "acme/support"}, "both pages were promoted"

        done = Tools(rv, Scope.parse("acme/coder")).forget(subject=SUBJECT.upper(), apply=True)
        assert done.applied and sorted(done.episodes) == ["c-0", "c-1", "c-2"]
        after = _org_by_source(rv)
        assert after.get("acme/support") == before["acme/support"]  # not this erasure's
        assert "acme/coder" not in after or after["acme/coder"] != before["acme/coder"]

        receipt = rv.forget(subject=SUBJECT, agent="acme/coder", apply=True)
        assert _org_by_source(rv).get("acme/support") == before["acme/support"]
        assert receipt.details["episodes"] == []
        whole = rv.forget(subject=SUBJECT, tenant="acme", apply=True)  # the tenant's own: all
        assert whole.details["episodes"] == ["s-0", "s-1", "s-2"]
        assert all(SUBJECT.lower() not in p.to_markdown().lower() for p in rv.pages("acme/_org"))


def test_an_erased_episode_leaves_the_cycle_reports_tool_tallies(tmp_path: Path) -> None:
    with Reverie.open(tmp_path / "b.db", embedder=None) as rv:
        episodes = _failures("acme/coder", "c", 4)
        episodes[0]["tools"] = ["kubectl", "vault-unseal-7"]  # a tool only this episode used
        rv.ingest(episodes)
        report = rv.dream("acme/coder", now=T0 + timedelta(days=1))
        assert report.tool_stats["vault-unseal-7"] == [1, 1]
        assert report.tool_stats["kubectl"] == [4, 4]
        rv.forget(episodes=["c-0"], scope="acme/coder", apply=True)
        (cycle,) = rv.cycles("acme/coder")
        assert cycle.report.tool_stats == {"kubectl": [3, 3]}


def test_a_claim_s_stated_tally_follows_its_support(tmp_path: Path) -> None:
    with Reverie.open(tmp_path / "b.db", embedder=None) as rv:
        rv.ingest(_failures("acme/coder", "c", 6))
        rv.dream("acme/coder", now=T0 + timedelta(days=1))
        (page,) = rv.pages("acme/coder")
        said = [c.text for c in page.revision.claims if "6 times" in c.text]
        assert said, [c.text for c in page.revision.claims]
        rv.forget(episodes=["c-2"], scope="acme/coder", apply=True)
        texts = [c.text for c in rv.page(page.id).revision.claims]
        assert not [t for t in texts if "6 times" in t], texts
        assert [t for t in texts if "5 times" in t], texts


def test_a_dream_raced_by_an_erasure_dreams_again(tmp_path: Path) -> None:
    from reverie.dream.distill import ExtractiveDistiller  # noqa: PLC0415

    class Racing(ExtractiveDistiller):
        """Erases an episode of the group it is distilling, once, as another process would."""

        def __init__(self) -> None:
            super().__init__()
            self.rv: Reverie | None = None

        def distill(self, evidence: Any) -> Any:
            if self.rv is not None:
                rv, self.rv = self.rv, None
                rv.forget(episodes=["c-0"], scope="acme/coder", apply=True)
            return super().distill(evidence)

    racing = Racing()
    with Reverie.open(tmp_path / "b.db", embedder=None, distiller=racing) as rv:
        rv.ingest(_failures("acme/coder", "c", 4))
        racing.rv = rv
        report = rv.dream("acme/coder", now=T0 + timedelta(days=1))
        assert report.created == 1
        (page,) = rv.pages("acme/coder")
        assert "c-0" not in page.citations and page.citations


def test_a_fact_s_stated_tally_follows_its_support(tmp_path: Path) -> None:
    """A fact stated three times says "(3×, …)"; forgetting one of its statements makes it
    "(2×, …)", as a lesson's "(3 times, …)" becomes "(2 times, …)"."""
    rows = [
        {"id": f"s{n}", "situation": "config change", "action": "config.set db.host=alpha",
         "outcome": "success", "created_at": T0 + timedelta(days=n)}
        for n in range(3)
    ]  # fmt: skip
    with Reverie.open(tmp_path / "b.db", embedder=None) as rv:
        rv.ingest(rows, scope="acme/ops")
        rv.dream("acme/ops", now=T0 + timedelta(days=4))
        (page,) = rv.pages("acme/ops")
        assert "(3×, " in page.revision.claims[0].text
        rv.forget(episodes=["s1"], scope="acme/ops", apply=True)
        assert "(2×, " in rv.page(page.id).revision.claims[0].text
