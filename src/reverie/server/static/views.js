// Reverie console, the views: one function per screen, each reading the API and building its
// part of the page. Actions are shown only to keys that may take them (see `needs`), and
// every action's answer is said in the live region.
"use strict";

const view = document.getElementById("view");
const redraws = [];
const OUTCOMES = ["success", "failure", "partial", "timeout", "unknown"];
const KINDS = ["lesson", "fact", "procedure", "preference", "warning", "note"];

function setActive(name) {
  for (const a of document.querySelectorAll("nav a")) {
    const on = a.id === "nav-" + name;
    a.classList.toggle("active", on);
    if (on) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
  }
}

/** Put `children` in the view, then draw its pictures at their box's width (again on resize). */
function render(children, drawers) {
  view.replaceChildren(...children.flat().filter(Boolean));
  redraws.length = 0;
  for (const draw of drawers || []) { redraws.push(draw); draw(); }
}

// -- review inbox --------------------------------------------------------------------------------

function planCard(p, selectable) {
  const counts = Object.entries(p.counts).filter(([, v]) => v).map(([k, v]) => `${v} ${k}`).join(", ");
  const pick = selectable ? el("input", { type: "checkbox", class: "plan-select", value: p.id, "aria-label": `select plan ${p.id}` }) : null;
  return el("article", { class: "card plan", "data-plan": p.id },
    el("h3", {}, pick, pick ? " " : null, link("#/plan/" + encodeURIComponent(p.id), "Plan " + p.id, "plan-link"), " ", badge(p.status)),
    el("p", { class: "muted", text: `${scopeLabel(p.scope)} · made ${fmt.when(p.created_at)} · ${p.pages} pages · ${p.episodes} episodes · ${counts || "no changes"}` }),
    p.reason ? el("p", { text: "reason: " + p.reason }) : null);
}

/** Apply or reject each of `ids` through its own endpoint, one after another: what became of each. */
async function settleEach(ids, apply, reason) {
  const done = [];
  for (const id of ids) {
    const path = `/v1/plans/${encodeURIComponent(id)}/${apply ? "apply" : "reject"}`;
    try {
      const answer = await api(path, { method: "POST", body: apply ? undefined : { reason: reason || null } });
      done.push({ id, ok: true, text: apply ? `applied: ${answer.created} created, ${answer.revised} revised, ${answer.merged} merged (cycle ${answer.cycle_id})` : "rejected" });
    } catch (err) {
      done.push({ id, ok: false, text: `${err.code === "plan_stale" ? "stale" : "failed"}: ${err.message}` });
    }
  }
  return done;
}

/** Apply or reject the checked plans, after a confirmation that names them. */
function bulkActions(box) {
  const reason = el("input", { id: "bulk-reason", type: "text", placeholder: "why not (kept with each rejected plan)", "aria-label": "reason for rejecting the selected plans" });
  const out = el("ul", { id: "bulk-result" });
  const run = (apply) => async () => {
    const ids = [...box.querySelectorAll("input.plan-select:checked")].map((c) => c.value);
    if (!ids.length) return flash("Select the plans first.", "error");
    const what = apply ? "Apply" : "Reject";
    const consequence = apply ? "Each commits exactly as it was made (undo it like a cycle); a plan the brain moved under is refused as stale." : "Their episodes stay eligible for the next dream.";
    if (!(await confirmAction(`${what} ${ids.length} plan${ids.length === 1 ? "" : "s"} (${ids.join(", ")})? ${consequence}`, `${what} ${ids.length}`))) return;
    const done = await settleEach(ids, apply, reason.value);
    out.replaceChildren(...done.map((d) => el("li", { "data-plan": d.id, class: d.ok ? "ok" : "error" }, link("#/plan/" + encodeURIComponent(d.id), d.id), ": " + d.text)));
    flash(`${apply ? "Applied" : "Rejected"} ${done.filter((d) => d.ok).length} of ${ids.length} plans.`, done.every((d) => d.ok) ? "ok" : "error");
    await refreshInboxCount();
    await showInbox(out);
  };
  const all = el("input", { type: "checkbox", id: "select-all-plans", onchange: () => box.querySelectorAll("input.plan-select").forEach((c) => { c.checked = all.checked; }) });
  return el("div", { class: "actions", id: "bulk-actions" },
    el("label", { for: "select-all-plans" }, all, " all"),
    actionButton("Apply selected", run(true), { id: "bulk-apply", class: "primary" }),
    reason,
    actionButton("Reject selected", run(false), { id: "bulk-reject" }), out);
}

/** The pending plans of every brain the key reads (a brain holds at most one at a time). */
async function pendingEverywhere() {
  const each = await Promise.all(session.scopes.map((scope) => api("/v1/plans", { params: { scope, status: "pending", limit: 100 } })));
  return each.flat();
}

async function showInbox(results) {
  setActive("inbox");
  const [pending, plans] = await Promise.all([pendingEverywhere(), api("/v1/plans", { params: { scope: currentScope(), status: "all", limit: 100 } })]);
  const settled = plans.filter((p) => p.status !== "pending");
  const box = el("div", { id: "plans-pending" }, pending.length ? pending.map((p) => planCard(p, can("write"))) : muted("Nothing waits for review."));
  const bulk = pending.length ? needs("write", bulkActions(box)) : null;
  if (bulk && results) bulk.querySelector("#bulk-result").replaceWith(results);
  render([
    heading(`Review inbox · every brain of ${session.boundTo}`),
    muted("Plans a dream held for review (Actions → dream in review mode), in every brain this key reads. Apply one to commit it exactly as it was made, or reject it with a reason: its episodes stay eligible for the next dream. Tick several to apply or reject them together."),
    bulk, box,
    settled.length ? heading(`Settled plans of ${scopeLabel()}`) : null,
    settled.length ? table([["made"], ["plan"], ["status"], ["reason"]], settled.map((p) => row([
      ["made", fmt.when(p.created_at)],
      ["plan", link("#/plan/" + encodeURIComponent(p.id), p.id)],
      ["status", badge(p.status)],
      ["reason", p.reason || "—"],
    ]))) : null,
  ]);
}

function diffLines(text) {
  return el("pre", { class: "diff" }, text.split("\n").map((line) => {
    const cls = line.startsWith("+++") || line.startsWith("---") ? "file" : line.startsWith("@@") ? "hunk"
      : line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : null;
    return el("span", { class: cls }, line + "\n");
  }));
}

function claimCounts(diff) {
  const lines = diff.split("\n");
  const added = lines.filter((l) => l.startsWith("+- ")).length;
  const removed = lines.filter((l) => l.startsWith("-- ")).length;
  return `${added} claim line(s) added, ${removed} removed`;
}

function planPage(page) {
  return el("section", { class: "card plan-page", "data-page": page.page_id },
    el("h3", {}, badge(page.action), " ", page.title),
    el("p", { class: "muted", text: `${page.page_id} · revision ${page.revision_before ?? "new"} → ${page.revision_after} · ${claimCounts(page.diff)}` }),
    diffLines(page.diff),
    el("p", { class: "muted", text: "cited episodes" }),
    el("ul", { class: "cited" }, page.episodes.map((e) => el("li", {},
      link(episodeHref(e.id), e.id, "citation-link"), " ", e.line, e.new ? badge("new", "new") : null))));
}

function settlePlan(plan) {
  if (plan.status !== "pending") return null;
  const reason = el("input", { id: "reject-reason", type: "text", placeholder: "why not (kept with the plan)", "aria-label": "reason for rejecting" });
  return needs("write", el("div", { class: "actions", id: "plan-actions" },
    actionButton("Apply this plan", async () => {
      try {
        const report = await api(`/v1/plans/${encodeURIComponent(plan.id)}/apply`, { method: "POST" });
        flash(`Applied: ${report.created} created, ${report.revised} revised, ${report.merged} merged.`);
        const first = report.changes[0];
        window.location.hash = first ? pageHref(first.page_id) : "#/inbox";
      } catch (err) {
        if (err.code === "plan_stale") { flash(err.message, "error"); return showPlan(plan.id); }
        throw err;
      }
    }, { id: "apply-plan", class: "primary" }),
    reason,
    actionButton("Reject", async () => {
      await api(`/v1/plans/${encodeURIComponent(plan.id)}/reject`, { method: "POST", body: { reason: reason.value || null } });
      flash(`Rejected plan ${plan.id}.`);
      window.location.hash = "#/inbox";
    }, { id: "reject-plan" })));
}

async function showPlan(id) {
  setActive("inbox");
  const plan = await api("/v1/plans/" + encodeURIComponent(id));
  const stale = plan.status === "stale" || plan.moved.length > 0;
  render([
    heading(`Plan ${plan.id}`, "plan-title"),
    el("p", {}, badge(plan.status), ` made ${fmt.when(plan.created_at)} · ${plan.pages.length} pages · ${plan.episodes} episodes consolidated`),
    stale ? el("div", { class: "card warning", id: "plan-stale", role: "note" },
      el("strong", { text: "Stale: " }), "the brain moved since this plan was made, so it cannot be applied as it is. ",
      plan.moved.length ? el("ul", {}, plan.moved.map((m) => el("li", { text: m }))) : null) : null,
    plan.reason ? el("p", { text: "reason: " + plan.reason }) : null,
    stale ? null : settlePlan(plan),
    el("div", { id: "plan-pages" }, plan.pages.map(planPage)),
  ]);
}

// -- recall playground ---------------------------------------------------------------------------

function budgetBar(trace, packed) {
  const box = el("div", { class: "budget", id: "budget-bar" });
  const draw = () => {
    const b = chartBox(box, 34);
    const scale = b.width / Math.max(trace.budget_tokens, 1);
    let x = 0;
    const part = (tokens, cls, title) => {
      const rect = svg("rect", { x, y: 6, width: Math.max(1, tokens * scale - 1), height: 22, class: cls });
      rect.append(svg("title", {}, title));
      b.root.append(rect);
      x += tokens * scale;
    };
    if (trace.used_tokens) part(trace.header_tokens, "header", `header and fence: ${trace.header_tokens} tokens`);
    packed.forEach((u, i) => part(u.tokens, "unit u" + (i % 4), `${u.kind} ${u.id}: ${u.tokens} tokens`));
    b.root.append(svg("rect", { x: 0, y: 6, width: b.width - 1, height: 22, class: "outline" }));
  };
  return { box, draw, legend: budgetLegend(trace, packed) };
}

/** What the bar's colours stand for, with their tokens: the three parts add up to the budget. */
function budgetLegend(trace, packed) {
  const header = trace.used_tokens ? trace.header_tokens : 0;
  const units = packed.reduce((sum, u) => sum + u.tokens, 0);
  const free = Math.max(0, trace.budget_tokens - header - units);
  const part = (key, swatch, text, tokens) => el("span", { "data-part": key, "data-tokens": tokens },
    el("i", { class: swatch }), `${text}: ${tokens} tokens`);
  return el("p", { class: "legend", id: "budget-legend" },
    part("header", "header", "header and fence", header),
    part("units", "u0", `${packed.length} packed unit${packed.length === 1 ? "" : "s"} (one colour each, in order)`, units),
    part("free", "free", "free", free));
}

function signalsText(signals) {
  return Object.entries(signals).map(([k, v]) => `${k.replaceAll("_", " ")} ${Number(v).toFixed(3)}`).join(" · ");
}

function traceRow(u) {
  const unit = u.kind === "episode" ? link(episodeHref(u.id), u.id) : link(pageHref(u.id), u.title || u.id);
  return row([
    ["decision", badge(u.decision)],
    ["score", fmt.score(u.score), "num"],
    ["tokens", fmt.num(u.tokens), "num"],
    ["unit", el("div", {}, el("span", { class: "muted", text: `${u.kind} · ${u.path} · ` }), unit,
      el("div", { class: "unit-text", text: u.text }),
      u.citations.length ? el("div", {}, u.citations.map((id) => link(episodeHref(id), "[" + id + "]", "citation-link"))) : null)],
    ["signals", el("span", { class: "signals", text: signalsText(u.signals) })],
    ["why", u.reason],
  ], { class: "trace-unit " + u.decision });
}

function showTrace(result) {
  const trace = result.trace;
  const packed = trace.units.filter((u) => u.decision === "packed");
  const terms = Object.entries(trace.weights).map(([t, w]) => `${t} (${w.toFixed(2)})`).join(", ");
  const bar = budgetBar(trace, packed);
  const out = document.getElementById("recall-result");
  out.replaceChildren(...[
    el("p", { id: "recall-summary" }, `${trace.used_tokens} of ${trace.budget_tokens} tokens · ${packed.length} packed · ${trace.units.length - packed.length} cut · terms (weight): ${terms || "—"} · relevance floor ${trace.floor}${trace.vectors ? " · vectors on" : ""}`),
    bar.box,
    bar.legend,
    trace.notes.map((n) => el("p", { class: "note", text: n })),
    result.warning ? el("p", { class: "error", text: result.warning }) : null,
    el("h3", { text: "The prompt section" }),
    el("pre", { id: "recall-section", class: "section" }, result.text || "(empty: nothing relevant)"),
    el("h3", { text: `Every unit recall considered (${trace.units.length}; ${trace.unmatched_claims} claims of the pages found shared no term and are not listed)` }),
    table([["decision"], ["score", "num"], ["tokens", "num"], ["unit"], ["signals"], ["why"]], trace.units.map(traceRow), { id: "trace-table" }),
  ].flat().filter(Boolean));
  redraws.length = 0;
  redraws.push(bar.draw);
  bar.draw();
}

function showRecall() {
  setActive("recall");
  const query = el("textarea", { id: "recall-query", rows: 2, required: true, placeholder: "what the agent is about to do, or asks" });
  const budget = el("input", { id: "recall-budget", type: "number", min: 0, max: 100000, value: 600 });
  const form = el("form", { id: "recall-form", class: "card form" },
    el("label", { for: "recall-query", text: "Question" }), query,
    el("label", { for: "recall-budget", text: "Budget (tokens)" }), budget,
    el("button", { type: "submit", id: "recall-run", class: "primary" }, "Recall, and explain"));
  query.addEventListener("keydown", (event) => { // Enter asks, Shift+Enter starts a new line
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const result = await api("/v1/recall", {
        method: "POST", params: { explain: "true" },
        body: { query: query.value, scope: currentScope(), budget_tokens: Number(budget.value) },
      });
      showTrace(result);
    } catch (err) { flash(err.message, "error"); }
  });
  render([heading(`Recall playground · ${scopeLabel()}`),
    muted("Ask what an agent would ask: see the exact section recall would put in its prompt, and why each unit was packed or cut (its signals and the budget decision). Enter asks; Shift+Enter starts a new line."),
    form, el("div", { id: "recall-result" })]);
}

// -- journal and cycles --------------------------------------------------------------------------

const EMPTY = {
  growth: "No cycles yet: pages appear once a dream consolidates episodes (Actions → Dream now).",
  calls: "No model calls in these cycles: no model is configured (the extractive distiller needs none), or nothing needed distilling.",
  cost: "No provider tokens spent: no model was called in these cycles.",
  compression: "No page touched by these cycles yet.",
  recalls: "No recalls yet: agents recall through POST /v1/recall, the MCP recall tool or reverie recall (explained recalls in the playground are not counted).",
};

function journalCharts(data) {
  const series = data.series.map((p) => ({ ...p, t: Date.parse(p.at) }));
  const oldest = data.cycles.slice().reverse().map((c) => ({ ...c, t: Date.parse(c.started_at) }));
  const perCycle = (values) => oldest.map((c) => ({ t: c.t, label: `${fmt.when(c.started_at)} ${c.cycle_id}`, values: values(c) }));
  const days = data.recalls.map((d) => ({ t: Date.parse(d.at), label: fmt.day(new Date(d.at)), values: d }));
  const names = ["growth", "calls", "cost", "compression", "recalls"];
  const boxes = Object.fromEntries(names.map((k) => [k, el("div", { id: "chart-" + k, class: "chart-box" })]));
  const draw = [
    () => timeChart(boxes.growth, {
      leftLabel: "episodes consolidated", rightLabel: "active pages", empty: EMPTY.growth,
      series: [
        { key: "episodes", label: "episodes consolidated", color: COLORS.episodes, axis: "left", points: series.map((p) => ({ t: p.t, v: p.episodes, title: `${fmt.when(p.at)}: ${p.episodes} episodes consolidated` })) },
        { key: "active_pages", label: "active pages", color: COLORS.active, axis: "right", points: series.map((p) => ({ t: p.t, v: p.active_pages, title: `${fmt.when(p.at)}: ${p.active_pages} active pages` })) },
      ],
    }),
    () => barChart(boxes.calls, { leftLabel: "model calls", empty: EMPTY.calls, series: [
      { key: "model_calls", label: "model calls", color: COLORS.calls }, { key: "cache_hits", label: "answered from the cache", color: COLORS.hits }],
    groups: perCycle((c) => c) }),
    () => barChart(boxes.cost, { leftLabel: "model tokens", empty: EMPTY.cost, series: [
      { key: "input_tokens", label: "input tokens", color: COLORS.tokens }, { key: "output_tokens", label: "output tokens", color: COLORS.active }],
    groups: perCycle((c) => c) }),
    () => barChart(boxes.compression, { leftLabel: "episodes per page", empty: EMPTY.compression,
      series: [{ key: "compression", label: "episodes consolidated per page touched", color: COLORS.ratio }],
      groups: perCycle((c) => ({ compression: c.compression || 0 })) }),
    () => barChart(boxes.recalls, { leftLabel: "recalls", empty: EMPTY.recalls, series: [
      { key: "hits", label: "found memory (a unit packed)", color: COLORS.hit }, { key: "misses", label: "found nothing", color: COLORS.miss }],
    groups: days }),
  ];
  const figure = (key, caption) => el("figure", {}, el("figcaption", { text: caption }), boxes[key]);
  const pictures = el("div", { class: "pictures" },
    figure("growth", "Episodes and active pages over time"),
    figure("calls", "Model calls per cycle"),
    figure("cost", "Model cost per cycle (provider tokens)"),
    figure("compression", "Compression per cycle"),
    figure("recalls", "Recall hits over time: is memory being used? (per day)"));
  return { pictures, draw };
}

function cycleRow(c) {
  const changes = `${c.created} created, ${c.revised} revised, ${c.merged} merged`;
  const state = c.undone ? "undone" : c.status;
  return row([
    ["started", fmt.when(c.started_at)],
    ["cycle", link(cycleHref(c.cycle_id), c.cycle_id, "cycle-link")],
    ["status", badge(state)],
    ["took", fmt.secs(c.duration_s), "num"],
    ["scanned", fmt.num(c.scanned), "num"],
    ["consolidated", fmt.num(c.episodes_marked), "num"],
    ["pages", changes],
    ["ep/page", fmt.num(c.compression), "num"],
    ["model calls", `${c.model_calls} (${c.cache_hits} cached)`, "num"],
  ], { class: "cycle-row", "data-cycle": c.cycle_id });
}

async function showJournal() {
  setActive("journal");
  const data = await api("/v1/journal", { params: { scope: currentScope() } });
  const charts = journalCharts(data);
  render([
    heading(`Dream journal of ${scopeLabel(data.scope)}`),
    charts.pictures,
    heading("Cycles"),
    table([["started"], ["cycle"], ["status"], ["took", "num"], ["scanned", "num"], ["consolidated", "num"], ["pages"], ["ep/page", "num"], ["model calls", "num"]],
      data.cycles.map(cycleRow), { id: "cycles-table" }),
    heading("Journal"),
    el("ol", { class: "entries", id: "journal-entries", reversed: true }, data.entries.map((e) => el("li", {},
      el("span", { class: "muted", text: fmt.when(e.at) + " " }),
      e.cycle_id ? link(cycleHref(e.cycle_id), e.cycle_id, "cycle-link") : null,
      el("div", { class: "entry-text", text: e.text })))),
  ], charts.draw);
}

function reportFacts(r) {
  const facts = [["scanned", r.scanned], ["collected", r.collected], ["deferred", r.deferred], ["groups", r.groups],
    ["created", r.created], ["revised", r.revised], ["merged", r.merged], ["superseded", r.superseded], ["retired", r.retired],
    ["episodes consolidated", r.episodes_marked], ["model calls", `${r.model_calls} (${r.cache_hits} from the cache)`],
    ["tokens", `${r.input_tokens} in, ${r.output_tokens} out`], ["compression", r.compression_ratio],
    ["checkpoint", `${r.checkpoint_before} → ${r.checkpoint_after}`]];
  return el("dl", { class: "fields" }, facts.flatMap(([k, v]) => [el("dt", { text: k }), el("dd", { "data-field": k, text: String(v) })]));
}

async function showCycle(id) {
  setActive("journal");
  const cycle = await api("/v1/cycles/" + encodeURIComponent(id));
  const r = cycle.report;
  const undoable = cycle.status === "committed" && !cycle.undone_at;
  const undo = undoable ? needs("write", actionButton("Undo this cycle", async () => {
    const ok = await confirmAction(`Undo cycle ${id}? Every page it touched goes back a revision and its ${r.episodes_marked} episodes become eligible again.`, "Undo the cycle");
    if (!ok) return;
    const done = await api(`/v1/cycles/${encodeURIComponent(id)}/undo`, { method: "POST" });
    flash(done.message);
    await showCycle(id);
  }, { id: "undo-cycle", class: "danger" })) : null;
  render([
    heading(`Cycle ${cycle.id}`, "cycle-title"),
    el("p", {}, badge(cycle.undone_at ? "undone" : cycle.status), ` ${cycle.scope.tenant}/${cycle.scope.agent}${cycle.scope.user ? "/" + cycle.scope.user : ""} · started ${fmt.when(cycle.started_at)}`,
      cycle.undone_at ? ` · undone ${fmt.when(cycle.undone_at)}` : ""),
    r.message ? el("p", { text: r.message }) : null,
    undo,
    el("section", { class: "card" }, reportFacts(r)),
    heading("Pages it changed"),
    r.changes.length ? table([["action"], ["page"], ["revisions"], ["episodes", "num"]], r.changes.map((c) => row([
      ["action", badge(c.action)],
      ["page", link(pageHref(c.page_id), c.title)],
      ["revisions", `${c.revision_before ?? "new"} → ${c.revision_after}`],
      ["episodes", String(c.episodes), "num"],
    ])), { id: "cycle-changes" }) : muted("None."),
    heading("Timings"),
    el("p", { text: Object.entries(r.timings).map(([k, v]) => `${k} ${fmt.secs(v)}`).join(" · ") || "—" }),
  ]);
}

// -- pages ---------------------------------------------------------------------------------------

const PAGE_COLUMNS = [
  ["title", "title", (p) => p.revision.title.toLowerCase()],
  ["kind", "kind", (p) => p.revision.kind],
  ["status", "status", (p) => p.revision.status],
  ["confidence", "confidence", (p) => p.revision.confidence, "num"],
  ["rev", "rev", (p) => p.revision.number, "num"],
  ["updated", "updated", (p) => p.updated_at],
];

/** The pages whose title, kind or claims hold every word of `q` (any case), sorted by `sort`. */
function pagesShown(pages, q, sort, dir) {
  const words = q.toLowerCase().split(/\s+/).filter(Boolean);
  const text = (p) => [p.revision.title, p.revision.kind, ...p.revision.claims.map((c) => c.text)].join("\n").toLowerCase();
  const found = pages.filter((p) => words.every((w) => text(p).includes(w)));
  const column = PAGE_COLUMNS.find(([key]) => key === sort);
  if (!column) return found;
  const value = column[2], sign = dir === "desc" ? -1 : 1;
  return found.slice().sort((a, b) => (value(a) < value(b) ? -sign : value(a) > value(b) ? sign : 0));
}

function pageRow(p) {
  return row([
    ["title", link(pageHref(p.id), p.revision.title, "page-link")],
    ["kind", badge(p.revision.kind, "kind")],
    ["status", badge(p.revision.status)],
    ["confidence", p.revision.confidence.toFixed(2), "num"],
    ["rev", String(p.revision.number), "num"],
    ["updated", fmt.when(p.updated_at)],
  ], { class: "page-row", "data-page": p.id });
}

async function showPages() {
  setActive("pages");
  const query = episodeQuery();
  const all = query.get("status") === "all";
  const pages = await api("/v1/pages", { params: { scope: currentScope(), status: all ? "all" : "active" } });
  const state = { q: query.get("q") || "", sort: query.get("sort") || "", dir: query.get("dir") === "desc" ? "desc" : "asc" };
  const search = el("input", { id: "pages-q", type: "search", value: state.q, placeholder: "words in a title or a claim", "aria-label": "search pages" });
  const count = el("p", { id: "pages-count", "aria-live": "polite" });
  const holder = el("div", {});
  const redraw = () => {
    const shown = pagesShown(pages, state.q, state.sort, state.dir);
    count.textContent = `${shown.length} of ${pages.length} page${pages.length === 1 ? "" : "s"}${state.q ? " match" : ""}.`;
    const headers = PAGE_COLUMNS.map(([key, label, , cls]) => {
      const next = state.sort === key && state.dir === "asc" ? "desc" : "asc";
      const th = el("th", { class: cls || null, scope: "col", "data-sort": key, "aria-sort": state.sort === key ? (state.dir === "asc" ? "ascending" : "descending") : null },
        el("button", { type: "button", class: "sort", title: `sort by ${label}`, onclick: () => { Object.assign(state, { sort: key, dir: next }); redraw(); } }, label));
      return th;
    });
    holder.replaceChildren(el("table", { id: "pages-table" }, el("thead", {}, el("tr", {}, headers)), el("tbody", {}, shown.map(pageRow))));
    const params = new URLSearchParams({ ...(all ? { status: "all" } : {}), ...(state.q ? { q: state.q } : {}), ...(state.sort ? { sort: state.sort, dir: state.dir } : {}) });
    history.replaceState(null, "", "#/pages" + (params.toString() ? "?" + params : ""));
  };
  search.addEventListener("input", () => { state.q = search.value; redraw(); });
  render([
    heading(`Pages of ${scopeLabel()} (${pages.length})`),
    el("div", { class: "actions", role: "search" }, search,
      all ? link("#/pages", "Show active pages only") : link("#/pages?status=all", "Show superseded and retired pages too")),
    count,
    holder,
  ]);
  redraw();
}

/** What changed from revision `a` to `b`: fields, and claim lines added and removed. */
function revisionDiff(a, b) {
  const lines = [];
  for (const f of ["title", "kind", "status"]) {
    if (!a || a[f] !== b[f]) lines.push(["field", `${f}: ${a ? a[f] + " → " : ""}${b[f]}`]);
  }
  const before = new Set(a ? a.claims.map((c) => c.text) : []);
  const after = new Set(b.claims.map((c) => c.text));
  for (const c of b.claims) if (!before.has(c.text)) lines.push(["add", "+ " + c.text]);
  for (const t of before) if (!after.has(t)) lines.push(["del", "− " + t]);
  if (lines.length === 0) lines.push(["field", "same content (a restore or a change of validity)"]);
  return el("pre", { class: "diff" }, lines.map(([cls, text]) => el("span", { class: cls }, text + "\n")));
}

function revisionCard(r, previous, page) {
  const current = r.number === page.revision.number;
  const restore = current ? null : needs("write", actionButton(`Restore revision ${r.number}`, async () => {
    const ok = await confirmAction(`Write a new revision of “${page.revision.title}” with the content of revision ${r.number}? It is pinned, and can be undone like a cycle.`, "Restore it");
    if (!ok) return;
    const done = await api(`/v1/pages/${encodeURIComponent(page.id)}/restore`, { method: "POST", body: { revision: r.number } });
    flash(`Restored revision ${r.number} as revision ${done.page.revision.number} (cycle ${done.cycle_id}).`);
    await showPage(page.id);
  }, { class: "restore-revision", "data-revision": r.number }));
  return el("details", { class: "card revision", "data-revision": r.number, id: "revision-" + r.number, open: current || null },
    el("summary", {}, `rev ${r.number} · ${r.status} · ${r.author} · ${fmt.when(r.created_at)}`,
      r.cycle_id ? el("span", {}, " · ", link(cycleHref(r.cycle_id), r.cycle_id, "cycle-link")) : null,
      current ? badge("current", "current") : null),
    r.reason ? el("p", { class: "muted", text: r.reason }) : null,
    revisionDiff(previous, r), restore);
}

function claimEditor(claim) {
  const text = el("textarea", { class: "edit-claim", rows: 2, "aria-label": "claim text" });
  text.value = claim ? claim.text : "";
  const item = el("li", { class: "edit-claim-row" }, text,
    claim && claim.episode_ids.length ? el("span", { class: "muted", text: "cites " + claim.episode_ids.join(", ") }) : el("span", { class: "muted", text: "yours: cites this edit" }),
    el("button", { type: "button", class: "remove-claim", onclick: () => item.remove() }, "Remove"));
  item.citations = claim ? claim.episode_ids : [];
  return item;
}

function editForm(page) {
  const r = page.revision;
  const title = el("input", { id: "edit-title", type: "text", maxlength: 200, required: true });
  title.value = r.title;
  const kind = el("select", { id: "edit-kind" }, KINDS.map((k) => el("option", { value: k, text: k, selected: k === r.kind || null })));
  const list = el("ol", { id: "edit-claims" }, r.claims.map(claimEditor));
  const form = el("form", { id: "edit-form", class: "card form", hidden: true },
    el("p", { class: "muted", text: "Your edit is a pinned revision authored “human”: later dreams revise around it, never drop or rewrite it. Undo it like a cycle." }),
    el("label", { for: "edit-title", text: "Title" }), title,
    el("label", { for: "edit-kind", text: "Kind" }), kind,
    el("p", { text: "Claims" }), list,
    el("div", { class: "actions" },
      el("button", { type: "button", id: "edit-add-claim", onclick: () => { const row = claimEditor(null); list.append(row); row.querySelector("textarea").focus(); } }, "Add a claim"),
      el("button", { type: "submit", id: "edit-save", class: "primary" }, "Save as a pinned revision"),
      el("button", { type: "button", onclick: () => { form.hidden = true; } }, "Cancel")));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const claims = [...list.querySelectorAll("li")].map((li) => ({ text: li.querySelector("textarea").value.trim(), episode_ids: li.citations }))
      .filter((c) => c.text);
    try {
      const done = await api(`/v1/pages/${encodeURIComponent(page.id)}/edit`, { method: "POST", body: { revision: r.number, title: title.value, kind: kind.value, claims } });
      flash(done.cycle_id ? `Saved as revision ${done.revision} (pinned: ${done.pins.join(", ") || "your lines"}).` : "Nothing changed.");
      await showPage(page.id);
    } catch (err) { flash(err.message, "error"); }
  });
  return form;
}

async function showPage(pageId) {
  setActive("pages");
  const lineage = await api("/v1/pages/" + encodeURIComponent(pageId) + "/why");
  const page = lineage.page, r = page.revision;
  const form = can("write") ? editForm(page) : null;
  const graph = el("div", { id: "provenance-graph", class: "chart-box" });
  const revisions = lineage.revisions;
  render([
    heading(r.title, "page-title"),
    el("p", { class: "muted", id: "page-meta", text: `${r.kind} · ${r.status} · confidence ${r.confidence.toFixed(2)} · rev ${r.number} · ${page.id}${r.pins.length ? " · pinned: " + r.pins.join(", ") : ""}` }),
    el("div", { class: "actions" },
      form ? el("button", { type: "button", id: "edit-page", onclick: () => { form.hidden = false; document.getElementById("edit-title").focus(); } }, "Edit") : null,
      el("button", { type: "button", id: "show-provenance", onclick: () => graph.scrollIntoView() }, "Provenance graph"),
      needs("admin", el("button", { type: "button", class: "danger", id: "forget-page", onclick: () => { window.location.hash = "#/actions?page=" + encodeURIComponent(page.id); } }, "Forget…"))),
    form,
    el("div", { class: "card", id: "page-body" }, claimList(r.claims)),
    heading("Provenance: page → revisions → episodes", "provenance"),
    graph,
    heading(`Revisions (${revisions.length})`),
    el("div", { id: "revisions" }, revisions.slice().reverse().map((rev) => revisionCard(rev, revisions[rev.number - 2], page))),
    heading(`Cited episodes (${lineage.episodes.length})`),
    table([["episode"], ["when"], ["outcome"], ["situation"]], lineage.episodes.map((e) => row([
      ["episode", link(episodeHref(e.id), e.id, "citation-link")],
      ["when", fmt.when(e.created_at)],
      ["outcome", badge(e.outcome)],
      ["situation", e.situation],
    ]))),
  ], [() => provenanceGraph(graph, lineage)]);
}

// -- episodes ------------------------------------------------------------------------------------

function episodeQuery() {
  return new URLSearchParams(window.location.hash.split("?")[1] || "");
}

function searchForm(query) {
  const field = (id, label, input) => el("div", { class: "field" }, el("label", { for: id, text: label }), input);
  const select = (id, options) => el("select", { id }, options.map(([v, t]) => el("option", { value: v, text: t, selected: query.get(id.slice(3)) === v || null })));
  const value = (name) => query.get(name) || "";
  const form = el("form", { id: "episode-search", class: "card form grid", role: "search" },
    field("ep-q", "Words", el("input", { id: "ep-q", type: "search", value: value("q"), placeholder: "kubectl timeout" })),
    field("ep-outcome", "Outcome", select("ep-outcome", [["", "any"], ...OUTCOMES.map((o) => [o, o])])),
    field("ep-since", "From", el("input", { id: "ep-since", type: "date", value: value("since") })),
    field("ep-until", "To", el("input", { id: "ep-until", type: "date", value: value("until") })),
    field("ep-consolidated", "Consolidated", select("ep-consolidated", [["", "either"], ["true", "yes"], ["false", "not yet"]])),
    field("ep-tool", "Tool", el("input", { id: "ep-tool", type: "text", value: value("tool"), placeholder: "kubectl" })),
    el("div", { class: "field" }, el("button", { type: "submit", id: "ep-search", class: "primary" }, "Search")));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const next = new URLSearchParams();
    for (const name of ["q", "outcome", "since", "until", "consolidated", "tool"]) {
      const v = document.getElementById("ep-" + name).value.trim();
      if (v) next.set(name, v);
    }
    window.location.hash = "#/episodes?" + next.toString();
  });
  return form;
}

async function showEpisodes() {
  setActive("episodes");
  const query = episodeQuery();
  const params = { scope: currentScope(), limit: 200, q: query.get("q"), outcome: query.get("outcome"), tool: query.get("tool"), consolidated: query.get("consolidated") };
  if (query.get("since")) params.since = query.get("since") + "T00:00:00Z";
  if (query.get("until")) params.until = query.get("until") + "T23:59:59Z";
  const found = await api("/v1/episodes", { params });
  const where = found.complete ? "" : " among the newest 5000 (or best 5000 matches): narrow the search to see older ones";
  render([
    heading(`Episodes of ${scopeLabel()}`),
    searchForm(query),
    el("p", { id: "ep-count", "aria-live": "polite", text: `${found.matched} matched${where}; showing ${found.episodes.length}, ${query.get("q") ? "best match first" : "newest first"}.` }),
    table([["when"], ["episode"], ["outcome"], ["situation"], ["tools"], ["consolidated"]], found.episodes.map((e) => row([
      ["when", fmt.when(e.created_at)],
      ["episode", link(episodeHref(e.id), e.id, "episode-link")],
      ["outcome", badge(e.outcome)],
      ["situation", e.situation],
      ["tools", e.tools.join(", ") || "—"],
      ["consolidated", e.consolidated_in ? link(cycleHref(e.consolidated_in), e.consolidated_in, "cycle-link") : "not yet"],
    ], { class: "episode-row", "data-episode": e.id })), { id: "episodes-table" }),
  ]);
}

const EPISODE_FIELDS = ["id", "scope", "created_at", "session_id", "situation", "action", "outcome",
  "outcome_details", "error", "lesson", "importance", "category", "tools", "consolidated_in"];

function shown(value) {
  if (value === null || value === undefined || value === "") return "—";
  if (Array.isArray(value)) return value.join(", ") || "—";
  if (typeof value === "object") return [value.tenant, value.agent, value.user].filter(Boolean).join("/");
  return String(value);
}

async function showEpisode(episodeId) {
  setActive("episodes");
  const [e, citing] = await Promise.all([
    api("/v1/episodes/" + encodeURIComponent(episodeId)),
    api("/v1/episodes/" + encodeURIComponent(episodeId) + "/pages"),
  ]);
  const fields = el("dl", { class: "fields" }, EPISODE_FIELDS.flatMap((f) => [el("dt", { text: f }), el("dd", { "data-field": f, text: shown(e[f]) })]));
  render([el("section", { id: "episode-view", class: "card" },
    heading("Episode " + e.id),
    fields,
    e.consolidated_in ? el("p", {}, "Consolidated in cycle ", link(cycleHref(e.consolidated_in), e.consolidated_in, "cycle-link")) : muted("Not consolidated yet."),
    el("h3", { text: `Cited by ${citing.length} active page(s)` }),
    el("ul", { id: "cited-by" }, citing.map((p) => el("li", {}, link(pageHref(p.id), p.revision.title, "page-link")))),
    needs("admin", el("div", { class: "actions" }, el("button", { type: "button", class: "danger", id: "forget-episode",
      onclick: () => { window.location.hash = "#/actions?episodes=" + encodeURIComponent(e.id); } }, "Forget this episode…"))))]);
}

// -- actions -------------------------------------------------------------------------------------

async function pollDream(cycleId, progress, out) {
  const started = Date.now();
  for (;;) {
    const dream = await api("/v1/dreams/" + encodeURIComponent(cycleId));
    progress.textContent = `${dream.state} · ${((Date.now() - started) / 1000).toFixed(1)} s`;
    if (dream.state !== "running") return dream;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

function dreamPanel() {
  const mode = el("select", { id: "dream-mode" },
    el("option", { value: "review", text: "review: hold the changes as a plan to apply or reject" }),
    el("option", { value: "dry_run", text: "dry run: report what it would do, change nothing" }),
    el("option", { value: "commit", text: "commit: apply the changes now (undoable)" }));
  const progress = el("p", { id: "dream-progress", role: "status" });
  const out = el("div", { id: "dream-result" });
  const start = actionButton("Dream now", async () => {
    const body = { scope: currentScope(), dry_run: mode.value === "dry_run", review: mode.value === "review" };
    const job = await api("/v1/dreams", { method: "POST", body });
    progress.replaceChildren(el("progress", { "aria-label": "dreaming" }), ` running ${job.cycle_id}`);
    const done = await pollDream(job.cycle_id, progress, out);
    progress.replaceChildren(`${done.state} · cycle ${done.cycle_id}`);
    if (done.state === "failed") { out.replaceChildren(el("p", { class: "error", text: done.error })); return; }
    const r = done.report;
    out.replaceChildren(el("p", { id: "dream-summary", text: `${r.status}: scanned ${r.scanned}, ${r.created} created, ${r.revised} revised, ${r.merged} merged, ${r.episodes_marked} episodes consolidated. ${r.message || ""}` }),
      r.status === "pending" ? link("#/inbox", "Review the plan in the inbox", "inbox-link") : r.status === "committed" ? link(cycleHref(done.cycle_id), "Open the cycle's report", "cycle-link") : null);
    flash(`Dream ${done.cycle_id}: ${r.status}.`);
  }, { id: "dream-start", class: "primary" });
  return el("section", { class: "card form", id: "dream-panel" },
    el("h3", { text: "Dream now" }), el("label", { for: "dream-mode", text: "Mode" }), mode, el("div", { class: "actions" }, start), progress, out);
}

function receiptView(receipt) {
  const counts = Object.entries(receipt.counts).map(([k, v]) => `${v} ${k}`).join(", ") || "nothing";
  const list = (label, items) => items && items.length ? el("p", {}, el("strong", { text: label + ": " }), items.join(", ")) : null;
  return el("div", { class: "card receipt", id: receipt.applied ? "forget-done" : "forget-dry-run" },
    el("p", {}, badge(receipt.applied ? "erased" : "dry run", receipt.applied ? "retired" : "pending"), ` receipt ${receipt.id}: ${receipt.applied ? "erased" : "would erase"} ${counts}`),
    list("episodes", receipt.episodes), list("pages re-derived without them", receipt.pages_rederived),
    list("pages deleted", receipt.pages_deleted), list("scopes erased", receipt.scopes_erased), list("not found", receipt.not_found));
}

function forgetPanel(query) {
  const what = el("select", { id: "forget-what" },
    [["episodes", "episode ids (comma separated)"], ["page", "a page id"], ["subject", "a subject (every episode and page that names it)"], ["older_than", "older than (e.g. 400d)"], ["scope", "this whole brain"]]
      .map(([v, t]) => el("option", { value: v, text: t, selected: query.has(v) || null })));
  const value = el("input", { id: "forget-value", type: "text", value: query.get("episodes") || query.get("page") || "" });
  const reason = el("input", { id: "forget-reason", type: "text", placeholder: "why (kept in the receipt)" });
  const out = el("div", { id: "forget-result" });
  const request = (apply) => {
    const body = { scope: currentScope(), apply, reason: reason.value };
    if (what.value === "episodes") body.episodes = value.value.split(",").map((s) => s.trim()).filter(Boolean);
    else if (what.value !== "scope") body[what.value] = value.value.trim();
    return body;
  };
  const apply = actionButton("Erase for good", async () => {
    const ok = await confirmAction("Erase what the dry run listed? Erasure cannot be undone: the episodes and every byte derived from them go, leaving tombstones and this receipt.", "Erase");
    if (!ok) return;
    const receipt = await api("/v1/forget", { method: "POST", body: request(true) });
    out.replaceChildren(receiptView(receipt));
    flash(`Erased (receipt ${receipt.id}).`);
  }, { id: "forget-apply", class: "danger", hidden: true });
  const dry = actionButton("Show what would be erased", async () => {
    const receipt = await api("/v1/forget", { method: "POST", body: request(false) });
    out.replaceChildren(receiptView(receipt));
    apply.hidden = false;
  }, { id: "forget-dry-run-button" });
  for (const input of [what, value]) input.addEventListener("input", () => { apply.hidden = true; out.replaceChildren(); });
  return el("section", { class: "card form", id: "forget-panel" },
    el("h3", { text: "Forget (erasure)" }),
    muted("Dry run first: see exactly what would go, then erase. Needs an admin key."),
    el("label", { for: "forget-what", text: "What" }), what,
    el("label", { for: "forget-value", text: "Which" }), value,
    el("label", { for: "forget-reason", text: "Reason" }), reason,
    el("div", { class: "actions" }, dry, apply), out);
}

function showActions() {
  setActive("actions");
  const query = episodeQuery();
  render([
    heading(`Actions on ${scopeLabel()}`),
    can("write") ? dreamPanel() : muted("This key reads only: dreaming, undo, restore and edits need a write key."),
    can("admin") ? forgetPanel(query) : muted("Erasure needs an admin key (reverie keys create --rights admin)."),
  ]);
}

// -- stats ---------------------------------------------------------------------------------------

async function showStats() {
  setActive("stats");
  const stats = await api("/v1/stats", { params: { scope: currentScope() } });
  render([heading(`Stats of ${scopeLabel(stats.scope)}`), el("table", { id: "stats-table", class: "pairs" },
    el("tbody", {}, Object.entries(stats).map(([k, v]) => el("tr", {}, el("th", { scope: "row", text: k }), el("td", { class: "num", text: String(v) })))))]);
}
