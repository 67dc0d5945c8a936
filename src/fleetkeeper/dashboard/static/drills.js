// fleetkeeper dashboard: the Drills view — `fleetkeeper fault` from the page, for the admin.
//
// A drill is the write the command makes: a fault's annotation on the Cluster, as a merge patch
// through the API (the simulated member acts on it). crashWorkload and healWorkload change the JSON
// list of crashed workloads read-modify-write, with the Cluster's resourceVersion, as the command
// does (its last workload healed removes the annotation). Shown only to a token that may patch
// clusters, for the simulated members only, and nothing is written before the confirmation.
"use strict";

(function (FK) {
  const h = FK.h;
  const FAULT = "faults.fleetkeeper.io/";
  const CRASHED = FAULT + "crashed-workloads";
  FK.DRILLS = {
    clusterDown: [FAULT + "api", "down"], clusterBlackhole: [FAULT + "api", "blackhole"],
    clusterUnhealthy: [FAULT + "api", "unhealthy"], clusterUp: [FAULT + "api", null],
    dnsDown: [FAULT + "dns", "down"], dnsUp: [FAULT + "dns", null], setNodes: [FAULT + "nodes", ""],
    crashWorkload: [CRASHED, ""], healWorkload: [CRASHED, ""],
  };
  // the kinds whose pods a simulated member runs, by the names kubectl takes
  const KINDS = {
    deployment: ["apps/v1", "Deployment"], deployments: ["apps/v1", "Deployment"], deploy: ["apps/v1", "Deployment"],
    statefulset: ["apps/v1", "StatefulSet"], statefulsets: ["apps/v1", "StatefulSet"], sts: ["apps/v1", "StatefulSet"],
    daemonset: ["apps/v1", "DaemonSet"], daemonsets: ["apps/v1", "DaemonSet"], ds: ["apps/v1", "DaemonSet"],
    replicaset: ["apps/v1", "ReplicaSet"], replicasets: ["apps/v1", "ReplicaSet"], rs: ["apps/v1", "ReplicaSet"],
    job: ["batch/v1", "Job"], jobs: ["batch/v1", "Job"], pod: ["v1", "Pod"], pods: ["v1", "Pod"], po: ["v1", "Pod"],
  };
  const TRIES = 5;
  const clusterPath = (name) => "/apis/cluster.karmada.io/v1alpha1/clusters/" + encodeURIComponent(name);

  function workloadOf(text, namespace) {
    const [kind, name, extra] = String(text || "").trim().split("/");
    const known = KINDS[(kind || "").toLowerCase()];
    if (!known || !name || extra !== undefined) return null;
    return { apiVersion: known[0], kind: known[1], namespace: namespace || "default", name };
  }

  const sortKey = (w) => [w.apiVersion.includes("/") ? w.apiVersion.split("/")[0] : "", w.kind, w.namespace, w.name];
  const compare = (a, b) => {
    const [x, y] = [sortKey(a), sortKey(b)];
    const i = x.findIndex((v, k) => v !== y[k]);
    return i < 0 ? 0 : x[i] < y[i] ? -1 : 1;
  };

  async function setCrashed(cluster, workload, crash) {
    for (let i = 0; i < TRIES; i++) {
      const got = await FK.request("GET", clusterPath(cluster));
      if (!got.ok) return got;
      const meta = got.data.metadata || {};
      let listed = [];
      try { listed = JSON.parse((meta.annotations || {})[CRASHED] || "[]"); } catch (e) { listed = []; }
      const same = (w) => compare(w, workload) === 0;
      const wanted = [...listed.filter((w) => !same(w)), ...(crash ? [workload] : [])].sort(compare)
        .map((w) => ({ apiVersion: w.apiVersion, kind: w.kind, namespace: w.namespace, name: w.name }));
      const value = wanted.length ? JSON.stringify(wanted) : null;
      const answer = await FK.request("PATCH", clusterPath(cluster),
        { metadata: { resourceVersion: meta.resourceVersion, annotations: { [CRASHED]: value } } },
        "application/merge-patch+json");
      if (answer.status !== 409) return Object.assign(answer, { value });
    }
    return { ok: false, status: 409, data: { message: `changed ${TRIES} times while being annotated; try again` } };
  }

  async function drill(ui, c) {
    const [annotation, fixed] = FK.DRILLS[c.action];
    let answer, value;
    if (c.workload) {
      answer = await setCrashed(c.cluster, c.workload, c.action === "crashWorkload");
      value = answer.value;
    } else {
      value = c.action === "setNodes" ? String(c.nodes) : fixed;
      answer = await FK.request("PATCH", clusterPath(c.cluster), { metadata: { annotations: { [annotation]: value } } },
        "application/merge-patch+json");
    }
    ui.drillResult = answer.ok
      ? { ok: `cluster/${c.cluster} ${c.action} (${value === null ? "removed " + annotation : "annotated " + annotation + "=" + value})` }
      : { error: `${c.cluster} ${c.action} refused (${answer.status}: ${FK.message(answer)})` };
    ui.confirm = null;
    ui.rerender(true);
  }

  function row(ui, name) {
    const choice = ui.drill[name] || (ui.drill[name] = { action: "clusterDown", nodes: 1, workload: "", namespace: "default" });
    const nodes = h("input", { type: "number", min: 0, max: 1000, value: choice.nodes, "aria-label": "nodes", name: "nodes",
      class: "nodes", onchange: (e) => { choice.nodes = Math.max(0, Math.min(1000, Number(e.target.value) || 0)); } });
    const workload = h("input", { type: "text", value: choice.workload, placeholder: "deployment/NAME", name: "workload",
      "aria-label": "workload", oninput: (e) => { choice.workload = e.target.value; } });
    const namespace = h("input", { type: "text", value: choice.namespace, placeholder: "namespace", name: "namespace",
      "aria-label": "namespace", class: "nodes", oninput: (e) => { choice.namespace = e.target.value; } });
    const show = () => {
      nodes.hidden = choice.action !== "setNodes";
      workload.hidden = namespace.hidden = !choice.action.endsWith("Workload");
    };
    show();
    const select = h("select", { "aria-label": "action for " + name, name: "action",
      onchange: (e) => { choice.action = e.target.value; show(); } },
    Object.keys(FK.DRILLS).map((a) => h("option", { value: a, selected: a === choice.action, text: a })));
    const error = h("span", { class: "notice" });
    const run = () => {
      const target = choice.action.endsWith("Workload") ? workloadOf(choice.workload, choice.namespace) : null;
      if (choice.action.endsWith("Workload") && !target) {
        error.textContent = "workload: KIND/NAME, e.g. deployment/nginx (a kind with pods)";
        return;
      }
      ui.confirm = { cluster: name, action: choice.action, nodes: choice.nodes, workload: target };
      ui.drillResult = null;
      ui.rerender(true);
    };
    return h("div", { class: "drill", "data-cluster": name }, h("b", { text: name }), select, nodes, workload, namespace,
      h("button", { type: "button", name: "run", text: "Run…", onclick: run }), error);
  }

  FK.drillsView = function (state, ui) {
    if (ui.drillsAllowed === undefined) {
      ui.drillsAllowed = null;
      FK.can("patch", "cluster.karmada.io", "clusters").then((ok) => { ui.drillsAllowed = ok; ui.rerender(true); });
    }
    if (ui.drillsAllowed === null) return [h("p", { class: "muted", text: "checking what this token may do…" })];
    if (!ui.drillsAllowed) {
      return [h("p", { class: "notice", "data-refused": "drills",
        text: "Drills are for the admin: this token may not patch clusters." })];
    }
    const simulated = state.clusters.list_().filter((c) => ((c.spec || {}).apiEndpoint || "").startsWith("simulated://"))
      .sort((a, b) => FK.key(a).localeCompare(FK.key(b)));
    ui.drill = ui.drill || {};
    const c = ui.confirm;
    const what = c ? c.action + (c.action === "setNodes" ? " " + c.nodes : "") +
      (c.workload ? ` ${c.workload.kind}/${c.workload.namespace}/${c.workload.name}` : "") : "";
    return [h("p", { class: "muted", text: "Faults for the simulated members, as `fleetkeeper fault` injects them." }),
      ...(simulated.length ? simulated.map((x) => row(ui, x.metadata.name)) : [h("p", { class: "muted", text: "no simulated members" })]),
      c ? h("div", { class: "confirm", role: "alertdialog" },
        h("p", { text: `Really ${what} on ${c.cluster}?` }),
        h("button", { type: "button", class: "danger", name: "confirm", text: "Confirm", onclick: () => drill(ui, c) }),
        h("button", { type: "button", name: "cancel", text: "Cancel",
          onclick: () => { ui.confirm = null; ui.rerender(true); } })) : null,
      ui.drillResult ? h("p", { class: ui.drillResult.ok ? "ok" : "notice", "data-result": "drill",
        text: ui.drillResult.ok || ui.drillResult.error }) : null];
  };
})(window.FK || (window.FK = {}));
