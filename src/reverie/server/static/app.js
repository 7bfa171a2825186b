// Reverie dashboard: plain JS, no build step, no external resources.
// Every string from the API is untrusted (episode and page text): it is only ever set as
// textContent or an attribute value, never parsed as HTML.
"use strict";

const KEY = "reverie.apiKey";
const SCOPE = "reverie.scope";
const view = document.getElementById("view");

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined) continue;
    if (name === "text") node.textContent = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function svg(tag, attrs) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, value);
  return node;
}

class ApiError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

async function api(path, params) {
  const url = new URL(path, window.location.origin);
  for (const [k, v] of Object.entries(params || {})) url.searchParams.set(k, v);
  const response = await fetch(url, { headers: { Authorization: "Bearer " + sessionStorage.getItem(KEY) } });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) {
    const message = (body.error && body.error.message) || response.statusText;
    throw new ApiError(response.status, message);
  }
  return body;
}

const fmt = {
  when: (iso) => (iso ? iso.replace("T", " ").slice(0, 16) : "—"),
  secs: (s) => (s === null || s === undefined ? "—" : s < 1 ? (s * 1000).toFixed(0) + " ms" : s.toFixed(2) + " s"),
  num: (n) => (n === null || n === undefined ? "—" : String(n)),
};

function currentScope() { return document.getElementById("scope-select").value; }

function table(headers, rows) {
  return el("table", {},
    el("thead", {}, el("tr", {}, headers.map(([label, cls]) => el("th", { class: cls || null, text: label })))),
    el("tbody", {}, rows));
}

function setActive(name) {
  for (const link of document.querySelectorAll("nav a")) {
    link.classList.toggle("active", link.id === "nav-" + name);
  }
}

// -- journal ------------------------------------------------------------------------------------

function chart(series) {
  const box = el("div", { id: "journal-chart" });
  const w = 900, h = 240, pad = 40;
  const root = svg("svg", { viewBox: `0 0 ${w} ${h}`, role: "img", "aria-label": "episodes, pages and compression over time" });
  const n = Math.max(series.length - 1, 1);
  const x = (i) => pad + (i * (w - 2 * pad)) / n;
  const maxCount = Math.max(1, ...series.map((p) => Math.max(p.episodes, p.pages)));
  const maxRatio = Math.max(1, ...series.map((p) => p.compression));
  const yCount = (v) => h - pad - (v * (h - 2 * pad)) / maxCount;
  const yRatio = (v) => h - pad - (v * (h - 2 * pad)) / maxRatio;
  root.append(svg("line", { x1: pad, y1: h - pad, x2: w - pad, y2: h - pad, stroke: "#999" }));
  const lines = [
    ["episodes", "#4b5bd6", yCount, "episodes consolidated"],
    ["pages", "#1a9e6f", yCount, "pages created"],
    ["compression", "#d9822b", yRatio, "episodes per page"],
  ];
  for (const [field, color, y, label] of lines) {
    const points = series.map((p, i) => `${x(i)},${y(p[field])}`).join(" ");
    root.append(svg("polyline", { points, fill: "none", stroke: color, "stroke-width": 2, "data-series": field }));
    series.forEach((p, i) => {
      const dot = svg("circle", { cx: x(i), cy: y(p[field]), r: 3, fill: color });
      const title = svg("title", {});
      title.textContent = `${label}: ${p[field]} (${fmt.when(p.at)})`;
      dot.append(title);
      root.append(dot);
    });
  }
  const left = svg("text", { x: 4, y: pad - 8, "font-size": 11, fill: "#666" });
  left.textContent = `count (max ${maxCount})`;
  const right = svg("text", { x: w - pad - 110, y: pad - 8, "font-size": 11, fill: "#666" });
  right.textContent = `episodes/page (max ${maxRatio})`;
  const first = svg("text", { x: pad, y: h - pad + 16, "font-size": 11, fill: "#666" });
  first.textContent = fmt.when(series[0].at);
  const last = svg("text", { x: w - pad, y: h - pad + 16, "font-size": 11, fill: "#666", "text-anchor": "end" });
  last.textContent = fmt.when(series[series.length - 1].at);
  root.append(left, right, first, last);
  const legend = el("p", { class: "legend" }, lines.map(([, color, , label]) =>
    el("span", {}, el("i", { style: "background:" + color }), label)));
  box.append(root, legend);
  return box;
}

function cycleRow(c) {
  const changes = `${c.created} created, ${c.revised} revised, ${c.merged} merged`;
  return el("tr", { class: "cycle-row", "data-cycle": c.cycle_id },
    el("td", {}, fmt.when(c.started_at)),
    el("td", {}, el("code", { text: c.cycle_id })),
    el("td", {}, el("span", { class: "badge " + (c.undone ? "undone" : c.status), text: c.undone ? "undone" : c.status })),
    el("td", { class: "num", text: fmt.secs(c.duration_s) }),
    el("td", { class: "num", text: fmt.num(c.scanned) }),
    el("td", { class: "num", text: fmt.num(c.collected) }),
    el("td", { class: "num", text: fmt.num(c.episodes_marked) }),
    el("td", { text: changes }),
    el("td", { class: "num", text: fmt.num(c.compression) }),
    el("td", { class: "muted", text: Object.entries(c.timings || {}).map(([k, v]) => `${k} ${fmt.secs(v)}`).join(", ") }));
}

async function showJournal() {
  setActive("journal");
  const data = await api("/v1/journal", { scope: currentScope() });
  view.replaceChildren(
    el("h2", { text: `Dream journal of ${data.scope}` }),
    data.series.length ? chart(data.series) : el("p", { class: "muted", text: "No cycles yet." }),
    table([["started"], ["cycle"], ["status"], ["took", "num"], ["scanned", "num"], ["collected", "num"],
      ["consolidated", "num"], ["pages"], ["ep/page", "num"], ["timings"]],
    data.cycles.map(cycleRow)));
}

// -- pages --------------------------------------------------------------------------------------

async function showPages() {
  setActive("pages");
  const pages = await api("/v1/pages", { scope: currentScope(), status: "all" });
  const rows = pages.map((p) => el("tr", {},
    el("td", {}, el("a", { class: "page-link", href: "#/page/" + encodeURIComponent(p.id), text: p.revision.title })),
    el("td", {}, el("span", { class: "badge", text: p.revision.kind })),
    el("td", {}, el("span", { class: "badge " + p.revision.status, text: p.revision.status })),
    el("td", { class: "num", text: p.revision.confidence.toFixed(2) }),
    el("td", { class: "num", text: String(p.revision.number) }),
    el("td", { text: fmt.when(p.updated_at) })));
  view.replaceChildren(el("h2", { text: `Pages of ${currentScope()} (${pages.length})` }),
    table([["title"], ["kind"], ["status"], ["confidence", "num"], ["rev", "num"], ["updated"]], rows));
}

function claimList(claims) {
  return el("ul", { class: "claims" }, claims.map((c) => el("li", {}, c.text,
    c.episode_ids.map((id) => el("a", { class: "citation-link", href: "#/episode/" + encodeURIComponent(id), text: "[" + id + "]" })))));
}

function revisionCard(r) {
  return el("details", { class: "card revision", "data-revision": r.number },
    el("summary", {}, `rev ${r.number} · ${r.status} · confidence ${r.confidence.toFixed(2)} · ${fmt.when(r.created_at)} · ${r.author}`,
      r.cycle_id ? el("span", { class: "muted", text: " · cycle " + r.cycle_id }) : null),
    r.reason ? el("p", { class: "muted", text: r.reason }) : null,
    claimList(r.claims));
}

async function showPage(pageId) {
  setActive("pages");
  const lineage = await api("/v1/pages/" + encodeURIComponent(pageId) + "/why");
  const r = lineage.page.revision;
  const episodes = lineage.episodes.map((e) => el("tr", {},
    el("td", {}, el("a", { class: "citation-link", href: "#/episode/" + encodeURIComponent(e.id), text: e.id })),
    el("td", { text: fmt.when(e.created_at) }),
    el("td", { text: e.outcome }),
    el("td", { text: e.situation })));
  view.replaceChildren(
    el("h2", { id: "page-title", text: r.title }),
    el("p", { class: "muted", text: `${r.kind} · ${r.status} · confidence ${r.confidence.toFixed(2)} · rev ${r.number} · ${lineage.page.id}` }),
    el("div", { class: "card", id: "page-body" }, claimList(r.claims)),
    el("h2", { text: `Revisions (${lineage.revisions.length})` }),
    el("div", { id: "revisions" }, lineage.revisions.slice().reverse().map(revisionCard)),
    el("h2", { text: `Provenance: ${lineage.episodes.length} cited episodes` }),
    table([["episode"], ["when"], ["outcome"], ["situation"]], episodes));
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
  const e = await api("/v1/episodes/" + encodeURIComponent(episodeId));
  const fields = el("dl", { class: "fields" }, EPISODE_FIELDS.flatMap((f) => [el("dt", { text: f }), el("dd", { "data-field": f, text: shown(e[f]) })]));
  const back = e.consolidated_in ? el("p", {}, "Consolidated in cycle ", el("code", { text: e.consolidated_in })) : null;
  view.replaceChildren(el("section", { id: "episode-view", class: "card" },
    el("h2", { text: "Episode " + e.id }), fields, back));
}

// -- stats --------------------------------------------------------------------------------------

async function showStats() {
  setActive("stats");
  const stats = await api("/v1/stats", { scope: currentScope() });
  const rows = Object.entries(stats).map(([k, v]) => el("tr", {}, el("th", { text: k }), el("td", { class: "num", text: String(v) })));
  view.replaceChildren(el("h2", { text: `Stats of ${stats.scope}` }), el("table", { id: "stats-table" }, el("tbody", {}, rows)));
}

// -- shell --------------------------------------------------------------------------------------

async function route() {
  const [, name, arg] = (window.location.hash || "#/journal").split("/");
  try {
    if (name === "page" && arg) await showPage(decodeURIComponent(arg));
    else if (name === "episode" && arg) await showEpisode(decodeURIComponent(arg));
    else if (name === "pages") await showPages();
    else if (name === "stats") await showStats();
    else await showJournal();
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return logout(err.message);
    view.replaceChildren(el("p", { class: "error", role: "alert", text: err.message }));
  }
}

async function start() {
  let me;
  try {
    me = await api("/v1/scopes");
  } catch (err) {
    return logout(err.message);
  }
  const select = document.getElementById("scope-select");
  select.replaceChildren(...me.scopes.map((s) => el("option", { value: s, text: s })));
  const saved = sessionStorage.getItem(SCOPE);
  if (saved && me.scopes.includes(saved)) select.value = saved;
  document.getElementById("whoami").textContent = `key for ${me.bound_to} (${me.rights})`;
  document.getElementById("login").hidden = true;
  document.getElementById("nav").hidden = false;
  if (!me.scopes.length) {
    view.replaceChildren(el("p", { class: "muted", text: "This key's tenant has no episodes yet." }));
    return;
  }
  await route();
}

function logout(message) {
  sessionStorage.removeItem(KEY);
  document.getElementById("nav").hidden = true;
  document.getElementById("login").hidden = false;
  document.getElementById("login-error").textContent = message || "";
  view.replaceChildren();
}

document.getElementById("login-form").addEventListener("submit", (event) => {
  event.preventDefault();
  sessionStorage.setItem(KEY, document.getElementById("login-key").value.trim());
  start();
});
document.getElementById("logout").addEventListener("click", () => logout(""));
document.getElementById("scope-select").addEventListener("change", () => {
  sessionStorage.setItem(SCOPE, currentScope());
  route();
});
window.addEventListener("hashchange", route);

if (sessionStorage.getItem(KEY)) start(); else logout("");
