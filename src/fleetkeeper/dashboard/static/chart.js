// fleetkeeper dashboard: helpers for building the page, and the replicas-over-time chart.
//
// Nothing here writes HTML from data: elements are built one by one and data goes in as text,
// so a name or a message can never become markup. The chart reads timeline entries as
// `fleetkeeper describe binding --chart` does: each Scheduled entry's "scheduled to {a:1, b:2}"
// sets that binding's replicas per cluster (its first one's "(was {…})" holds until then), and
// the marks are a cluster going down, tainted NoExecute, a binding evicted from it, and the
// eviction completed once the replacement was healthy.
"use strict";

(function (FK) {
  FK.h = function (tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name.startsWith("on")) el.addEventListener(name.slice(2), value);
      else if (name === "class") el.className = value;
      else if (name === "text") el.textContent = value;
      else el.setAttribute(name, value === true ? "" : String(value));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      el.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return el;
  };

  FK.ago = function (iso) {
    if (!iso) return "";
    const seconds = Math.max(0, (Date.now() - Date.parse(iso)) / 1000);
    if (seconds < 90) return Math.round(seconds) + "s";
    if (seconds < 5400) return Math.round(seconds / 60) + "m";
    if (seconds < 129600) return Math.round(seconds / 3600) + "h";
    return Math.round(seconds / 86400) + "d";
  };

  const RESULT = /scheduled to \{([^}]*)\}(?: \(was \{([^}]*)\}\))?/;
  const FROM = /from (\S+?)[\s:,)]/;
  FK.MARK_KINDS = ["down", "tainted", "evicted", "healthy"];
  const MARK_COLOURS = { down: "#d62728", tainted: "#ff7f0e", evicted: "#9467bd", healthy: "#2ca02c" };
  const PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"];

  FK.parseResult = function (text) {
    const out = {};
    for (const part of (text || "").split(",")) {
      const m = /^\s*([^:,\s]+):(\d+)\s*$/.exec(part);
      if (m) out[m[1]] = Number(m[2]);
    }
    return out;
  };

  FK.subjectOf = function (entry) {
    const s = entry.subject || {};
    return s.kind === "Cluster" ? "cluster/" + s.name : s.kind + "/" + (s.namespace || "") + "/" + s.name;
  };

  function markOf(entry) {
    const s = entry.subject || {};
    const message = entry.message || "";
    if (s.kind === "Cluster" && entry.action === "ConditionChanged" && /^Ready=(False|Unknown)\b/.test(message))
      return { cluster: s.name, kind: "down" };
    if (s.kind === "Cluster" && entry.action === "TaintAdded" && message.includes(":NoExecute"))
      return { cluster: s.name, kind: "tainted" };
    const from = FROM.exec(message + " ");
    if (entry.action === "EvictionStarted" && from) return { cluster: from[1], kind: "evicted" };
    if (entry.action === "EvictionCompleted" && from) return { cluster: from[1], kind: "healthy" };
    return null;
  }

  // An RFC 3339 time as seconds since the epoch, to the microsecond as the entries carry it
  // (Date.parse keeps milliseconds only: entries a few microseconds apart would tie and a
  // difference could round the other way than `--chart` rounds it).
  FK.seconds = function (iso) {
    const m = /^([^.]*?)(\.\d+)?(Z|[+-]\d\d:\d\d)$/i.exec(iso || "");
    if (!m) return NaN;
    return Date.parse(m[1] + m[3]) / 1000 + Number("0" + (m[2] || "").slice(0, 7));
  };

  // entries (TimelineEntry objects) → {series: {cluster: [[t, replicas]…]}, marks: [{t, cluster, kind}], end}
  // A cluster is at 0 replicas from the start until a result gives it some.
  FK.buildChart = function (entries) {
    const timed = entries.map((e) => [FK.seconds(e.time), e]).filter(([t]) => !isNaN(t));
    timed.sort((a, b) => a[0] - b[0]);
    const start = timed.length ? timed[0][0] : 0;
    const placed = new Map();
    for (const [, e] of timed) {
      const m = e.action === "Scheduled" && RESULT.exec(e.message || "");
      if (m && !placed.has(FK.subjectOf(e))) placed.set(FK.subjectOf(e), FK.parseResult(m[2] || ""));
    }
    const total = (c) => Array.from(placed.values()).reduce((n, p) => n + (p[c] || 0), 0);
    const series = {};
    for (const p of placed.values()) for (const c of Object.keys(p)) series[c] = [[0, total(c)]];
    const ensure = (c) => { if (!series[c]) series[c] = [[0, 0]]; };
    const marks = [];
    let end = 0;
    for (const [when, e] of timed) {
      const t = when - start;
      end = t;
      const mark = markOf(e);
      if (mark) { marks.push({ t, ...mark }); ensure(mark.cluster); }
      if ((e.subject || {}).kind === "Cluster") ensure(e.subject.name);
      const m = e.action === "Scheduled" && RESULT.exec(e.message || "");
      if (!m) continue;
      placed.set(FK.subjectOf(e), FK.parseResult(m[1]));
      for (const p of placed.values()) Object.keys(p).forEach(ensure);
      for (const [c, points] of Object.entries(series)) {
        const value = total(c);
        const last = points[points.length - 1];
        if (last[0] === t) last[1] = value;
        else if (last[1] !== value) points.push([t, value]);
      }
    }
    return { series, marks, start, end: Math.max(end, 1) };
  };

  function svg(tag, attrs, ...children) {
    const el = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, String(v));
    for (const c of children) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
    return el;
  }

  FK.drawChart = function (chart, nowSeconds) {
    const W = 720, H = 300, L = 40, R = 120, T = 16, B = 34;
    const pw = W - L - R, ph = H - T - B;
    const end = Math.max(chart.end, nowSeconds || 0, 1);
    const clusters = Object.keys(chart.series).sort();
    const top = Math.max(1, ...clusters.flatMap((c) => chart.series[c].map((p) => p[1])));
    const x = (t) => L + (pw * t) / end;
    const y = (v) => T + ph - (ph * v) / top;
    const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart", role: "img" },
      svg("title", {}, "replicas per cluster over time"),
      svg("rect", { x: L, y: T, width: pw, height: ph, fill: "none", stroke: "#999" }));
    for (let v = 0; v <= top; v += Math.max(1, Math.ceil(top / 5)))
      root.append(svg("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end" }, v));
    for (let i = 0; i <= 5; i++)
      root.append(svg("text", { x: x((end * i) / 5), y: H - B + 16, "text-anchor": "middle" },
        Math.round((end * i) / 5) + "s"));
    for (const m of chart.marks)
      root.append(svg("g", { class: "mark", "data-kind": m.kind, "data-cluster": m.cluster },
        svg("title", {}, `${m.cluster} ${m.kind} at ${Math.round(m.t)}s`),
        svg("line", { x1: x(m.t), x2: x(m.t), y1: T, y2: T + ph, stroke: MARK_COLOURS[m.kind],
          "stroke-dasharray": "4 3" })));
    clusters.forEach((c, i) => {
      const colour = PALETTE[i % PALETTE.length];
      const points = chart.series[c];
      const coords = [];
      points.forEach(([t, v], j) => {
        if (j) coords.push(`${x(t)},${y(points[j - 1][1])}`);
        coords.push(`${x(t)},${y(v)}`);
      });
      coords.push(`${x(end)},${y(points[points.length - 1][1])}`);
      root.append(svg("g", { class: "series", "data-cluster": c },
        svg("polyline", { points: coords.join(" "), fill: "none", stroke: colour, "stroke-width": 2 })));
      root.append(svg("rect", { x: W - R + 10, y: T + 16 * i, width: 10, height: 10, fill: colour }),
        svg("text", { x: W - R + 24, y: T + 9 + 16 * i }, c));
    });
    FK.MARK_KINDS.forEach((kind, i) => {
      const yy = T + 16 * (clusters.length + 1 + i);
      root.append(svg("line", { x1: W - R + 10, x2: W - R + 20, y1: yy + 5, y2: yy + 5,
        stroke: MARK_COLOURS[kind], "stroke-dasharray": "4 3" }),
      svg("text", { x: W - R + 24, y: yy + 9 }, kind));
    });
    return root;
  };
})(window.FK || (window.FK = {}));
