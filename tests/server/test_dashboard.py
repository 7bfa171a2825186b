"""The dashboard end to end in a real browser: Debian's headless Chromium driven by Playwright.

Log in with a key, open the dream journal (chart and cycles), open a page, follow a citation to
its raw episode. Screenshots land in this test's pytest tmp dir, under ``screenshots/`` (the
path is printed; keep them with ``--basetemp``). Skipped, with the reason, where
/usr/bin/chromium is missing (``scripts/chromium`` installs it; ``scripts/test`` runs that).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.server.conftest import Live

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium (scripts/chromium)"
)


@pytest.fixture
def page(tmp_path: Path) -> Iterator[Any]:
    playwright_api = pytest.importorskip("playwright.sync_api")
    with playwright_api.sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"),  # a fresh --user-data-dir per test
            executable_path=str(CHROMIUM),
            headless=True,
            args=FLAGS,
            viewport={"width": 1280, "height": 900},
        )
        try:
            yield context.new_page()
        finally:
            context.close()


def test_journal_page_and_citation_in_chromium(live: Live, page: Any, tmp_path: Path) -> None:
    shots = tmp_path / "screenshots"
    shots.mkdir()
    page.set_default_timeout(10_000)
    page.goto(f"{live.url}/dashboard/")
    page.fill("#login-key", live.tokens["acme-read"])
    page.click("#login-button")

    page.wait_for_selector("#journal-chart svg polyline[data-series=compression]")
    rows = page.locator("tr.cycle-row")
    assert rows.count() == len(live.rv.cycles("acme/coder"))
    assert page.locator("#whoami").inner_text() == "key for acme (read)"
    page.screenshot(path=str(shots / "1-journal.png"), full_page=True)

    page.click("#nav-pages")
    page.wait_for_selector("a.page-link")
    first = page.locator("a.page-link").first
    title = first.inner_text()
    first.click()
    page.wait_for_selector("#page-title")
    assert page.locator("#page-title").inner_text() == title
    assert page.locator("#revisions details.revision").count() >= 1
    page.screenshot(path=str(shots / "2-page.png"), full_page=True)

    citation = page.locator("#page-body a.citation-link").first
    episode_id = citation.inner_text().strip("[]")
    citation.click()
    page.wait_for_selector("#episode-view")
    assert page.locator("dd[data-field=id]").inner_text() == episode_id
    situation = live.rv.episode(episode_id, tenant="acme").situation
    assert page.locator("dd[data-field=situation]").inner_text() == situation
    page.screenshot(path=str(shots / "3-episode.png"), full_page=True)

    page.click("#nav-stats")
    page.wait_for_selector("#stats-table")
    page.screenshot(path=str(shots / "4-stats.png"), full_page=True)
    print(f"dashboard screenshots: {shots}")
    assert sorted(p.name for p in shots.iterdir()) == [
        "1-journal.png",
        "2-page.png",
        "3-episode.png",
        "4-stats.png",
    ]


def test_a_bad_key_is_refused_in_the_browser(live: Live, page: Any) -> None:
    page.set_default_timeout(10_000)
    page.goto(f"{live.url}/dashboard/")
    page.fill("#login-key", "rvk_0000000000000000_" + "n" * 43)
    page.click("#login-button")
    page.wait_for_function("document.getElementById('login-error').textContent.length > 0")
    assert "not valid" in page.locator("#login-error").inner_text()
    assert page.locator("#nav").is_hidden()
