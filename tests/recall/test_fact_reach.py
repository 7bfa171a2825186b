"""A question about a fact reaches its current value through the words the fact was stated
in, the statements of older values included (``reverie.recall.answers.values_behind``)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from reverie import Reverie

SCOPE = "halcyon/streaming"
START = datetime(2026, 3, 2, 9, tzinfo=UTC)


def _fact(n: int, day: int, value: str, **fields: str) -> dict[str, Any]:
    fact = {"subject": "kafka", "attribute": "bootstrap", "value": value}
    return {"id": f"fact-{n}", "scope": SCOPE, "created_at": START + timedelta(days=day),
            "outcome": "success", "category": "streaming", "metadata": {"fact": fact},
            **fields}  # fmt: skip


def _routine(n: int, day: int) -> dict[str, Any]:
    topics = ["orders", "payments", "clicks", "sessions", "refunds"]
    topic = topics[n % len(topics)]
    when = START + timedelta(days=day, hours=2)
    return {"id": f"routine-{n}", "scope": SCOPE, "created_at": when, "outcome": "success",
            "category": "streaming", "situation": f"Compacting the {topic} topic",
            "action": f"ran the compaction for {topic}",
            "outcome_details": f"{topic} messages merged"}  # fmt: skip


def _history() -> list[dict[str, Any]]:
    old, new = "kafka-a.halcyon.io:9092", "msk.halcyon.io:9096"
    out = [_routine(n, n % 20) for n in range(80)]
    out += [
        _fact(1, 1, old, situation="Broker migration cut-over", action="rotated the configs",
              outcome_details=f"bootstrap servers are now {old}",
              lesson=f"Clients bootstrap from {old}."),
        _fact(2, 3, old, situation="Deploying the orders enricher",
              action=f"set bootstrap.servers={old}",
              outcome_details=f"enricher connected to {old}"),
        _fact(3, 12, new, situation="Broker migration cut-over", action="rotated the configs",
              outcome_details=f"bootstrap servers are now {new}",
              lesson=f"Clients bootstrap from {new}."),
        _fact(4, 14, new, situation="Landing files for the raw zone",
              action=f"kcat -b {new} -t orders -C -c 10",
              outcome_details=f"10 messages read from {new} for the extract"),
    ]  # fmt: skip
    return out


def _brain(tmp_path: Path) -> Reverie:
    rv = Reverie.open(tmp_path / "brain.db", embedder=None)
    items = sorted(_history(), key=lambda e: e["created_at"])
    for day in range(21):
        rv.ingest([e for e in items if (e["created_at"] - START).days == day])
        rv.dream(SCOPE, now=START + timedelta(days=day, hours=23))
    return rv


def _section(rv: Reverie, question: str) -> str:
    return rv.recall(question, SCOPE, 400, now=START + timedelta(days=22)).text


def test_a_paraphrase_reaches_the_current_value_through_an_older_statement(
    tmp_path: Path,
) -> None:
    """The word "clients" is in the current claim, "connect" only in a statement of the
    older value: together they are two of the question's words, about the one slot."""
    with _brain(tmp_path) as rv:
        text = _section(rv, "Which address do streaming clients connect to at the moment?")
    assert "msk.halcyon.io:9096" in text
    assert "kafka-a.halcyon.io:9092" not in text


def test_a_paraphrase_reaches_the_current_value_through_its_own_statements(
    tmp_path: Path,
) -> None:
    """The word "messages" is in an episode the current fact cites (and in eighty routine
    ones that rank before it), "clients" in the current claim."""
    with _brain(tmp_path) as rv:
        text = _section(rv, "Where do clients pull their messages from nowadays?")
    assert "msk.halcyon.io:9096" in text


def test_one_shared_word_with_the_fact_is_still_no_answer(tmp_path: Path) -> None:
    with _brain(tmp_path) as rv:
        assert _section(rv, "How do I rotate the Vault root token for clients?") == ""
        assert _section(rv, "Which Kinesis shard count do the clients use?") == ""


def _worded(rng: random.Random, n: int) -> str:
    return " ".join("".join(rng.choice("bcdfghklmnprstvz") + rng.choice("aeiou") for _ in range(3))
                    for _ in range(n))  # fmt: skip


def test_a_status_printed_after_every_kind_of_work_is_no_answer_to_any_of_it(
    tmp_path: Path,
) -> None:
    """A framework prints one status after every step (``job.phase=settled``): a fact of the
    brain, stated beside forty unrelated tasks. A question about one of those tasks matches
    the episode, not the status: the words a value was stated in are the ones beside it, so
    its page does not answer (before, every task's words were the status page's own)."""
    rng = random.Random(11)
    tasks = [(_worded(rng, 3), _worded(rng, 2)) for _ in range(40)]
    items = [
        {"id": f"step-{i}", "scope": SCOPE,
         "created_at": START + timedelta(days=i % 20, hours=i % 7),
         "outcome": "success", "situation": f"{what} for {whom}", "action": f"tool {what}",
         "outcome_details": f"{whom} handled | job.phase=settled"}
        for i, (what, whom) in enumerate(tasks)
    ]  # fmt: skip
    with Reverie.open(tmp_path / "brain.db", embedder=None) as rv:
        for day in range(20):
            rv.ingest([e for e in items if (e["created_at"] - START).days == day])
            rv.dream(SCOPE, now=START + timedelta(days=day, hours=23))
        assert any("settled" in p.revision.title for p in rv.pages(SCOPE))  # the status page
        text = _section(rv, f"how did the {tasks[7][0]} go")
    assert "settled" not in text
