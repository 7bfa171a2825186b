// Reverie console, the shell: log in with a key, learn what it may do, route by the hash.
"use strict";

const ROUTES = {
  inbox: () => showInbox(),
  plan: (arg) => showPlan(arg),
  recall: () => showRecall(),
  journal: () => showJournal(),
  cycle: (arg) => showCycle(arg),
  pages: () => showPages(),
  page: (arg) => showPage(arg),
  episodes: () => showEpisodes(),
  episode: (arg) => showEpisode(arg),
  actions: () => showActions(),
  stats: () => showStats(),
};

async function refreshInboxCount() {
  const count = document.getElementById("inbox-count");
  try {
    const pending = await api("/v1/plans", { params: { scope: currentScope(), status: "pending", limit: 100 } });
    count.textContent = pending.length ? String(pending.length) : "";
    count.hidden = !pending.length;
  } catch (err) {
    count.hidden = true;
  }
}

let routing = Promise.resolve();

/** Show the view the hash names. Routes run one after another, so a slow view started before
 * a later navigation can never paint over it: the last navigation is the last to render. */
function route() {
  routing = routing.then(showRoute, showRoute);
  return routing;
}

async function showRoute() {
  const hash = window.location.hash || "#/journal";
  if (!hash.startsWith("#/")) return; // an anchor inside the view, not a route
  const [path] = hash.slice(2).split("?");
  const [name, ...rest] = path.split("/");
  const arg = rest.length ? decodeURIComponent(rest.join("/")) : null;
  const show = ROUTES[name] && (arg || !["plan", "cycle", "page", "episode"].includes(name)) ? ROUTES[name] : ROUTES.journal;
  try {
    await show(arg);
    refreshInboxCount();
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return logout(err.message);
    view.replaceChildren(el("p", { class: "error", role: "alert", text: err.message }));
  }
  const title = view.querySelector("h2");
  document.title = "Reverie — " + (title ? title.textContent : "console");
}

async function start() {
  let me;
  try {
    me = await api("/v1/scopes");
  } catch (err) {
    return logout(err.message);
  }
  Object.assign(session, { rights: me.rights, boundTo: me.bound_to, scopes: me.scopes, orgs: me.orgs || [] });
  const select = document.getElementById("scope-select");
  select.replaceChildren(...me.scopes.map(scopeOption));
  const saved = sessionStorage.getItem(SCOPE);
  if (saved && me.scopes.includes(saved)) select.value = saved;
  document.getElementById("whoami").textContent = `key for ${me.bound_to} (${me.rights})`;
  document.body.dataset.rights = me.rights;
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
  Object.assign(session, { rights: "read", boundTo: "", scopes: [], orgs: [] });
  document.getElementById("nav").hidden = true;
  document.getElementById("login").hidden = false;
  document.getElementById("login-error").textContent = message || "";
  view.replaceChildren();
}

let resizing = null;
window.addEventListener("resize", () => {
  clearTimeout(resizing);
  resizing = setTimeout(() => redraws.forEach((draw) => draw()), 150);
});

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
