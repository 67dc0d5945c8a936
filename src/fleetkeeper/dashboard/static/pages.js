// fleetkeeper dashboard: the Workload, Timeline and What if views.
"use strict";

(function (FK) {
  const h = FK.h;

  // ------------------------------------------------------------------ Workload
  const RB_KINDS = ["ResourceBinding", "ClusterResourceBinding"];

  FK.findBinding = function (state, route) {
    const [first, ...rest] = route;
    if (first === "-") return state.clusterBindings.items.get(rest.join("/"));
    return state.bindings.items.get([first, ...rest].join("/"));
  };

  function related(state, b) {
    const info = FK.bindingInfo(b);
    const clusters = new Set([...info.placement.map((p) => p.name), ...info.tasks.map((t) => t.fromCluster)]);
    const mine = (e) => RB_KINDS.includes((e.subject || {}).kind) && e.subject.name === b.metadata.name &&
      (e.subject.namespace || "") === (b.metadata.namespace || "");
    const own = state.timeline.list_().filter(mine);
    for (const e of own) {
      const m = /\{([^}]*)\}(?: \(was \{([^}]*)\}\))?/.exec(e.message || "");
      if (e.action === "Scheduled" && m) {
        Object.keys(FK.parseResult(m[1])).forEach((c) => clusters.add(c));
        Object.keys(FK.parseResult(m[2] || "")).forEach((c) => clusters.add(c));
      }
    }
    const about = state.timeline.list_().filter((e) => mine(e) ||
      ((e.subject || {}).kind === "Cluster" && clusters.has(e.subject.name)));
    return about.sort((x, y) => String(x.time).localeCompare(String(y.time)));
  }

  function policyOf(b) {
    const meta = b.metadata || {};
    const tags = { ...(meta.labels || {}), ...(meta.annotations || {}) };
    if (tags["propagationpolicy.karmada.io/name"])
      return `/apis/policy.karmada.io/v1alpha1/namespaces/${encodeURIComponent(
        tags["propagationpolicy.karmada.io/namespace"] || meta.namespace)}/propagationpolicies/${encodeURIComponent(
        tags["propagationpolicy.karmada.io/name"])}`;
    if (tags["clusterpropagationpolicy.karmada.io/name"])
      return `/apis/policy.karmada.io/v1alpha1/clusterpropagationpolicies/${encodeURIComponent(
        tags["clusterpropagationpolicy.karmada.io/name"])}`;
    return null;
  }

  function policyBlock(b, ui) {
    const path = policyOf(b);
    if (!path) return h("p", { class: "muted", text: "no policy named on the binding" });
    const known = ui.policies[path];
    if (!known) {
      ui.policies[path] = { loading: true };
      FK.request("GET", path).then((answer) => {
        ui.policies[path] = answer.ok ? { data: answer.data } : { error: `${answer.status}: ${FK.message(answer)}` };
        ui.rerender();
      });
      return h("p", { class: "muted", text: "loading the policy…" });
    }
    if (known.loading) return h("p", { class: "muted", text: "loading the policy…" });
    if (known.error) return h("p", { class: "notice", text: "cannot read the policy (" + known.error + ")" });
    const p = known.data;
    return h("div", { class: "policy" }, h("p", { text: `${p.kind} ${FK.key(p)}` }),
      h("pre", { text: JSON.stringify((p.spec || {}).placement || {}, null, 2) }));
  }

  function chartOf(entries) {
    const chart = FK.buildChart(entries);
    return FK.drawChart(chart, chart.start ? Date.now() / 1000 - chart.start : 0);
  }

  FK.workloadView = function (state, ui, route) {
    const b = FK.findBinding(state, route);
    if (!b) {
      return [FK.refused(state.bindings, "resourcebindings") ||
        h("p", { class: "notice", text: "no binding " + route.join("/") + " (or this token may not read it)" })];
    }
    const info = FK.bindingInfo(b);
    const entries = related(state, b);
    const f = info.failover;
    return [
      h("div", { class: "card binding", "data-binding": info.key },
        h("header", {}, h("h3", { text: info.key }), h("span", { class: "badge " + info.health, text: info.health })),
        h("p", { class: "muted", text: `${info.replicas} replicas · FailoverReady=${f ? f.status : "not assessed"}` +
          (f && f.status !== "True" && f.message ? " — " + f.message : "") }),
        FK.bars(info)),
      h("h3", { text: "Replicas per cluster over time" }),
      FK.refused(state.timeline, "timelineentries") ||
        h("div", { class: "chart-box" }, chartOf(entries)),
      h("div", { class: "split" },
        h("section", {}, h("h3", { text: "Why (oldest first)" }),
          h("ol", { class: "why" }, entries.map((e) => h("li", { "data-action": e.action },
            h("time", { text: String(e.time).replace("T", " ").replace(/\.\d+Z$|Z$/, "") }), " ",
            h("b", { text: e.action }), " ", FK.subjectOf(e), " — ", e.message || "")))),
        h("section", {}, h("h3", { text: "Policy" }), policyBlock(b, ui))),
    ];
  };

  // ------------------------------------------------------------------ Timeline
  function workloadOf(e) {
    const s = e.subject || {};
    return RB_KINDS.includes(s.kind) ? (s.namespace ? s.namespace + "/" : "") + s.name : "";
  }

  function clustersOf(e, names) {
    const s = e.subject || {};
    const out = new Set();
    if (s.kind === "Cluster") out.add(s.name);
    if ((s.namespace || "").startsWith("karmada-es-")) out.add(s.namespace.slice(11));
    for (const n of names) if (new RegExp("(^|[^\\w-])" + n.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") +
      "($|[^\\w-])").test(e.message || "")) out.add(n);
    return out;
  }

  function fill(select, values, label) {
    const current = select.value;
    const wanted = ["", ...values];
    const have = Array.from(select.options).map((o) => o.value);
    if (have.join("\n") === wanted.join("\n")) return;
    select.replaceChildren(...wanted.map((v) => h("option", { value: v, text: v || "any " + label })));
    select.value = wanted.includes(current) ? current : "";
  }

  FK.timelineControls = function (ui) {
    ui.tl = {};
    const box = h("div", { class: "toolbar" });
    for (const what of ["cluster", "workload", "action"]) {
      ui.tl[what] = h("select", { "aria-label": what, name: what, onchange: () => ui.rerender() },
        h("option", { value: "", text: "any " + what }));
      box.append(ui.tl[what]);
    }
    return box;
  };

  FK.timelineView = function (state, ui) {
    const refused = FK.refused(state.timeline, "timelineentries");
    if (refused) return [refused];
    const names = state.clusters.list_().map((c) => c.metadata.name).sort();
    const all = state.timeline.list_().sort((x, y) => String(y.time).localeCompare(String(x.time)) ||
      Number(y.metadata.resourceVersion || 0) - Number(x.metadata.resourceVersion || 0));
    fill(ui.tl.cluster, names, "cluster");
    fill(ui.tl.workload, [...new Set(all.map(workloadOf).filter(Boolean))].sort(), "workload");
    fill(ui.tl.action, [...new Set(all.map((e) => e.action))].sort(), "action");
    const [cluster, workload, action] = ["cluster", "workload", "action"].map((w) => ui.tl[w].value);
    const shown = all.filter((e) => (!action || e.action === action) && (!workload || workloadOf(e) === workload) &&
      (!cluster || clustersOf(e, names).has(cluster))).slice(0, 500);
    return [h("ol", { class: "timeline" }, shown.map((e) => h("li", { "data-action": e.action },
      h("time", { text: FK.ago(e.time) + " ago" }), " ", h("b", { text: e.action }), " ",
      h("span", { class: "subject", text: FK.subjectOf(e) }), " ", h("span", { text: e.message || "" })))),
    shown.length ? null : h("p", { class: "muted", text: "nothing yet" })];
  };

  // ------------------------------------------------------------------ What if
  FK.whatifView = function (state, ui) {
    const refused = FK.refused(state.clusters, "clusters");
    if (refused) return [refused];
    const clusters = state.clusters.list_().sort((a, b) => FK.key(a).localeCompare(FK.key(b)));
    const regions = [...new Set(clusters.map((c) => (c.spec || {}).region).filter(Boolean))].sort();
    ui.down = ui.down || new Set();
    const boxes = clusters.map((c) => h("label", { class: "pick" },
      h("input", { type: "checkbox", name: "down", value: c.metadata.name, checked: ui.down.has(c.metadata.name),
        onchange: (e) => { e.target.checked ? ui.down.add(c.metadata.name) : ui.down.delete(c.metadata.name); } }),
      " " + c.metadata.name));
    const region = h("select", { "aria-label": "region", name: "region" },
      h("option", { value: "", text: "or a whole region…" }), regions.map((r) => h("option", { value: r, text: r })));
    const ask = async () => {
      const question = region.value ? { region: region.value } : { down: Array.from(ui.down).sort() };
      ui.whatifResult = { loading: true };
      ui.rerender(true);
      const answer = await FK.whatif(question);
      ui.whatifResult = answer.ok ? { data: answer.data } : { error: `${answer.status}: ${FK.message(answer)}` };
      ui.rerender(true);
    };
    return [h("div", { class: "toolbar wrap" }, boxes, region,
      h("button", { type: "button", class: "primary", name: "ask", onclick: ask, text: "What if they fail?" })),
    whatifResult(ui.whatifResult)];
  };

  function whatifResult(result) {
    if (!result) return h("p", { class: "muted", text: "pick clusters (or a region) and ask" });
    if (result.loading) return h("p", { class: "muted", text: "computing…" });
    if (result.error) return h("p", { class: "notice", text: "what-if refused (" + result.error + ")" });
    const r = result.data;
    const s = r.summary;
    const place = (p) => Object.entries(p).map(([c, n]) => `${c}:${n}`).join(", ") || "—";
    return h("div", { class: "result", "data-down": r.down.join(",") },
      h("p", { class: "summary", text: `if ${r.down.join(", ")} fail: ${s.moved} moved, ${s.short} short, ` +
        `${s.homeless} homeless, ${s.blocked} blocked` }),
      h("div", { class: "table-box" }, h("table", {},
        h("thead", {}, h("tr", {}, ["binding", "before", "after", "pending", "state"].map((t) => h("th", { text: t })))),
        h("tbody", {}, r.workloads.map((w) => h("tr", { "data-binding": w.binding },
          h("td", { text: w.binding }), h("td", { text: place(w.before) }), h("td", { text: place(w.after) }),
          h("td", { text: w.pendingReplicas }),
          h("td", { text: w.blocked ? "blocked" : w.homeless ? "homeless" : w.pendingReplicas ? "short" : "ok" })))))));
  }
})(window.FK || (window.FK = {}));
