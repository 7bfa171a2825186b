"""Hostile files in the Markdown mirror: import never crashes and never writes outside the mirror.

A person (or a program) can put anything into ``memories/``: huge files, binary files, names that
look like path traversal, broken front matter, pages of another brain, links to files elsewhere,
folders and pipes named ``*.md``. Import must report each bad file clearly and carry on with the
good ones; nothing outside the data directory changes, and the store only changes by the one real
edit.
"""

from __future__ import annotations

import hashlib
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, given, settings

from reverie import Reverie
from reverie.memory.mirror import FOLDER
from tests.conftest import EpisodeFactory

SCOPE = "acme/coder"
DAY = datetime(2026, 11, 10, tzinfo=UTC)


def tree(root: Path) -> dict[str, str]:
    """Every path under ``root`` with a digest of its bytes (links by their target)."""
    out: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        if path.is_symlink():
            out[str(path)] = "link:" + os.readlink(path)
        elif path.is_file():
            out[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


@pytest.fixture
def mirror(tmp_path: Path, make_episode: EpisodeFactory) -> tuple[Reverie, Path, Path]:
    rv = Reverie.open(tmp_path / "data" / "brain.db")
    rv.ingest([make_episode() for _ in range(3)])
    rv.ingest([make_episode(scope="globex/bot") for _ in range(3)])
    rv.dream(SCOPE, now=DAY)
    rv.dream("globex/bot", now=DAY)
    out = tmp_path / "data" / "mirror"
    rv.export_markdown(SCOPE, out)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "target.md").write_text("outside, must stay as it is\n", encoding="utf-8")
    return rv, out, outside


def _page(out: Path) -> Path:
    return sorted((out / FOLDER).glob("*.md"))[0]


def _hostile(rv: Reverie, out: Path, outside: Path) -> list[str]:
    """Write the hostile corpus into the mirror; the names that must be reported."""
    folder, good = out / FOLDER, _page(out).read_text(encoding="utf-8")
    foreign_dir = out.parent / "foreign"
    rv.export_markdown("globex/bot", foreign_dir)
    foreign = _page(foreign_dir).read_text(encoding="utf-8").replace("# ", "# edited ", 1)
    head, _, body = good.partition("\n# ")
    cases: dict[str, bytes] = {
        "huge.md": b'---\nid: "x"\n---\n# huge\n\n' + b"A" * (12 * 1024 * 1024),
        "binary.md": bytes(range(256)) * 64,
        "..%2F..%2Fescape.md": good.replace("# ", "# edited ", 1)
        .replace('id: "', 'id: "../../', 1)
        .encode(),
        "..\\..\\windows.md": b'---\nid: "../../../etc/passwd"\n---\n# t\n\n- claim\n',
        "no-front-matter.md": b"# just a title\n\n- a claim\n",
        "unclosed.md": b'---\nid: "p"\nkind: "lesson"\n# title\n',
        "repeated-key.md": (
            head.replace("---\n", '---\nkind: "fact"\n', 1) + "\n# " + body
        ).encode(),
        "not-json.md": head.replace('kind: "', "kind: {bad: ", 1).encode() + b"\n# t\n\n- c\n",
        "bad-date.md": (
            head.replace("valid_from: ", 'valid_from: "yesterday" #', 1) + "\n# x\n\n- y\n"
        ).encode(),
        "foreign-scope.md": foreign.encode(),
        "invented-citation.md": (head + "\n# " + body.replace("]", ", ep-invented]", 1)).encode(),
        "nul\x01name.md": b"\x00\x00\x00",
        "empty.md": b"",
        ("l" * 200) + ".md": b"---\n---\n",
    }
    for name, data in cases.items():
        (folder / name).write_bytes(data)
    (folder / "link-out.md").symlink_to(outside / "target.md")
    (folder / "link-zero.md").symlink_to("/dev/zero")
    (folder / "folder.md").mkdir()
    os.mkfifo(folder / "pipe.md")
    return [*cases, "link-out.md", "link-zero.md", "folder.md", "pipe.md"]


def test_hostile_corpus_is_reported_file_by_file_and_writes_nothing_outside(
    mirror: tuple[Reverie, Path, Path], tmp_path: Path
) -> None:
    rv, out, outside = mirror
    real = _page(out)
    real.write_text(
        real.read_text(encoding="utf-8") + "- a real edit by a person\n", encoding="utf-8"
    )
    names = _hostile(rv, out, outside)
    before_outside = tree(outside)
    pages_before = {p.id: p.revision.number for p in rv.pages(SCOPE, None)}
    report = rv.import_markdown(SCOPE, out, now=DAY + timedelta(days=1))
    text = "\n".join(report.problems + report.conflicts)
    unreported = [n for n in names if n not in text]
    assert unreported == [], text
    assert len(report.revised) == 1  # only the real edit
    revised = {p.id: p.revision.number for p in rv.pages(SCOPE, None)}
    assert {k for k in revised if revised[k] != pages_before.get(k)} == set(report.revised)
    assert tree(outside) == before_outside
    assert rv.pages("globex/bot")[0].revision.number == 1  # the foreign page is untouched
    rv.close()


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    cut=st.integers(min_value=0, max_value=2000),
    insert=st.binary(max_size=60)
    | st.text(max_size=60).map(lambda t: t.encode("utf-8", "surrogatepass")),
)
def test_mutated_page_files_never_crash_import(
    mirror: tuple[Reverie, Path, Path], cut: int, insert: bytes
) -> None:
    rv, out, outside = mirror
    page, before = _page(out), tree(outside)
    original = page.read_bytes()
    page.write_bytes(original[:cut] + insert + original[cut:])
    try:
        report = rv.import_markdown(SCOPE, out, now=DAY + timedelta(days=2))
        files = len(list((out / FOLDER).glob("*.md")))
        accounted = len(report.problems) + len(report.conflicts) + report.unchanged
        assert accounted + len(report.revised) == files, report  # one verdict per file
        assert tree(outside) == before
    finally:
        page.unlink()
        rv.export_markdown(SCOPE, out)  # a clean mirror for the next example
