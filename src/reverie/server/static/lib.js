// Reverie console, shared helpers: DOM building, the API client, formatting, dialogs.
// Plain JS, no build step, nothing loaded from elsewhere. Every string from the API is
// untrusted (episode and page text): it is only ever set as textContent or an attribute
// value, never parsed as HTML.
"use strict";

const KEY = "reverie.apiKey";
const SCOPE = "reverie.scope";
const RIGHTS = ["read", "write", "admin"];
const session = { rights: "read", boundTo: "", scopes: [], orgs: [] };

/** Whether the key logged in may do what needs `right` (read < write < admin). */
function can(right) {
  return RIGHTS.indexOf(session.rights) >= RIGHTS.indexOf(right);
}

/** `node` when the key may do what needs `right`, else nothing: the UI hides what a key cannot do. */
function needs(right, node) {
  return can(right) ? node : null;
}

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "text") node.textContent = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function svg(tag, attrs, text) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value !== null && value !== undefined) node.setAttribute(name, value);
  }
  if (text !== undefined) node.textContent = text;
  return node;
}

class ApiError extends Error {
  constructor(status, message, code) { super(message); this.status = status; this.code = code; }
}

/** Call the API with the session's key; throws ApiError with the service's own message. */
async function api(path, options) {
  const { params, method, body } = options || {};
  const url = new URL(path, window.location.origin);
  for (const [k, v] of Object.entries(params || {})) {
    if (v !== null && v !== undefined && v !== "") url.searchParams.set(k, v);
  }
  const headers = { Authorization: "Bearer " + sessionStorage.getItem(KEY) };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(url, {
    method: method || "GET", headers, body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    const error = data.error || {};
    throw new ApiError(response.status, error.message || response.statusText, error.code);
  }
  return data;
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

const fmt = {
  when: (iso) => (iso ? iso.replace("T", " ").slice(0, 16) : "—"),
  day: (date) => `${MONTHS[date.getUTCMonth()]} ${date.getUTCDate()}`,
  secs: (s) => (s === null || s === undefined ? "—" : s < 1 ? (s * 1000).toFixed(0) + " ms" : s.toFixed(2) + " s"),
  num: (n) => (n === null || n === undefined ? "—" : String(n)),
  score: (n) => (n === null || n === undefined ? "—" : Number(n).toFixed(3)),
  short: (text, n) => (text.length > n ? text.slice(0, n - 1) + "…" : text),
};

function currentScope() { return document.getElementById("scope-select").value; }

/** A scope as headings name it: an org brain says what it is (no agent of that name exists). */
function scopeLabel(key) {
  const scope = key || currentScope();
  return session.orgs.includes(scope) ? `${scope} (org brain, internal)` : scope;
}

/** A scope as the brain menu offers it. */
function scopeOption(key) {
  const org = session.orgs.includes(key);
  return el("option", { value: key, text: scopeLabel(key), title: org ? "internal: what promotion copies from the tenant's agents, who all recall it" : null });
}

function link(href, text, cls) { return el("a", { href, class: cls || null, text }); }
function pageHref(id) { return "#/page/" + encodeURIComponent(id); }
function episodeHref(id) { return "#/episode/" + encodeURIComponent(id); }
function cycleHref(id) { return "#/cycle/" + encodeURIComponent(id); }
function badge(text, cls) { return el("span", { class: "badge " + (cls || text), text }); }

/** A table that becomes a list of labelled rows on a narrow screen (each cell says its column). */
function table(headers, rows, attrs) {
  return el("table", attrs || {},
    el("thead", {}, el("tr", {}, headers.map(([label, cls]) => el("th", { class: cls || null, scope: "col", text: label })))),
    el("tbody", {}, rows));
}

/** One row of `table`: cells are [column label, content, class]. */
function row(cells, attrs) {
  return el("tr", attrs || {}, cells.map(([label, content, cls]) =>
    el("td", { "data-label": label, class: cls || null }, content)));
}

function heading(text, id) { return el("h2", { id: id || null, text }); }
function muted(text) { return el("p", { class: "muted", text }); }

/** Say something in the live region everyone (screen readers too) hears. */
function flash(message, kind) {
  const box = document.getElementById("flash");
  box.className = kind || "ok";
  box.textContent = message;
}

/** Ask to confirm a destructive action in the page's own modal dialog; resolves true or false. */
function confirmAction(message, okLabel) {
  const dialog = document.getElementById("confirm");
  document.getElementById("confirm-text").textContent = message;
  document.getElementById("confirm-ok").textContent = okLabel || "Yes, do it";
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true });
    dialog.returnValue = "";
    dialog.showModal();
  });
}

/** A button that runs `action`, disabled while it runs, its failure said in the live region. */
function actionButton(label, action, attrs) {
  const button = el("button", { type: "button", ...(attrs || {}) }, label);
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      await action();
    } catch (err) {
      flash(err.message, "error");
    } finally {
      button.disabled = false;
    }
  });
  return button;
}

function claimList(claims, attrs) {
  return el("ul", { class: "claims", ...(attrs || {}) }, claims.map((c) => el("li", { class: c.pinned ? "pinned" : null },
    c.pinned ? el("span", { class: "badge pinned", title: "written by a person: cycles keep it", text: "pinned" }) : null,
    c.text,
    c.episode_ids.map((id) => el("a", { class: "citation-link", href: episodeHref(id), text: "[" + id + "]" })))));
}
