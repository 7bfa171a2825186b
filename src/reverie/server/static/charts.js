// Reverie console, pictures: time series, bars per cycle and a page's provenance graph, drawn
// as plain SVG at the width of their box (redrawn when the window is resized), with axes,
// ticks and dates. Labels are SVG text nodes (textContent), never markup. A picture with
// nothing but zeros to draw says why instead (its spec's `empty`).
"use strict";

const COLORS = { episodes: "#4b5bd6", pages: "#1a9e6f", active: "#0b7d8c", ratio: "#c2410c", calls: "#7c3aed", hits: "#a3a3c2", tokens: "#b45309", hit: "#13795b", miss: "#c4544b" };
const PAD = { left: 46, right: 46, top: 18, bottom: 34 };
const HOUR = 3600e3, DAY = 24 * HOUR;
const TIME_STEPS = [HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, DAY, 2 * DAY, 7 * DAY, 14 * DAY, 30 * DAY, 91 * DAY, 365 * DAY];

/** A round step (1, 2 or 5 times a power of ten) that cuts `span` into about `count` parts. */
function niceStep(span, count) {
  const raw = Math.max(span, 1e-9) / Math.max(count, 1);
  const power = Math.pow(10, Math.floor(Math.log10(raw)));
  const unit = [1, 2, 5, 10].find((m) => m * power >= raw) || 10;
  return unit * power;
}

/** Ticks from 0 to at least `max`: the axis top is the last tick. */
function valueTicks(max, count) {
  const step = niceStep(max || 1, count);
  const top = Math.max(step, Math.ceil((max || 1) / step) * step);
  const ticks = [];
  for (let v = 0; v <= top + step / 2; v += step) ticks.push(Number(v.toFixed(6)));
  return ticks;
}

/** Date ticks between t0 and t1 (ms), at most one per `room` pixels of `width`. */
function timeTicks(t0, t1, width, room) {
  const most = Math.max(2, Math.floor(width / room));
  const span = Math.max(t1 - t0, HOUR);
  const step = TIME_STEPS.find((s) => span / s <= most) || TIME_STEPS[TIME_STEPS.length - 1];
  const first = Math.ceil(t0 / step) * step;
  const ticks = [];
  for (let t = first; t <= t1; t += step) ticks.push(t);
  if (!ticks.length) ticks.push(t0);
  const label = (t) => {
    const d = new Date(t);
    return step < DAY ? `${fmt.day(d)} ${String(d.getUTCHours()).padStart(2, "0")}:00` : fmt.day(d);
  };
  return ticks.map((t) => ({ t, label: label(t) }));
}

/** Say why a picture has nothing to draw (``spec.empty``) instead of drawing empty axes;
 * true when it did. */
function saidEmpty(container, spec, values) {
  if (values.some((v) => v)) return false;
  container.replaceChildren(el("p", { class: "muted chart-empty", text: spec.empty || "Nothing to draw yet." }));
  return true;
}

function chartBox(container, height) {
  const width = Math.max(260, Math.floor(container.clientWidth || 600));
  const root = svg("svg", { width, height, viewBox: `0 0 ${width} ${height}`, class: "chart" });
  container.replaceChildren(root);
  return { root, width, height, plotW: width - PAD.left - PAD.right, plotH: height - PAD.top - PAD.bottom };
}

function yAxis(box, ticks, side, label, color) {
  const { root, width, height } = box;
  const x = side === "left" ? PAD.left : width - PAD.right;
  const top = ticks[ticks.length - 1];
  const y = (v) => height - PAD.bottom - (v / top) * box.plotH;
  root.append(svg("line", { x1: x, y1: PAD.top, x2: x, y2: height - PAD.bottom, stroke: "#9aa1b1" }));
  for (const v of ticks) {
    if (side === "left") root.append(svg("line", { x1: PAD.left, x2: width - PAD.right, y1: y(v), y2: y(v), stroke: "#eceef3" }));
    const anchor = side === "left" ? "end" : "start";
    const tx = side === "left" ? x - 6 : x + 6;
    root.append(svg("text", { x: tx, y: y(v) + 4, "text-anchor": anchor, class: "tick", fill: color || "#555c6e" }, String(v)));
  }
  const lx = side === "left" ? 4 : width - 4;
  root.append(svg("text", { x: lx, y: 12, "text-anchor": side === "left" ? "start" : "end", class: "axis-label", fill: color || "#555c6e" }, label));
  return y;
}

function timeAxis(box, t0, t1) {
  const { root, height } = box;
  const span = Math.max(t1 - t0, 1);
  const x = (t) => PAD.left + ((t - t0) / span) * box.plotW;
  const base = height - PAD.bottom;
  root.append(svg("line", { x1: PAD.left, y1: base, x2: box.width - PAD.right, y2: base, stroke: "#9aa1b1" }));
  for (const tick of timeTicks(t0, t1, box.plotW, 80)) {
    root.append(svg("line", { x1: x(tick.t), x2: x(tick.t), y1: base, y2: base + 5, stroke: "#9aa1b1", class: "x-tick" }));
    root.append(svg("text", { x: x(tick.t), y: base + 18, "text-anchor": "middle", class: "tick" }, tick.label));
  }
  return x;
}

function legend(items) {
  return el("p", { class: "legend" }, items.map(([label, color]) =>
    el("span", {}, el("i", { style: "background:" + color }), label)));
}

/** Lines over time. `series`: [{key, label, color, axis: "left"|"right", points: [{t, v, title}]}]. */
function timeChart(container, spec) {
  const all = spec.series.flatMap((s) => s.points);
  if (saidEmpty(container, spec, all.map((p) => p.v))) return;
  const box = chartBox(container, spec.height || 240);
  let t0 = Math.min(...all.map((p) => p.t)), t1 = Math.max(...all.map((p) => p.t));
  if (t1 - t0 < HOUR) { t0 -= HOUR / 2; t1 += HOUR / 2; }
  const x = timeAxis(box, t0, t1);
  const scales = {};
  for (const side of ["left", "right"]) {
    const mine = spec.series.filter((s) => s.axis === side);
    if (!mine.length) continue;
    const max = Math.max(...mine.flatMap((s) => s.points.map((p) => p.v)));
    scales[side] = yAxis(box, valueTicks(max, 4), side, spec[side + "Label"], side === "right" ? mine[0].color : null);
  }
  for (const s of spec.series) {
    const y = scales[s.axis];
    const points = s.points.map((p) => `${x(p.t).toFixed(1)},${y(p.v).toFixed(1)}`).join(" ");
    box.root.append(svg("polyline", { points, fill: "none", stroke: s.color, "stroke-width": 2, "data-series": s.key }));
    for (const p of s.points) {
      const dot = svg("circle", { cx: x(p.t), cy: y(p.v), r: 3, fill: s.color });
      dot.append(svg("title", {}, p.title || `${s.label}: ${p.v}`));
      box.root.append(dot);
    }
  }
  container.append(legend(spec.series.map((s) => [s.label, s.color])));
}

/** Grouped bars, one group per cycle, dated under the axis. `groups`: [{t, label, values: {key: v}}]. */
function barChart(container, spec) {
  const groups = spec.groups;
  const keys = spec.series.map((s) => s.key);
  if (saidEmpty(container, spec, groups.flatMap((g) => keys.map((k) => g.values[k])))) return;
  const box = chartBox(container, spec.height || 220);
  const max = Math.max(...groups.flatMap((g) => keys.map((k) => g.values[k] || 0)));
  const y = yAxis(box, valueTicks(max, 4), "left", spec.leftLabel);
  const slot = box.plotW / groups.length;
  const barW = Math.max(2, Math.min(28, (slot * 0.8) / keys.length));
  const base = box.height - PAD.bottom;
  box.root.append(svg("line", { x1: PAD.left, y1: base, x2: box.width - PAD.right, y2: base, stroke: "#9aa1b1" }));
  const every = Math.max(1, Math.ceil(groups.length / Math.max(1, Math.floor(box.plotW / 70))));
  groups.forEach((g, i) => {
    const mid = PAD.left + slot * (i + 0.5);
    spec.series.forEach((s, j) => {
      const v = g.values[s.key] || 0;
      const left = mid - (keys.length * barW) / 2 + j * barW;
      const bar = svg("rect", { x: left, y: y(v), width: barW - 1, height: base - y(v), fill: s.color, "data-series": s.key, class: "bar" });
      bar.append(svg("title", {}, `${g.label}: ${s.label} ${v}`));
      box.root.append(bar);
    });
    if (i % every === 0) {
      box.root.append(svg("line", { x1: mid, x2: mid, y1: base, y2: base + 5, stroke: "#9aa1b1", class: "x-tick" }));
      box.root.append(svg("text", { x: mid, y: base + 18, "text-anchor": "middle", class: "tick" }, fmt.day(new Date(g.t))));
    }
  });
  container.append(legend(spec.series.map((s) => [s.label, s.color])));
}

function node(root, { x, y, w, label, href, cls, title }) {
  const group = href ? svg("a", { href, class: "graph-node " + cls }) : svg("g", { class: "graph-node " + cls });
  group.append(svg("rect", { x, y: y - 11, width: w, height: 22, rx: 5 }));
  group.append(svg("text", { x: x + 6, y: y + 4 }, label));
  group.append(svg("title", {}, title || label));
  root.append(group);
}

/** page → its revisions → the episodes each revision cites, in three columns. */
function provenanceGraph(container, lineage) {
  const revisions = lineage.revisions.slice().reverse();
  const episodes = lineage.episodes;
  const rowH = 28;
  const rows = Math.max(revisions.length, episodes.length, 1);
  const box = chartBox(container, rows * rowH + 30);
  box.root.setAttribute("class", "chart graph");
  box.root.setAttribute("role", "group");
  box.root.setAttribute("aria-label", `provenance of ${lineage.page.revision.title}`);
  const colW = box.width / 3;
  const nodeW = colW - 14;
  const chars = Math.max(6, Math.floor((nodeW - 12) / 6.6));
  const yOf = (i) => 20 + i * rowH;
  const pageY = yOf((rows - 1) / 2);
  const revY = new Map(revisions.map((r, i) => [r.number, yOf(i)]));
  const epY = new Map(episodes.map((e, i) => [e.id, yOf(i)]));
  for (const r of revisions) {
    box.root.append(svg("path", { d: `M${nodeW + 4},${pageY} C${colW},${pageY} ${colW - 10},${revY.get(r.number)} ${colW + 4},${revY.get(r.number)}`, class: "edge" }));
    const cited = new Set(r.claims.flatMap((c) => c.episode_ids));
    for (const id of cited) {
      if (!epY.has(id)) continue;
      const y0 = revY.get(r.number), y1 = epY.get(id);
      box.root.append(svg("path", { d: `M${colW + nodeW + 4},${y0} C${2 * colW},${y0} ${2 * colW - 10},${y1} ${2 * colW + 4},${y1}`, class: "edge cites", "data-from": String(r.number), "data-to": id }));
    }
  }
  const title = lineage.page.revision.title;
  node(box.root, { x: 4, y: pageY, w: nodeW, label: fmt.short(title, chars), cls: "page", title });
  for (const r of revisions) {
    const label = fmt.short(`rev ${r.number} · ${r.author} · ${r.status}`, chars);
    node(box.root, { x: colW + 4, y: revY.get(r.number), w: nodeW, label, href: "#revision-" + r.number, cls: "revision", title: `${label} · ${fmt.when(r.created_at)}` });
  }
  for (const e of episodes) {
    const label = fmt.short(`${e.id} · ${e.outcome}`, chars);
    node(box.root, { x: 2 * colW + 4, y: epY.get(e.id), w: nodeW, label, href: episodeHref(e.id), cls: "episode " + e.outcome, title: `${e.id}: ${e.situation}` });
  }
}
