"""Revisions kept byte-exact, restore, undo across cycles, the journal."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reverie import Reverie, UndoRefused
from reverie.cli.app import app
from reverie.memory.revisions import revision_bytes
from reverie.models import PageStatus
from tests.conftest import EpisodeFactory

SCOPE = "acme/coder"
DAY = datetime(2026, 11, 10, tzinfo=UTC)


def three_cycles(rv: Reverie, make_episode: EpisodeFactory) -> list[str]:
    """Cycle 1 creates the deploy page, 2 the search page, 3 revises the search page.

    The search episodes are a different problem (situation and error), so a page of their own.
    """
    search = {
        "category": "search",
        "tools": ["web_search"],
        "situation": "searching the web for the release notes",
        "action": "web_search 'release notes'",
        "error": "HTTP Error 429: Too Many Requests",
    }
    batches = [
        [make_episode() for _ in range(3)],
        [make_episode(**search) for _ in range(3)],
        [make_episode(**search) for _ in range(2)],
    ]
    ids = []
    for i, batch in enumerate(batches):
        rv.ingest(batch)
        ids.append(rv.dream(SCOPE, now=DAY + timedelta(days=i)).cycle_id)
    return ids


def test_every_revision_keeps_its_exact_bytes_and_sha256(
    rv: Reverie, make_episode: EpisodeFactory
) -> None:
    three_cycles(rv, make_episode)
    for page in rv.pages(SCOPE, None):
        for rev in rv.revisions(page.id):
            digest = hashlib.sha256(revision_bytes(rev)).hexdigest()
            assert rev.hash == f"sha256:{digest}"
    report = rv.verify(SCOPE)
    assert report.ok and report.pages == 2 and report.revisions == 3


def test_verify_names_a_tampered_revision(tmp_path: Path, make_episode: EpisodeFactory) -> None:
    with Reverie.open(tmp_path / "b.db") as rv:
        three_cycles(rv, make_episode)
        page = rv.pages(SCOPE)[0]
    with sqlite3.connect(tmp_path / "b.db") as db:
        db.execute(
            "UPDATE revisions SET title = 'edited behind our back' WHERE page_id = ?", (page.id,)
        )
    with Reverie.open(tmp_path / "b.db") as rv:
        report = rv.verify()
    assert not report.ok and page.id in report.problems[0]


def test_restore_is_a_new_revision_and_is_undoable(
    rv: Reverie, make_episode: EpisodeFactory
) -> None:
    three_cycles(rv, make_episode)
    page = next(p for p in rv.pages(SCOPE) if p.revision.number == 2)
    first = rv.revisions(page.id)[0]
    cycle = rv.restore(page.id, 1, now=DAY + timedelta(days=5))
    restored = rv.page(page.id)
    assert restored.revision.number == 3
    # revision 1's content, chosen by a person: every claim, the title and the kind pinned
    assert [(c.text, c.episode_ids) for c in restored.revision.claims] == [
        (c.text, c.episode_ids) for c in first.claims
    ]
    assert all(c.pinned for c in restored.revision.claims)
    assert (restored.title, restored.kind, restored.revision.pins) == (
        first.title,
        first.kind,
        ("kind", "title"),
    )
    assert restored.revision.author == "restore" and restored.revision.cycle_id == cycle.id
    rv.undo(cycle.id, now=DAY + timedelta(days=6))
    assert rv.page(page.id).revision.hash == page.revision.hash
    assert [r.number for r in rv.revisions(page.id)] == [1, 2, 3, 4]  # nothing rewritten


def test_undo_of_an_old_cycle_works_when_later_cycles_touched_other_pages(
    rv: Reverie, make_episode: EpisodeFactory
) -> None:
    first, _second, _third = three_cycles(rv, make_episode)
    report = rv.undo(first, now=DAY + timedelta(days=5))
    assert report.episodes_released == 3
    statuses = {p.topic_key.split("|")[0]: p.status for p in rv.pages(SCOPE, None)}
    assert statuses == {"deploy": PageStatus.RETIRED, "search": PageStatus.ACTIVE}
    assert rv.dream(SCOPE, now=DAY + timedelta(days=6)).collected == 3


def test_undo_refuses_with_the_later_cycle_and_page_named(
    rv: Reverie, make_episode: EpisodeFactory
) -> None:
    _first, second, third = three_cycles(rv, make_episode)
    search = next(p for p in rv.pages(SCOPE) if p.topic_key.startswith("search|"))
    with pytest.raises(UndoRefused) as refused:
        rv.undo(second)
    assert third in str(refused.value) and search.id in str(refused.value)
    assert f"undo {third} first" in str(refused.value)
    rv.undo(third)
    rv.undo(second)  # now it can go
    assert rv.page(search.id).status is PageStatus.RETIRED


def test_restore_blocks_undo_of_an_earlier_cycle_on_the_same_page(
    rv: Reverie, make_episode: EpisodeFactory
) -> None:
    _first, _second, third = three_cycles(rv, make_episode)
    search = next(p for p in rv.pages(SCOPE) if p.topic_key.startswith("search|"))
    restore = rv.restore(search.id, 1, now=DAY + timedelta(days=5))
    with pytest.raises(UndoRefused, match=restore.id):
        rv.undo(third)


def test_the_journal_tells_what_happened_and_why(rv: Reverie, make_episode: EpisodeFactory) -> None:
    first, _second, third = three_cycles(rv, make_episode)
    rv.undo(third, now=DAY + timedelta(days=5))
    entries = rv.journal(SCOPE)
    assert [e.cycle_id for e in entries] == [first, _second, third, third]
    assert entries[0].text.startswith("2026-11-10 00:00 UTC · cycle " + first)
    deploy = next(p for p in rv.pages(SCOPE) if p.topic_key.startswith("deploy|"))
    assert f'- created "{deploy.title}" ({deploy.id}, rev 1): 3 episodes' in entries[0].text
    assert "- revised" in entries[2].text
    assert entries[3].text.splitlines()[0].endswith(f"undo of cycle {third} · {SCOPE}")
    assert "restored" in entries[3].text and "2 episode(s) eligible again" in entries[3].text


def test_cli_history_restore_page_revision_and_journal(
    tmp_path: Path, make_episode: EpisodeFactory
) -> None:
    db = tmp_path / "b.db"
    with Reverie.open(db) as rv:
        three_cycles(rv, make_episode)
        page = next(p for p in rv.pages(SCOPE) if p.revision.number == 2)
    run = CliRunner()
    history = run.invoke(app, ["--db", str(db), "history", page.id, "--json"])
    assert history.exit_code == 0 and len(json.loads(history.stdout)) == 2
    shown = run.invoke(app, ["--db", str(db), "page", page.id, "--revision", "1", "--json"])
    assert json.loads(shown.stdout)["revision"]["number"] == 1
    restored = run.invoke(app, ["--db", str(db), "restore", page.id, "--revision", "1"])
    assert (
        restored.exit_code == 0 and "as revision 3; undo with: reverie undo cy_" in restored.stdout
    )
    journal = run.invoke(app, ["--db", str(db), "journal", "-s", SCOPE])
    assert journal.exit_code == 0 and f"restore of {page.id} to revision 1" in journal.stdout
    verify = run.invoke(app, ["--db", str(db), "verify"])
    assert verify.exit_code == 0 and "verified 4 revisions of 2 pages: ok" in verify.stdout
    again = run.invoke(app, ["--db", str(db), "restore", page.id, "--revision", "3"])
    assert again.exit_code == 2 and "already has the content" in again.output
