"""The console end to end in a real browser: Debian's headless Chromium driven by Playwright.

One server (the module's ``live``) and one browser for the whole module; each test opens a
fresh context. Every flow is driven through the page and its effect read back through the API
(or the facade): log in, apply and reject plans, recall with explain, undo a cycle, restore and
edit a page, search episodes, open a page's provenance graph, dream now, forget with its dry
run. Screenshots of each view at 1280×800 and at 400 px land in the test's pytest tmp dir under
``screenshots/`` (the path is printed; keep them with ``--basetemp``). Skipped, with the reason,
where /usr/bin/chromium is missing (``scripts/chromium`` installs it).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from reverie.cli.demo import load_sample
from tests.server.conftest import CHROMIUM, NARROW, WIDE, Live, as_scope

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium (scripts/chromium)"
)


def log_in(page: Any, live: Live, key: str, scope: str = "acme/coder") -> None:
    page.goto(f"{live.url}/dashboard/")
    page.fill("#login-key", live.tokens[key])
    page.click("#login-button")
    page.wait_for_selector("#cycles-table, #view p.muted")
    if page.locator("#scope-select").input_value() != scope:
        page.select_option("#scope-select", scope)


def go(page: Any, hash_: str, ready: str) -> None:
    page.evaluate("h => { window.location.hash = h; }", hash_)
    page.wait_for_selector(ready)


def flash_says(page: Any, pattern: str) -> str:
    page.wait_for_function(
        "p => new RegExp(p).test(document.getElementById('flash').textContent)", arg=pattern
    )
    text: str = page.locator("#flash").inner_text()
    return text


def fresh_scope(live: Live, scope: str, prefix: str, *, split: int | None = None) -> None:
    """The sample week in a scope of its own: dreamt once, or twice (before and after
    ``split``) so the second cycle revises pages the first created."""
    sample = as_scope(load_sample(), scope, prefix)
    if split is None:
        live.rv.ingest(sample)
        live.rv.dream(scope)
        return
    live.rv.ingest(sample[:split])
    live.rv.dream(scope)
    live.rv.ingest(sample[split:])


# -- log in and rights -------------------------------------------------------------------------


def test_log_in_and_the_key_s_rights_decide_what_the_console_offers(live: Live, page: Any) -> None:
    log_in(page, live, "acme-read")
    assert page.locator("#whoami").inner_text() == "key for acme (read)"
    assert page.locator("tr.cycle-row").count() == len(live.rv.cycles("acme/coder"))
    cycle = live.rv.cycles("acme/coder")[0]
    go(page, f"#/cycle/{cycle.id}", "#cycle-title")
    assert page.locator("#undo-cycle").count() == 0
    go(page, f"#/page/{live.rv.pages('acme/coder')[0].id}", "#page-title")
    assert page.locator("#edit-page, .restore-revision, #forget-page").count() == 0
    go(page, "#/actions", "#view h2")
    assert page.locator("#dream-panel, #forget-panel").count() == 0

    page.click("#logout")
    log_in(page, live, "acme-admin")
    go(page, "#/actions", "#forget-panel")
    assert page.locator("#dream-panel").count() == 1


def test_a_bad_key_is_refused_in_the_browser(live: Live, page: Any) -> None:
    page.goto(f"{live.url}/dashboard/")
    page.fill("#login-key", "rvk_0000000000000000_" + "n" * 43)
    page.click("#login-button")
    page.wait_for_function("document.getElementById('login-error').textContent.length > 0")
    assert "not valid" in page.locator("#login-error").inner_text()
    assert page.locator("#nav").is_hidden()


# -- review inbox ------------------------------------------------------------------------------


def test_apply_a_plan_and_see_the_page_change(live: Live, page: Any) -> None:
    scope = "acme/console-review"
    fresh_scope(live, scope, "cr", split=40)
    live.rv.dream(scope, review=True)
    [plan] = live.rv.plans(scope)
    revised = next(p for p in live.rv.plan(plan.id).pages if p.action == "revised")
    before = live.rv.page(revised.page_id)

    log_in(page, live, "acme-write", scope)
    go(page, "#/inbox", "article.plan")
    assert page.locator("#nav-inbox .count").inner_text() == "1"
    page.click("a.plan-link")
    page.wait_for_selector("#plan-pages pre.diff")
    shown = page.locator(f"section.plan-page[data-page='{revised.page_id}']")
    assert shown.locator("pre.diff .add").count() > 0
    assert shown.locator("ul.cited a.citation-link").count() == len(revised.episodes)
    page.click("#apply-plan")
    page.wait_for_selector("#page-title")
    flash_says(page, "Applied")

    assert live.rv.plans(scope, status="applied")[0].id == plan.id
    first = live.rv.cycle(plan.cycle_id).report.changes[0].page_id
    assert page.locator("#page-title").inner_text() == live.rv.page(first).title
    after = live.rv.page(revised.page_id)
    assert after.revision.number == before.revision.number + 1
    with live.client(live.tokens["acme-read"]) as client:
        assert client.get(f"/v1/pages/{revised.page_id}").json()["page"]["revision"]["number"] == (
            after.revision.number
        )


def test_reject_a_plan_with_a_reason_and_see_a_stale_one_as_stale(live: Live, page: Any) -> None:
    scope = "acme/console-reject"
    fresh_scope(live, scope, "cj", split=40)
    live.rv.dream(scope, review=True)
    [plan] = live.rv.plans(scope)
    log_in(page, live, "acme-write", scope)
    go(page, f"#/plan/{plan.id}", "#plan-actions")
    page.fill("#reject-reason", "not before the release")
    page.click("#reject-plan")
    page.wait_for_selector("#plans-pending")
    rejected = live.rv.plans(scope, status="rejected")[0]
    assert rejected.id == plan.id and rejected.reason == "not before the release"

    live.rv.dream(scope, review=True)
    [held] = live.rv.plans(scope)
    live.rv.undo(live.rv.cycles(scope)[0].id)  # the checkpoint moves back under the plan
    go(page, f"#/plan/{held.id}", "#plan-stale")
    assert page.locator("#apply-plan").count() == 0


# -- recall ------------------------------------------------------------------------------------


def test_run_a_recall_with_explain(live: Live, page: Any) -> None:
    log_in(page, live, "acme-read")
    go(page, "#/recall", "#recall-form")
    page.fill("#recall-query", "deploy staging timeout")
    page.fill("#recall-budget", "250")
    page.click("#recall-run")
    page.wait_for_selector("#trace-table")
    ask = {"query": "deploy staging timeout", "scope": "acme/coder", "budget_tokens": 250}
    with live.client(live.tokens["acme-read"]) as client:
        answer = client.post("/v1/recall", json=ask, params={"explain": "true"}).json()
    assert page.locator("#recall-section").inner_text() == answer["text"]
    packed = page.locator("tr.trace-unit.packed")
    assert packed.count() == len(answer["items"]) > 0
    assert page.locator("tr.trace-unit.cut").count() == len(answer["trace"]["units"]) - len(
        answer["items"]
    )
    shown = page.locator("#trace-table").inner_text()
    cut = [u["reason"] for u in answer["trace"]["units"] if u["decision"] != "packed"]
    assert cut and all(reason in shown for reason in cut)  # each cut unit says why
    assert page.locator("#budget-bar svg rect.unit").count() == len(answer["items"])
    summary = page.locator("#recall-summary").inner_text()
    assert summary.startswith(f"{answer['used_tokens']} of 250 tokens")


# -- actions -----------------------------------------------------------------------------------


def test_undo_a_cycle_and_see_the_page_revert(live: Live, page: Any) -> None:
    scope = "acme/console-undo"
    fresh_scope(live, scope, "cu", split=40)
    live.rv.dream(scope)
    second = live.rv.cycles(scope)[0]
    change = next(c for c in second.report.changes if c.action == "revised")
    old = live.rv.revisions(change.page_id)[(change.revision_before or 1) - 1]
    assert live.rv.page(change.page_id).title != old.title or change.revision_before

    log_in(page, live, "acme-write", scope)
    page.click(f"tr.cycle-row[data-cycle='{second.id}'] a.cycle-link")
    page.wait_for_selector("#undo-cycle")
    page.click("#undo-cycle")
    page.click("#confirm-ok")
    flash_says(page, "undid cycle")
    page.wait_for_selector("#cycle-title + p .badge.undone")

    assert live.rv.cycle(second.id).undone_at is not None
    go(page, f"#/page/{change.page_id}", "#page-title")
    assert page.locator("#page-title").inner_text() == old.title
    now = live.rv.page(change.page_id).revision
    assert [c.text for c in now.claims] == [c.text for c in old.claims]
    shown = [t.strip() for t in page.locator("#page-body li").all_inner_texts()]
    assert [re.sub(r"(\s*\[[^\]]+\])+$", "", t) for t in shown] == [c.text for c in old.claims]


def test_edit_a_page_then_restore_its_revision(live: Live, page: Any) -> None:
    scope = "acme/console-edit"
    fresh_scope(live, scope, "ce")
    target = live.rv.pages(scope)[0]
    log_in(page, live, "acme-write", scope)
    go(page, f"#/page/{target.id}", "#edit-page")
    page.click("#edit-page")
    page.fill("#edit-title", "Deploys: check the rollout, then call it done")
    page.select_option("#edit-kind", "warning")
    page.click("#edit-add-claim")
    page.locator("#edit-claims li:last-child textarea").fill("Name the kubectl context every time.")
    page.click("#edit-save")
    flash_says(page, "Saved as revision")
    page.wait_for_selector("#page-body li .badge.pinned")

    edited = live.rv.page(target.id).revision
    assert edited.author == "human" and edited.title.startswith("Deploys: check")
    assert str(edited.kind) == "warning" and set(edited.pins) >= {"title", "kind"}
    assert edited.claims[-1].pinned and edited.claims[-1].text.startswith("Name the kubectl")
    assert live.rv.episode(edited.claims[-1].episode_ids[0], tenant="acme").category == "human-edit"

    page.click(f"details.revision[data-revision='{target.revision.number}'] summary")
    page.click(f".restore-revision[data-revision='{target.revision.number}']")
    page.click("#confirm-ok")
    flash_says(page, "Restored revision")
    page.wait_for_function(
        "t => document.getElementById('page-title').textContent === t", arg=target.title
    )
    restored = live.rv.page(target.id).revision
    assert restored.author == "restore" and restored.title == target.title
    assert restored.number == edited.number + 1


def test_dream_now_in_review_mode_shows_progress_until_it_is_done(live: Live, page: Any) -> None:
    scope = "acme/console-dream"
    live.rv.ingest(as_scope(load_sample()[:30], scope, "cd"))
    log_in(page, live, "acme-write", scope)
    go(page, "#/actions", "#dream-panel")
    page.select_option("#dream-mode", "review")
    page.click("#dream-start")
    page.wait_for_selector("#dream-summary")
    assert page.locator("#dream-progress").inner_text().startswith("done")
    assert page.locator("#dream-summary").inner_text().startswith("pending")
    [plan] = live.rv.plans(scope)
    assert live.rv.pages(scope) == []  # held for review, nothing applied
    page.click("a.inbox-link")
    page.wait_for_selector(f"article.plan[data-plan='{plan.id}']")


def test_forget_shows_the_dry_run_before_erasing(live: Live, page: Any) -> None:
    scope = "acme/console-forget"
    live.rv.ingest(as_scope(load_sample()[:6], scope, "cf"))
    victim = "cf-ep-demo-001"
    log_in(page, live, "acme-admin", scope)
    go(page, f"#/episode/{victim}", "#forget-episode")
    page.click("#forget-episode")
    page.wait_for_selector("#forget-panel")
    assert page.locator("#forget-value").input_value() == victim
    assert page.locator("#forget-apply").is_hidden()
    page.click("#forget-dry-run-button")
    page.wait_for_selector("#forget-dry-run")
    assert victim in page.locator("#forget-dry-run").inner_text()
    assert live.rv.episode(victim, tenant="acme").id == victim  # a dry run erases nothing
    page.fill("#forget-reason", "asked by the user")
    page.click("#forget-apply")
    page.click("#confirm-ok")
    page.wait_for_selector("#forget-done")
    flash_says(page, "Erased")
    with live.client(live.tokens["acme-admin"]) as client:
        assert client.get(f"/v1/episodes/{victim}").status_code == 404
        receipts = [r for r in live.rv.erasures() if victim in r.details.get("episodes", [])]
        assert (
            receipts
            and receipts[0].applied
            and receipts[0].details["reason"] == ("asked by the user")
        )


# -- browse ------------------------------------------------------------------------------------


def test_search_episodes_and_follow_links_both_ways(live: Live, page: Any) -> None:
    log_in(page, live, "acme-read")
    go(page, "#/episodes", "#episode-search")
    page.fill("#ep-q", "kubectl")
    page.select_option("#ep-outcome", "failure")
    page.select_option("#ep-consolidated", "true")
    page.click("#ep-search")
    page.wait_for_function("window.location.hash.includes('outcome=failure')")
    page.wait_for_selector("tr.episode-row")
    params = {"scope": "acme/coder", "q": "kubectl", "outcome": "failure", "consolidated": "true"}
    with live.client(live.tokens["acme-read"]) as client:
        expected = client.get("/v1/episodes", params={**params, "limit": 200}).json()
    rows = page.locator("tr.episode-row")
    assert [rows.nth(i).get_attribute("data-episode") for i in range(rows.count())] == [
        e["id"] for e in expected["episodes"]
    ]
    assert page.locator("#ep-count").inner_text().startswith(f"{expected['matched']} matched")

    rows.first.locator("a.episode-link").click()
    page.wait_for_selector("#cited-by a.page-link")
    first = expected["episodes"][0]["id"]
    citing = [p.id for p in live.rv.pages_citing(first, tenant="acme")]
    assert page.locator("#cited-by a.page-link").count() == len(citing)
    page.locator("#cited-by a.page-link").first.click()
    page.wait_for_selector("#page-title")
    assert first in page.locator("#page-body").inner_text()  # and back: the page cites it


def test_open_a_page_s_provenance_graph(live: Live, page: Any) -> None:
    target = max(live.rv.pages("acme/coder"), key=lambda p: len(p.citations))
    lineage = live.rv.why(target.id)
    log_in(page, live, "acme-read")
    go(page, f"#/page/{target.id}", "#provenance-graph svg .graph-node.page")
    page.click("#show-provenance")
    graph = page.locator("#provenance-graph svg")
    assert graph.locator(".graph-node.revision").count() == len(lineage.revisions)
    assert graph.locator(".graph-node.episode").count() == len(lineage.episodes)
    cites = {e for r in lineage.revisions for c in r.claims for e in c.episode_ids}
    drawn = {
        graph.locator(".edge.cites").nth(i).get_attribute("data-to")
        for i in range(graph.locator(".edge.cites").count())
    }
    assert drawn == cites & {e.id for e in lineage.episodes}
    graph.locator("a.graph-node.episode").first.click()
    page.wait_for_selector("#episode-view")
    assert page.locator("dd[data-field=id]").inner_text() == lineage.episodes[0].id


def test_the_journal_draws_its_pictures_with_axes_ticks_and_dates(live: Live, page: Any) -> None:
    log_in(page, live, "acme-read")
    for chart in ("growth", "compression"):  # calls and cost: none, and they say why
        assert page.locator(f"#chart-{chart} svg text.tick").count() >= 4, chart
        assert page.locator(f"#chart-{chart} svg .x-tick").count() >= 2, chart
    growth = page.locator("#chart-growth svg")
    assert growth.locator("polyline[data-series=active_pages]").count() == 1
    labels = " ".join(growth.locator("text.tick").evaluate_all("ts => ts.map(t => t.textContent)"))
    assert re.search(r"\bNov \d+", labels), labels
    cycles = len(live.rv.cycles("acme/coder"))
    assert page.locator("#chart-compression svg rect.bar").count() == cycles
    page.locator("tr.cycle-row a.cycle-link").first.click()
    page.wait_for_selector("#cycle-title")
    assert page.locator("dd[data-field=scanned]").count() == 1


# -- layout, keyboard, screenshots -------------------------------------------------------------


def test_keyboard_reaches_the_views_with_a_visible_focus(live: Live, page: Any) -> None:
    log_in(page, live, "acme-read")
    page.reload()  # the key stays in the tab: the console opens again, focus at the top
    page.wait_for_selector("#cycles-table")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip"
    for _ in range(3):  # skip link, brain, inbox, recall
        page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "nav-recall"
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline not in ("none", "")
    page.keyboard.press("Enter")
    page.wait_for_selector("#recall-query")
    page.focus("#recall-query")
    page.keyboard.type("deploy staging")
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "recall-run"
    page.keyboard.press("Enter")
    page.wait_for_selector("#trace-table")


def views(live: Live) -> list[tuple[str, str, str]]:
    """(name, hash, what to wait for) of every view, on acme/coder's data."""
    page_id = max(live.rv.pages("acme/coder"), key=lambda p: len(p.citations)).id
    cycle = live.rv.cycles("acme/coder")[0].id
    held = [p for p in live.rv.plans(None, status=None) if p.scope.key.startswith("acme/")]
    plan = ("plan", f"#/plan/{held[0].id}", "#plan-pages") if held else None
    shown = [
        ("journal", "#/journal", "#chart-growth svg"),
        ("inbox", "#/inbox", "#plans-pending"),
        ("recall", "#/recall", "#recall-form"),
        ("pages", "#/pages", "#pages-table"),
        ("page", f"#/page/{page_id}", "#provenance-graph svg"),
        ("cycle", f"#/cycle/{cycle}", "#cycle-changes"),
        ("episodes", "#/episodes?q=deploy", "#episodes-table"),
        ("episode", "#/episode/ep-demo-018", "#cited-by"),
        ("actions", "#/actions", "#forget-panel"),
        ("stats", "#/stats", "#stats-table"),
    ]
    return shown + ([plan] if plan else [])


def test_every_view_at_both_widths_without_sideways_scroll(
    live: Live, browser: Any, tmp_path: Path
) -> None:
    shots = tmp_path / "screenshots"
    shots.mkdir()
    wide: dict[str, int] = {}
    for size, viewport in (("1280", WIDE), ("400", NARROW)):
        context = browser.new_context(viewport=viewport)
        try:
            tab = context.new_page()
            tab.set_default_timeout(15_000)
            log_in(tab, live, "acme-admin")
            for name, hash_, ready in views(live):
                go(tab, hash_, ready)
                if name == "recall":
                    tab.fill("#recall-query", "deploy staging timeout")
                    tab.click("#recall-run")
                    tab.wait_for_selector("#trace-table")
                tab.screenshot(path=str(shots / f"{name}-{size}.png"), full_page=True)
                width = tab.evaluate(
                    "[document.scrollingElement.scrollWidth, document.scrollingElement.clientWidth]"
                )
                wide[f"{name}-{size}"] = width[0] - width[1]
        finally:
            context.close()
    print(f"console screenshots: {shots}")
    assert {k: v for k, v in wide.items() if v > 0} == {}
    assert len(list(shots.iterdir())) == 2 * len(views(live))
