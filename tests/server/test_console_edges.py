"""The console's rough edges, each measured in a real browser (Debian's Chromium, Playwright):
headers that never break inside a word, empty charts that say why, Enter to recall, the budget
bar's legend, the org brain labelled, pages searched and sorted, a favicon, plans applied and
rejected in bulk, recall hits over time, and a cycle's counts the same as ``reverie dream
--json``. Skipped, with the reason, where /usr/bin/chromium is missing (``scripts/chromium``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from reverie.cli.demo import load_sample
from tests.server.conftest import CHROMIUM, Live, as_scope
from tests.server.test_console import flash_says, fresh_scope, go, log_in

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium (scripts/chromium)"
)

# Every word of every visible header cell, and the line boxes it lies on: a word whose pieces
# sit on more than one line was broken inside itself ("confidenc" / "e").
BROKEN_HEADER_WORDS = """() => {
  const broken = [];
  for (const th of document.querySelectorAll("th")) {
    if (!th.getClientRects().length) continue;
    const walker = document.createTreeWalker(th, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const word of node.data.matchAll(/\\S+/g)) {
        const range = document.createRange();
        range.setStart(node, word.index);
        range.setEnd(node, word.index + word[0].length);
        const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
        if (lines.size > 1) broken.push(word[0]);
      }
    }
  }
  return broken;
}"""


def test_no_column_header_breaks_inside_a_word_at_1280(live: Live, page: Any) -> None:
    page_id = max(live.rv.pages("acme/coder"), key=lambda p: len(p.citations)).id
    cycle = live.rv.cycles("acme/coder")[0].id
    log_in(page, live, "acme-read")
    broken: dict[str, list[str]] = {}
    for hash_, ready in (
        ("#/journal", "#cycles-table th"),
        ("#/pages", "#pages-table th"),
        (f"#/page/{page_id}", "#provenance-graph svg"),
        (f"#/cycle/{cycle}", "#cycle-changes th"),
        ("#/episodes?q=deploy", "#episodes-table th"),
        ("#/recall", "#recall-form"),
    ):
        go(page, hash_, ready)
        if hash_ == "#/recall":
            page.fill("#recall-query", "deploy staging timeout")
            page.click("#recall-run")
            page.wait_for_selector("#trace-table th")
        assert page.locator("th").count() > 0, hash_
        broken[hash_] = page.evaluate(BROKEN_HEADER_WORDS)
    assert {k: v for k, v in broken.items() if v} == {}


def test_the_console_serves_a_favicon(live: Live, page: Any) -> None:
    failed: list[str] = []
    page.on("response", lambda r: failed.append(r.url) if r.status >= 400 else None)
    log_in(page, live, "acme-read")
    icon = page.evaluate("document.querySelector('link[rel~=icon]').href")
    answer = page.evaluate(
        "async (u) => { const r = await fetch(u);"
        " return [r.status, r.headers.get('content-type')]; }",
        icon,
    )
    assert answer[0] == 200 and answer[1].startswith("image/")
    with live.client() as client:  # what a browser asks for on its own, at the root
        root = client.get("/favicon.ico", follow_redirects=True)
    assert root.status_code == 200 and root.headers["content-type"].startswith("image/")
    assert failed == []


def test_enter_submits_a_recall_and_shift_enter_adds_a_line(live: Live, page: Any) -> None:
    log_in(page, live, "acme-read")
    go(page, "#/recall", "#recall-form")
    page.focus("#recall-query")
    page.keyboard.type("deploy staging")
    page.keyboard.press("Shift+Enter")
    page.keyboard.type("timeout")
    assert page.locator("#recall-query").input_value() == "deploy staging\ntimeout"
    assert page.locator("#trace-table").count() == 0  # a new line, not a recall
    page.keyboard.press("Enter")
    page.wait_for_selector("#trace-table")
    assert page.locator("#recall-query").input_value() == "deploy staging\ntimeout"


def test_the_budget_bar_has_a_legend(live: Live, page: Any) -> None:
    log_in(page, live, "acme-read")
    go(page, "#/recall", "#recall-form")
    page.fill("#recall-query", "deploy staging timeout")
    page.fill("#recall-budget", "300")
    page.click("#recall-run")
    page.wait_for_selector("#budget-bar svg rect.unit")
    parts = page.locator("#budget-legend [data-part]")
    shown = {
        parts.nth(i).get_attribute("data-part"): int(parts.nth(i).get_attribute("data-tokens"))
        for i in range(parts.count())
    }
    assert set(shown) == {"header", "units", "free"}
    assert sum(shown.values()) == 300
    legend = page.locator("#budget-legend").inner_text()
    assert "header" in legend and "free" in legend and "tokens" in legend
    swatch = page.evaluate(
        "p => getComputedStyle(document.querySelector(`#budget-legend [data-part=${p}] i`))"
        ".backgroundColor",
        "header",
    )
    bar = page.evaluate("getComputedStyle(document.querySelector('#budget-bar rect.header')).fill")
    assert swatch == bar


def test_the_org_brain_is_labelled_as_internal(live: Live, page: Any) -> None:
    org = next(s.key for s in live.rv.scopes() if s.is_org)
    log_in(page, live, "acme-read")
    options = page.locator("#scope-select option")
    labels = {
        options.nth(i).get_attribute("value"): options.nth(i).inner_text()
        for i in range(options.count())
    }
    assert "org brain" in labels[org] and "internal" in labels[org]
    assert all(labels[k] == k for k in labels if k != org)
    page.select_option("#scope-select", org)
    go(page, "#/pages", "#pages-table")
    assert "org brain" in page.locator("#view h2").first.inner_text()


def test_empty_charts_say_why_instead_of_drawing_empty_axes(live: Live, page: Any) -> None:
    # acme/coder dreamt with the extractive distiller: no model call, no provider token
    assert all(
        c.report.model_calls == c.report.cache_hits == 0 for c in live.rv.cycles("acme/coder")
    )
    scope = "acme/console-empty"
    live.rv.ingest(as_scope(load_sample()[:5], scope, "ce0"))  # never dreamt, never recalled
    log_in(page, live, "acme-read")
    page.wait_for_selector("#chart-growth svg")
    for chart, why in (("calls", "no model is configured"), ("cost", "no model was called")):
        assert page.locator(f"#chart-{chart} svg").count() == 0, chart
        assert why in page.locator(f"#chart-{chart} .chart-empty").inner_text(), chart
    for drawn in ("growth", "compression"):
        assert page.locator(f"#chart-{drawn} svg").count() == 1, drawn
        assert page.locator(f"#chart-{drawn} .chart-empty").count() == 0, drawn

    page.select_option("#scope-select", scope)
    page.wait_for_function(
        "s => document.querySelector('#view h2').textContent.endsWith(s)", arg=scope
    )
    assert page.locator("#view figure svg").count() == 0
    assert "No cycles yet" in page.locator("#chart-growth").inner_text()
    assert "No recalls yet" in page.locator("#chart-recalls").inner_text()


def bars(page: Any, series: str) -> list[str]:
    titles: list[str] = page.locator(
        f"#chart-recalls svg rect.bar[data-series={series}]"
    ).evaluate_all("rs => rs.map(r => r.querySelector('title').textContent)")
    return titles


def test_recall_hits_over_time_show_whether_memory_is_used(live: Live, page: Any) -> None:
    scope = "acme/console-recalls"
    fresh_scope(live, scope, "crh")
    log_in(page, live, "acme-read", scope)
    page.wait_for_selector("#chart-recalls .chart-empty")
    with live.client(live.tokens["acme-read"]) as client:
        for query in ("deploy staging timeout", "kubectl rollout", "staging deploy", "zyx qwv"):
            client.post("/v1/recall", json={"query": query, "scope": scope, "budget_tokens": 300})
        explained = {"query": "deploy staging", "scope": scope, "budget_tokens": 300}
        client.post("/v1/recall", json=explained, params={"explain": "true"})  # not counted
        days = client.get("/v1/journal", params={"scope": scope}).json()["recalls"]
    [day] = days
    assert (day["recalls"], day["hits"], day["misses"]) == (4, 3, 1)
    stored = live.rv.recall_stats(scope)
    assert sum(t.recalls for t in stored) == 4 and sum(t.hits for t in stored) == 3

    page.reload()
    page.wait_for_selector("#chart-recalls svg rect.bar")
    [hits], [misses] = bars(page, "hits"), bars(page, "misses")
    assert hits.endswith("found memory (a unit packed) 3") and misses.endswith("found nothing 1")
    assert page.locator("#chart-recalls svg text.tick").count() >= 3
    assert "found memory" in page.locator("#chart-recalls .legend").inner_text()


def test_pages_can_be_searched_and_sorted(live: Live, page: Any) -> None:
    pages = live.rv.pages("acme/coder")
    word = "kubectl"

    def holds(p: Any) -> bool:
        texts = [p.revision.title, str(p.revision.kind), *(c.text for c in p.revision.claims)]
        return any(word in t.lower() for t in texts)

    matching = [p for p in pages if holds(p)]
    assert 0 < len(matching) < len(pages)
    log_in(page, live, "acme-read")
    go(page, "#/pages", "#pages-table")
    page.fill("#pages-q", word)
    rows = page.locator("#pages-table tr.page-row")
    page.wait_for_function(f"document.querySelectorAll('tr.page-row').length === {len(matching)}")
    shown = [rows.nth(i).get_attribute("data-page") for i in range(rows.count())]
    assert set(shown) == {p.id for p in matching}
    assert page.locator("#pages-count").inner_text().startswith(f"{len(matching)} of {len(pages)}")

    def order() -> list[str | None]:
        rows = page.locator("#pages-table tr.page-row")
        return [rows.nth(i).get_attribute("data-page") for i in range(rows.count())]

    confidence = {p.id: p.revision.confidence for p in matching}
    page.click("th[data-sort=confidence] button")
    assert [confidence[i or ""] for i in order()] == sorted(confidence.values())
    assert page.get_attribute("th[data-sort=confidence]", "aria-sort") == "ascending"
    page.click("th[data-sort=confidence] button")
    assert [confidence[i or ""] for i in order()] == sorted(confidence.values(), reverse=True)
    assert page.get_attribute("th[data-sort=confidence]", "aria-sort") == "descending"
    page.click("th[data-sort=title] button")
    titles = [live.rv.page(i or "").revision.title.lower() for i in order()]
    assert titles == sorted(titles)

    page.reload()  # the search and the order live in the address
    page.wait_for_selector("#pages-table tr.page-row")
    assert page.locator("#pages-q").input_value() == word
    assert page.get_attribute("th[data-sort=title]", "aria-sort") == "ascending"
    assert [live.rv.page(i or "").revision.title.lower() for i in order()] == titles


def held(live: Live, scope: str, prefix: str) -> str:
    """A scope whose second dream waits for review: the id of its pending plan."""
    fresh_scope(live, scope, prefix, split=40)
    live.rv.dream(scope, review=True)
    [plan] = live.rv.plans(scope)
    return plan.id


def tick(page: Any, plan_ids: list[str]) -> None:
    for plan_id in plan_ids:
        page.check(f"article.plan[data-plan='{plan_id}'] input.plan-select")


def test_plans_are_applied_and_rejected_in_bulk_after_a_confirmation(live: Live, page: Any) -> None:
    scopes = [f"acme/console-bulk-{n}" for n in range(3)]
    plans = [held(live, scope, f"cb{n}") for n, scope in enumerate(scopes)]
    log_in(page, live, "acme-write", scopes[0])
    go(page, "#/inbox", "#bulk-actions")
    assert all(page.locator(f"article.plan[data-plan='{p}']").count() == 1 for p in plans)

    tick(page, plans[:2])
    page.click("#bulk-apply")
    assert plans[0] in page.locator("#confirm-text").inner_text()
    page.click("#confirm-cancel")  # nothing without the confirmation
    assert [p.status for p in (live.rv.plans(s, status=None)[0] for s in scopes)] == ["pending"] * 3

    page.click("#bulk-apply")
    page.click("#confirm-ok")
    flash_says(page, "Applied 2 of 2 plans")
    page.wait_for_function("document.querySelectorAll('article.plan').length === 1")  # left
    for plan_id, scope in zip(plans[:2], scopes, strict=False):
        [applied] = live.rv.plans(scope, status="applied")
        assert applied.id == plan_id
        shown = page.locator(f"#bulk-result li[data-plan='{plan_id}']").inner_text()
        assert f"cycle {applied.cycle_id}" in shown
        assert live.rv.cycle(applied.cycle_id).report.created == int(
            shown.split("applied: ")[1].split(" created")[0]
        )

    tick(page, plans[2:])
    page.fill("#bulk-reason", "not this week")
    page.click("#bulk-reject")
    page.click("#confirm-ok")
    flash_says(page, "Rejected 1 of 1 plans")
    [rejected] = live.rv.plans(scopes[2], status="rejected")
    assert rejected.id == plans[2] and rejected.reason == "not this week"
    assert live.rv.pages(scopes[2]) and live.rv.plans(scopes[2]) == []
    page.wait_for_selector("#plans-pending p.muted")  # nothing waits any more


FACTS = {  # the cycle view's field: the report's key, as `reverie dream --json` prints it
    "scanned": "scanned",
    "collected": "collected",
    "deferred": "deferred",
    "groups": "groups",
    "created": "created",
    "revised": "revised",
    "merged": "merged",
    "episodes consolidated": "episodes_marked",
}


def test_a_cycle_shows_the_counts_reverie_dream_json_printed(live: Live, page: Any) -> None:
    scope = "acme/console-counts"
    live.rv.ingest(as_scope(load_sample()[:30], scope, "cc"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    db = str(Path(live.rv.store.path))  # type: ignore[attr-defined]
    out = subprocess.run(
        [sys.executable, "-m", "reverie", "--db", db, "dream", "--json", "--scope", scope],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    ).stdout
    [printed] = json.loads(out)
    log_in(page, live, "acme-read", scope)
    row = page.locator(f"tr.cycle-row[data-cycle='{printed['cycle_id']}']")
    assert row.locator("td[data-label=scanned]").inner_text() == str(printed["scanned"])
    consolidated = row.locator("td[data-label=consolidated]").inner_text()
    assert consolidated == str(printed["episodes_marked"])
    go(page, f"#/cycle/{printed['cycle_id']}", "#cycle-title")
    shown = {f: page.locator(f"dd[data-field='{f}']").inner_text() for f in FACTS}
    assert shown == {f: str(printed[k]) for f, k in FACTS.items()}
    message = page.locator("#cycle-title ~ p").nth(1).inner_text()
    assert message == printed["message"]
    assert f"{printed['collected']} collected" in message
