// fleetkeeper dashboard: the Fleet, Workloads and Workload views, drawn from the watched collections.
"use strict";

(function (FK) {
  const h = FK.h;

  FK.refused = function (collection, what) {
    if (!collection || !collection.error) return null;
    const e = collection.error;
    const why = e.status === 403 ? "this token may not list " + what : "cannot list " + what;
    return h("p", { class: "notice", "data-status": e.status, text: `${why} (${e.status}: ${e.message})` });
  };

  FK.condition = (obj, type) => ((obj.status || {}).conditions || []).find((c) => c.type === type);

  FK.readiness = function (cluster) {
    const c = FK.condition(cluster, "Ready");
    const state = !c ? "Unknown" : c.status === "True" ? "Ready" : c.status === "False" ? "NotReady" : "Unknown";
    return { state, since: c ? c.lastTransitionTime : "", reason: c ? c.reason : "" };
  };

  const UNITS = { n: 1e-9, u: 1e-6, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
    Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4, Pi: 1024 ** 5, Ei: 1024 ** 6 };
  FK.quantity = function (text) {
    const m = /^([0-9.]+)([a-zA-Z]*)$/.exec(String(text === undefined ? "" : text).trim());
    if (!m) return NaN;
    return Number(m[1]) * (m[2] ? UNITS[m[2]] || NaN : 1);
  };

  function capacity(cluster) {
    const summary = (cluster.status || {}).resourceSummary || {};
    const rows = [];
    for (const resource of ["cpu", "memory", "pods"]) {
      const total = FK.quantity((summary.allocatable || {})[resource]);
      if (!(total > 0)) continue;
      const used = FK.quantity((summary.allocated || {})[resource]) || 0;
      const bar = h("span", { class: "fill" });
      bar.style.width = Math.min(100, (100 * used) / total).toFixed(1) + "%";
      rows.push(h("div", { class: "capacity", "data-resource": resource },
        h("span", { class: "label", text: resource }), h("span", { class: "bar" }, bar),
        h("span", { class: "value", text: `${(summary.allocated || {})[resource] || 0} / ${summary.allocatable[resource]}` })));
    }
    return rows.length ? rows : [h("p", { class: "muted", text: "no capacity reported" })];
  }

  function whatifLine(name, whatif) {
    if (!whatif) return h("p", { class: "whatif muted", text: "If it fails: …" });
    if (whatif.error) return h("p", { class: "whatif muted", text: "If it fails: unknown (" + whatif.error + ")" });
    const found = whatif.domains.find((d) => d.domain === name);
    if (!found) return h("p", { class: "whatif muted", text: "If it fails: unknown" });
    const s = found.summary;
    const bad = s.short || s.homeless || s.blocked;
    return h("p", { class: "whatif" + (bad ? " bad" : ""), "data-moved": s.moved, "data-short": s.short,
      "data-homeless": s.homeless,
      text: `If it fails: ${s.moved} move, ${s.short} short, ${s.homeless} homeless` +
        (s.blocked ? `, ${s.blocked} blocked` : "") });
  }

  FK.fleetView = function (state) {
    const clusters = state.clusters;
    const refused = FK.refused(clusters, "clusters");
    if (refused) return [refused];
    if (!clusters.loaded) return [h("p", { class: "muted", text: "loading…" })];
    const cards = clusters.list_().sort((a, b) => FK.key(a).localeCompare(FK.key(b))).map((c) => {
      const ready = FK.readiness(c);
      const spec = c.spec || {};
      const conditions = ((c.status || {}).conditions || []).filter((x) => x.type !== "Ready");
      return h("article", { class: "card cluster", "data-cluster": c.metadata.name, "data-ready": ready.state },
        h("header", {},
          h("h3", { text: c.metadata.name }),
          h("span", { class: "badge " + ready.state, text: ready.state }),
          h("span", { class: "muted", text: ready.since ? "since " + FK.ago(ready.since) : "" })),
        h("p", { class: "muted", text: [spec.syncMode || "Push", spec.region, spec.zone, spec.provider]
          .filter(Boolean).join(" · ") + (ready.reason ? " — " + ready.reason : "") }),
        h("div", { class: "taints" }, (spec.taints || []).map((t) =>
          h("span", { class: "taint " + t.effect, text: `${t.key}:${t.effect}` }))),
        conditions.length ? h("ul", { class: "conditions" }, conditions.map((x) =>
          h("li", { text: `${x.type}=${x.status}` + (x.reason ? ` (${x.reason})` : "") }))) : null,
        capacity(c),
        whatifLine(c.metadata.name, state.whatifEach));
    });
    return [h("div", { class: "cards" }, cards.length ? cards : h("p", { class: "muted", text: "no clusters" }))];
  };

  // ------------------------------------------------------------------ bindings
  FK.bindingInfo = function (b) {
    const spec = b.spec || {};
    const status = b.status || {};
    const copies = status.aggregatedStatus || [];
    const healths = copies.map((c) => c.health || "Unknown");
    const health = !copies.length ? "Unknown" : healths.every((x) => x === "Healthy") ? "Healthy"
      : healths.includes("Unhealthy") ? "Unhealthy" : "Unknown";
    const failover = FK.condition(b, "FailoverReady");
    const suspension = spec.suspension || {};
    const suspended = suspension.dispatching || suspension.scheduling ||
      ((suspension.dispatchingOnClusters || {}).clusterNames || []).length > 0;
    return {
      key: FK.key(b), kind: b.kind || "ResourceBinding", replicas: spec.replicas || 0,
      placement: (spec.clusters || []).map((c) => ({ name: c.name, replicas: c.replicas || 0 })),
      health, failover, tasks: spec.gracefulEvictionTasks || [], suspended: !!suspended,
    };
  };

  FK.bars = function (info) {
    const max = Math.max(1, ...info.placement.map((p) => p.replicas));
    return h("div", { class: "bars" }, info.placement.map((p) => {
      const fill = h("span", { class: "fill" });
      fill.style.width = ((100 * p.replicas) / max).toFixed(1) + "%";
      return h("div", { class: "replicas", "data-cluster": p.name, "data-replicas": p.replicas },
        h("span", { class: "label", text: `${p.name}:${p.replicas}` }), h("span", { class: "bar" }, fill));
    }));
  };

  function matches(info, query, filter) {
    if (query && !info.key.toLowerCase().includes(query) &&
        !info.placement.some((p) => p.name.toLowerCase().includes(query))) return false;
    if (filter === "unhealthy") return info.health !== "Healthy";
    if (filter === "notready") return !!info.failover && info.failover.status !== "True";
    if (filter === "evicting") return info.tasks.length > 0;
    if (filter === "suspended") return info.suspended;
    return true;
  }

  FK.allBindings = (state) => [...state.bindings.list_(), ...state.clusterBindings.list_()];

  FK.workloadsView = function (state, ui) {
    const refused = [FK.refused(state.bindings, "resourcebindings"),
      FK.refused(state.clusterBindings, "clusterresourcebindings")].filter(Boolean);
    const query = (ui.query || "").toLowerCase();
    const rows = FK.allBindings(state).map(FK.bindingInfo).filter((i) => matches(i, query, ui.filter))
      .sort((a, b) => a.key.localeCompare(b.key)).map((info) => {
        const link = "#workload/" + (info.kind === "ClusterResourceBinding" ? "-/" : "") + info.key;
        const f = info.failover;
        return h("article", { class: "card binding", "data-binding": info.key },
          h("header", {}, h("h3", {}, h("a", { href: link, text: info.key })),
            h("span", { class: "badge " + info.health, text: info.health })),
          h("p", { class: "muted", text: `${info.replicas} replicas` + (info.suspended ? " · suspended" : "") }),
          FK.bars(info),
          h("p", { class: "failover", "data-status": f ? f.status : "",
            text: f ? `FailoverReady=${f.status}` + (f.status !== "True" && f.message ? ` — ${f.message}` : "")
              : "FailoverReady: not assessed" }),
          info.tasks.length ? h("ul", { class: "tasks" }, info.tasks.map((t) =>
            h("li", { text: `evicting from ${t.fromCluster} (${t.reason || ""}${t.purgeMode ? ", " + t.purgeMode : ""})` })))
            : null);
      });
    return [...refused,
      h("div", { class: "cards" }, rows.length ? rows : h("p", { class: "muted", text: "no workloads" }))];
  };

  FK.workloadsControls = function (ui) {
    const search = h("input", { type: "search", placeholder: "search name or cluster", "aria-label": "search",
      oninput: (e) => { ui.query = e.target.value; ui.rerender(); } });
    const select = h("select", { "aria-label": "filter", onchange: (e) => { ui.filter = e.target.value; ui.rerender(); } },
      [["", "all"], ["unhealthy", "not healthy"], ["notready", "not FailoverReady"], ["evicting", "evicting"],
        ["suspended", "suspended"]].map(([v, t]) => h("option", { value: v, text: t })));
    return h("div", { class: "toolbar" }, search, select);
  };
})(window.FK || (window.FK = {}));
