"""The Markdown mirror — export, a person's edits, import, conflicts."""

from __future__ import annotations

import json
import os
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reverie import Reverie
from reverie.cli.app import app
from reverie.errors import InvalidInput
from reverie.memory.frontmatter import FrontMatterError, split
from reverie.memory.mirror import KEYS, slugs
from reverie.models import PageStatus
from tests.conftest import EpisodeFactory

SCOPE = "acme/coder"
DAY = datetime(2026, 11, 10, tzinfo=UTC)


def files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


@pytest.fixture
def brain(rv: Reverie, make_episode: EpisodeFactory) -> Reverie:
    search = {  # another problem (situation and error): a page of its own
        "category": "search",
        "tools": ["web_search"],
        "situation": "searching the web for the release notes",
        "action": "web_search 'release notes'",
        "error": "HTTP Error 429: Too Many Requests",
    }
    rv.ingest([make_episode() for _ in range(3)] + [make_episode(**search) for _ in range(3)])
    rv.dream(SCOPE, now=DAY)
    return rv


def page_file(folder: Path, page_id: str) -> Path:
    for path in (folder / "memories").glob("*.md"):
        if f'id: "{page_id}"' in path.read_text(encoding="utf-8"):
            return path
    raise AssertionError(page_id)


def test_export_import_export_is_byte_identical(brain: Reverie, tmp_path: Path) -> None:
    out = tmp_path / "mirror"
    first = brain.export_markdown(SCOPE, out, journal=True)
    assert len(first.written) == 4  # two pages, MEMORY.md, journal.md
    before = files(out)
    report = brain.import_markdown(SCOPE, out, now=DAY + timedelta(days=1))
    assert report.revised == [] and report.unchanged == 2 and not report.conflicts
    again = brain.export_markdown(SCOPE, out, journal=True)
    assert again.written == [] and files(out) == before
    assert not [p for p in out.rglob(".*") if p.is_file()]  # no temp files left behind


def test_page_file_has_front_matter_and_body(brain: Reverie, tmp_path: Path) -> None:
    brain.export_markdown(SCOPE, tmp_path)
    page = brain.pages(SCOPE)[0]
    text = page_file(tmp_path, page.id).read_text(encoding="utf-8")
    meta, body = split(text, KEYS)
    assert meta["id"] == page.id and meta["kind"] == str(page.kind)
    assert meta["hash"] == page.revision.hash and meta["revision"] == 1
    assert meta["sources"] == page.citations and meta["valid_until"] is None
    assert body == f"# {page.title}\n\n{page.body}\n"


def test_index_respects_the_line_limit(
    rv: Reverie, make_episode: EpisodeFactory, tmp_path: Path
) -> None:
    problems = [  # twelve problems, each its own situation and error: twelve pages
        ("rotating the vault database password", "PermissionDenied: vault token expired"),
        ("compiling the rust parser crate", "LinkerError: undefined symbol yyparse"),
        ("resizing product photos for the shop", "PIL.UnidentifiedImageError: cannot identify"),
        ("sending the weekly newsletter to subscribers", "SMTPAuthenticationError: 535"),
        ("importing the quarterly invoices spreadsheet", "UnicodeDecodeError: byte 0xff"),
        ("renewing the tls certificate for the gateway", "ACMEError: dns challenge failed"),
        ("training the churn model on last month", "CUDAOutOfMemory: tried to allocate"),
        ("syncing calendar events from outlook", "HTTP Error 401: Unauthorized"),
        ("transcoding the webinar recording to mp4", "FFmpegError: unknown encoder libx265"),
        ("backing up the wiki attachments to s3", "NoSuchBucket: bucket does not exist"),
        ("translating the onboarding guide into german", "QuotaExceeded: characters per day"),
        ("scraping competitor prices from the catalogue", "CaptchaDetected: blocked by site"),
    ]
    rv.ingest(
        [
            make_episode(category=f"task{i}", situation=s, error=e, action=f"run job {i}",
                         importance=8)
            for i, (s, e) in enumerate(problems)
        ]
    )  # fmt: skip
    rv.dream(SCOPE, now=DAY)
    report = rv.export_markdown(SCOPE, tmp_path, line_limit=6)
    lines = (tmp_path / "MEMORY.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 6 and report.index_lines == 6 and report.overflow == 9
    assert lines[-1] == "- … and 9 more active pages in memories/"
    assert lines[2].startswith("- [") and "](memories/" in lines[2]


def test_a_persons_edit_becomes_a_human_revision_with_citations(
    brain: Reverie, tmp_path: Path
) -> None:
    brain.export_markdown(SCOPE, tmp_path)
    page = next(p for p in brain.pages(SCOPE) if p.topic_key.startswith("deploy|"))
    path = page_file(tmp_path, page.id)
    text = path.read_text(encoding="utf-8")
    kept = page.revision.claims[0]
    edited = text.replace(kept.text, "Failed three times: always with a timeout")
    edited = edited.replace(f"# {page.title}\n", "# Deploys to staging\n")
    edited += "- Raise the rollout timeout to 10m before retrying.\n"
    path.write_text(edited, encoding="utf-8")
    report = brain.import_markdown(SCOPE, tmp_path, now=DAY + timedelta(days=1))
    assert report.revised == [page.id] and report.cycle_id
    new = brain.page(page.id)
    assert new.revision.author == "human" and new.revision.number == 2
    assert new.title == "Deploys to staging"
    assert new.revision.claims[0].episode_ids == kept.episode_ids  # the brackets kept the citation
    added = new.revision.claims[-1]
    assert added.text == "Raise the rollout timeout to 10m before retrying."
    (human,) = added.episode_ids
    lineage = brain.why(page.id)  # why still reaches raw evidence for every claim
    assert human in {e.id for e in lineage.episodes}
    assert brain.store.episode(human, tenant="acme").consolidated_in == report.cycle_id
    assert brain.verify(SCOPE).ok
    # the imported file was rewritten in canonical form: a second import changes nothing
    assert brain.import_markdown(SCOPE, tmp_path, now=DAY + timedelta(days=2)).revised == []
    # and the import is undoable like a cycle
    brain.undo(report.cycle_id, now=DAY + timedelta(days=3))
    assert brain.page(page.id).revision.claims == page.revision.claims


def test_edit_by_a_person_and_a_cycle_is_a_conflict(
    brain: Reverie, make_episode: EpisodeFactory, tmp_path: Path
) -> None:
    brain.export_markdown(SCOPE, tmp_path)
    page = next(p for p in brain.pages(SCOPE) if p.topic_key.startswith("deploy|"))
    path = page_file(tmp_path, page.id)
    path.write_text(path.read_text(encoding="utf-8") + "- a person's line\n", encoding="utf-8")
    brain.ingest([make_episode() for _ in range(2)])
    brain.dream(SCOPE, now=DAY + timedelta(days=1))  # the cycle revises the same page
    edited = path.read_bytes()
    report = brain.import_markdown(SCOPE, tmp_path, now=DAY + timedelta(days=2))
    assert report.revised == [] and len(report.conflicts) == 1 and page.id in report.conflicts[0]
    assert brain.page(page.id).revision.author == "cycle"
    export = brain.export_markdown(SCOPE, tmp_path)  # never overwrites the pending edit
    assert path.read_bytes() == edited and len(export.skipped) == 1


def test_unknown_citations_are_refused(brain: Reverie, tmp_path: Path) -> None:
    brain.export_markdown(SCOPE, tmp_path)
    page = brain.pages(SCOPE)[0]
    path = page_file(tmp_path, page.id)
    path.write_text(path.read_text(encoding="utf-8") + "- invented [ep-nope]\n", encoding="utf-8")
    report = brain.import_markdown(SCOPE, tmp_path, now=DAY + timedelta(days=1))
    assert report.revised == [] and "ep-nope" in report.problems[0]


def test_slugs_are_safe_and_unique(brain: Reverie) -> None:
    page = brain.pages(SCOPE)[0]
    evil = [
        page.model_copy(update={"id": f"pg_{i:020x}", "topic_key": "../../etc/passwd|x"})
        for i in range(3)
    ]
    names = slugs(evil)
    assert len(set(names.values())) == 3
    assert all(set(n) <= set("abcdefghijklmnopqrstuvwxyz0123456789-") for n in names.values())
    assert all(n.startswith("etc-passwd-x-") for n in names.values())


def test_front_matter_parser_is_strict() -> None:
    with pytest.raises(FrontMatterError, match="unknown"):
        split('---\nid: "x"\nevil: 1\n---\n', KEYS)
    with pytest.raises(FrontMatterError, match="twice"):
        split('---\nid: "x"\nid: "y"\n---\n', KEYS)
    with pytest.raises(FrontMatterError, match="not valid"):
        split("---\nid: !!python/object x\n---\n", KEYS)
    with pytest.raises(FrontMatterError, match="not closed"):
        split('---\nid: "x"\n', KEYS)


def test_cli_export_and_import(brain: Reverie, tmp_path: Path) -> None:
    db = brain.store.url.removeprefix("sqlite:///")
    run = CliRunner()
    out = tmp_path / "m"
    first = run.invoke(app, ["--db", db, "export", "markdown", str(out), "-s", SCOPE, "--json"])
    assert first.exit_code == 0 and len(json.loads(first.stdout)["written"]) == 3
    done = run.invoke(app, ["--db", db, "import", "markdown", str(out), "-s", SCOPE])
    assert done.exit_code == 0 and "imported 0 edited pages, 2 unchanged" in done.stdout
    retired = next(iter((out / "memories").glob("*.md")))
    retired.write_text(retired.read_text(encoding="utf-8").replace('"active"', '"retired"'))
    done = run.invoke(app, ["--db", db, "import", "markdown", str(out), "-s", SCOPE])
    assert done.exit_code == 0 and "imported 1 edited pages" in done.stdout
    assert len([p for p in brain.pages(SCOPE, None) if p.status is PageStatus.RETIRED]) == 1


def test_export_removes_temporaries_a_killed_writer_left_and_nothing_else(
    brain: Reverie, tmp_path: Path
) -> None:
    out = tmp_path / "mirror"
    brain.export_markdown(SCOPE, out)
    memories = out / "memories"
    hour_ago = time.time() - 3601
    stale = [memories / ".deploy.md.k1ll3d.tmp", out / ".MEMORY.md.x9y8z7.tmp"]
    fresh = memories / ".search.md.wr1t1ng.tmp"  # a writer still at work: never touched
    other = memories / ".notes.txt"  # not ours
    for path in [*stale, fresh, other]:
        path.write_bytes(b"half a page")
    for path in [*stale, other]:
        os.utime(path, (hour_ago, hour_ago))
    target = tmp_path / "elsewhere.md"
    target.write_text("keep me")
    link = memories / ".link.md.abc.tmp"
    link.symlink_to(target)
    os.utime(link, (hour_ago, hour_ago), follow_symlinks=False)
    report = brain.export_markdown(SCOPE, out)
    assert sorted(report.removed_temporaries) == sorted(str(p) for p in stale)
    assert not any(p.exists() for p in stale)
    assert fresh.exists() and other.exists() and link.is_symlink() and target.exists()


def test_a_memories_folder_that_is_a_link_is_refused_both_ways(
    brain: Reverie, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    out = tmp_path / "mirror"
    out.mkdir()
    (out / "memories").symlink_to(outside)
    with pytest.raises(InvalidInput, match="symbolic link"):
        brain.export_markdown(SCOPE, out)
    with pytest.raises(InvalidInput, match="symbolic link"):
        brain.import_markdown(SCOPE, out, now=DAY + timedelta(days=1))
    assert list(outside.iterdir()) == [] and not (out / "MEMORY.md").exists()


def test_a_front_matter_rewritten_in_plain_yaml_is_imported(brain: Reverie, tmp_path: Path) -> None:
    brain.export_markdown(SCOPE, tmp_path)
    page = next(p for p in brain.pages(SCOPE) if p.title.startswith("deploy"))
    path = page_file(tmp_path, page.id)
    meta, body = split(path.read_text(encoding="utf-8"), KEYS)
    lines = [f"id: {meta['id']}", "kind: procedure", "status: active", "confidence: 0.8"]
    lines += ["valid_from: " + str(meta["valid_from"]), "valid_until: null"]
    lines += ["superseded_by: ~", f"sources: [{', '.join(meta['sources'])}]"]
    lines += [f"revision: {meta['revision']}", f"hash: {meta['hash']}"]
    path.write_text("---\n" + "\n".join(lines) + "\n---\n" + body, encoding="utf-8")
    report = brain.import_markdown(SCOPE, tmp_path, now=DAY + timedelta(days=1))
    assert report.revised == [page.id] and not report.problems
    rev = brain.page(page.id).revision
    assert page.kind != "procedure"
    assert (rev.kind, rev.confidence, rev.author) == ("procedure", 0.8, "human")
    assert rev.pins == ("kind",) and not any(c.pinned for c in rev.claims)  # only the kind moved
