"""Training export: chat rows (system, cited episodes, page), deterministic, redacted."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from reverie import Reverie
from reverie.dream.archive import Archive
from reverie.memory.export import SYSTEM_PROMPT, write_training
from tests.conftest import T0, EpisodeFactory


def _brain(path: Path, make: EpisodeFactory) -> Reverie:
    rv = Reverie.open(path)
    rv.ingest([make(lesson="wait for the rollout before checking pods") for _ in range(4)])
    rv.ingest(
        [
            make(scope="acme/researcher", category="search", tools=["web"], importance=8,
                 error="HTTP Error 429 with key sk-abcdefghijklmnopqrstuvwx1234")
            for _ in range(3)
        ]
    )  # fmt: skip
    rv.dream_all(now=T0 + timedelta(days=1))
    return rv


def test_rows_are_chat_examples_citing_their_episodes(
    tmp_path: Path, make_episode: EpisodeFactory
) -> None:
    with _brain(tmp_path / "b.db", make_episode) as rv:
        done = write_training(rv.store, tmp_path / "out" / "train.jsonl")
        rows = [json.loads(line) for line in done.path.read_text().splitlines()]
        assert (
            done.rows == len(rows) == len(rv.pages("acme/coder")) + len(rv.pages("acme/researcher"))
        )
        assert done.scopes == 2
        for row in rows:
            system, user, assistant = row["messages"]
            assert (system["role"], user["role"], assistant["role"]) == (
                "system",
                "user",
                "assistant",
            )
            assert system["content"] == SYSTEM_PROMPT
            page = rv.page(row["metadata"]["page_id"])
            assert assistant["content"] == page.to_markdown()
            assert row["metadata"]["episodes"] == page.citations
            assert all(f"### {e}" in user["content"] for e in page.citations)
        assert "sk-abcdefghijklmnopqrstuvwx1234" not in done.path.read_text()  # redacted


def test_same_brain_same_bytes_even_after_archiving(
    tmp_path: Path, make_episode: EpisodeFactory
) -> None:
    with _brain(tmp_path / "b.db", make_episode) as rv:
        first = write_training(rv.store, tmp_path / "a.jsonl").path.read_bytes()
        second = write_training(rv.store, tmp_path / "b.jsonl").path.read_bytes()
        assert first == second
        Archive(rv.store).run(timedelta(days=30), T0 + timedelta(days=90), apply=True)
        third = write_training(rv.store, tmp_path / "c.jsonl").path.read_bytes()
        assert third == first  # cited episodes are read back from the cold tier
