// fleetkeeper dashboard: sign-in, routing (#fleet, #workloads, #workload/NS/NAME, #timeline, #whatif,
// #drills) and rendering. Views re-render from the watched collections as they change: no reload.
// What each collection reads — across the fleet, in some namespaces, or nothing — is decided at
// sign-in from what the token may do (scope.js).
"use strict";

(function (FK) {
  const h = FK.h;
  const $ = (id) => document.getElementById(id);

  const VIEWS = {
    fleet: { title: "Fleet", deps: ["clusters", "whatif"], body: (s) => FK.fleetView(s) },
    workloads: { title: "Workloads", deps: ["bindings", "clusterBindings"], controls: FK.workloadsControls,
      body: (s, ui) => FK.workloadsView(s, ui) },
    workload: { title: "Workload", deps: ["bindings", "clusterBindings", "timeline"], hidden: true,
      body: (s, ui, route) => FK.workloadView(s, ui, route) },
    timeline: { title: "Timeline", deps: ["timeline"], controls: FK.timelineControls,
      body: (s, ui) => FK.timelineView(s, ui) },
    whatif: { title: "What if", deps: ["clusterNames"], body: (s, ui) => FK.whatifView(s, ui) },
    drills: { title: "Drills", deps: ["clusterNames"], body: (s, ui) => FK.drillsView(s, ui) },
  };

  // the Fleet cards' what-if is asked again after a change, at most this often
  const WHATIF_EVERY_MS = 10000;
  let state = null;
  const ui = { policies: {}, query: "", filter: "", current: "", timer: null, pending: false, force: false };
  let changed = new Set();

  function route() {
    const parts = (location.hash || "#fleet").slice(1).split("/").map(decodeURIComponent);
    return VIEWS[parts[0]] ? parts : ["fleet"];
  }

  ui.rerender = function (force) {
    if (force) ui.force = true;
    else changed.add("ui");
    if (ui.timer === null) ui.timer = setTimeout(render, 30);
  };

  function touched(name) {
    changed.add(name);
    if (name === "clusters" || name === "bindings" || name === "clusterBindings") {
      state.whatifStale = true;
      if (!state.whatifSoon) state.whatifSoon = setTimeout(() => { state.whatifSoon = null; refreshWhatif(); }, 300);
    }
    if (ui.timer === null) ui.timer = setTimeout(render, 30);
  }

  function render() {
    ui.timer = null;
    if (!state || !state.ready) return;
    const [name, ...rest] = route();
    const view = VIEWS[name];
    const key = [name, ...rest].join("/");
    const names = state.clusters.list_().map((c) => c.metadata.name).sort().join(",");
    if (names !== state.names) { state.names = names; changed.add("clusterNames"); }
    const fresh = key !== ui.current;
    if (fresh || changed.has("scope")) {
      const spread = view.deps.some((d) => state[d] instanceof FK.Spread);
      $("scope").replaceChildren(...(spread ? [FK.scopeBar(state, rescope)].filter(Boolean) : []));
    }
    const due = fresh || ui.force || changed.has("ui") || view.deps.some((d) => changed.has(d));
    changed = new Set();
    ui.force = false;
    if (!due) return;
    if (fresh) {
      ui.current = key;
      $("controls").replaceChildren(...(view.controls ? [view.controls(ui)] : []));
      for (const a of document.querySelectorAll("nav a")) a.classList.toggle("active", a.dataset.view === name);
      document.title = "fleetkeeper · " + view.title;
    }
    $("view").replaceChildren(...view.body(state, ui, rest).filter(Boolean));
    document.body.dataset.view = name;
  }

  async function refreshWhatif() {
    if (!state || !state.whatifStale || state.whatifBusy || route()[0] !== "fleet") return;
    if (Date.now() - state.whatifAt < WHATIF_EVERY_MS) return;  // the interval comes back for it
    const mine = state;
    mine.whatifAt = Date.now();
    if (state.clusters.error || !state.clusters.loaded) return;
    state.whatifStale = false;
    state.whatifBusy = true;
    try {
      const answer = await FK.whatif({ each: "cluster" });
      if (answer.ok) mine.whatifEach = answer.data;
      else if (answer.status === 429) mine.whatifStale = true;
      else mine.whatifEach = { error: `${answer.status}: ${FK.message(answer)}` };
    } finally {
      mine.whatifBusy = false;
    }
    if (state === mine) touched("whatif");
  }

  async function whoami() {
    const answer = await FK.request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", {
      apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" });
    return answer;
  }

  const userOf = (answer) => (((answer.data || {}).status || {}).userInfo || {}).username || "";

  // each namespaced kind the token may not read across the fleet: in the namespaces it may read it in
  function spread(scope) {
    let streams = FK.MAX_STREAMS - Object.keys(FK.KINDS).filter((n) => state[n] instanceof FK.Collection &&
      !state[n].stopped).length;
    for (const name of scope.narrow) {
      const namespaces = scope.namespaces[name];
      state[name].use(namespaces, Math.max(0, streams), FK.cannotList(state.user, FK.KINDS[name]) +
        (namespaces.length ? "" : ", and may read it in no namespace it can name: type its namespaces above"));
      if (namespaces.length <= streams) streams -= namespaces.length;
    }
  }

  async function rescope() {
    const mine = state;
    const scope = await FK.discover(mine.user, FK.typedNamespaces());
    if (state !== mine || scope.all) return;
    mine.scope = scope;
    spread(scope);
    touched("scope");
  }

  async function start(user) {
    $("signin").hidden = true;
    $("app").hidden = false;
    const mine = state = { whatifStale: true, whatifSoon: null, whatifAt: 0, names: "", ready: false };
    if (user === undefined) user = userOf(await whoami());
    const scope = await FK.discover(user, FK.typedNamespaces());
    if (state !== mine) return;  // signed out meanwhile
    $("who").textContent = user;
    Object.assign(state, { user, scope });
    for (const [name, kind] of Object.entries(FK.KINDS)) {
      if (scope.all || scope.wide[name]) state[name] = new FK.Collection(name, FK.PATHS[name], () => touched(name)).start();
      else if (kind.namespaced) state[name] = new FK.Spread(name, () => touched(name));
      else state[name] = FK.Collection.refusedAs(name, FK.cannotList(user, kind));
    }
    if (!scope.all) spread(scope);
    state.ready = true;
    state.whatifTimer = setInterval(refreshWhatif, 3000);
    ui.current = "";
    ui.rerender(true);
  }

  function signOut(message) {
    if (state) {
      for (const name of Object.keys(FK.KINDS)) if (state[name]) state[name].stop();
      clearInterval(state.whatifTimer);
      clearTimeout(state.whatifSoon);
    }
    state = null;
    Object.assign(ui, { policies: {}, drillsAllowed: undefined, confirm: null, drillResult: null,
      whatifResult: null, down: null, current: "" });
    sessionStorage.removeItem(FK.TOKEN_KEY);
    $("app").hidden = true;
    $("signin").hidden = false;
    $("scope").replaceChildren();
    delete document.body.dataset.view;
    $("signin-error").textContent = message || "";
  }

  FK.onUnauthorized = () => { if (state || FK.token()) signOut("The token was not accepted (401). Sign in again."); };

  async function signIn(event) {
    event.preventDefault();
    const token = $("token").value.trim();
    if (!token) return;
    sessionStorage.setItem(FK.TOKEN_KEY, token);
    $("token").value = "";
    const answer = await whoami();
    if (answer.status === 401) return;
    if (answer.status === 0) {
      sessionStorage.removeItem(FK.TOKEN_KEY);
      $("signin-error").textContent = "The plane cannot be reached; try again.";
      return;
    }
    start(userOf(answer));
  }

  function init() {
    $("nav").replaceChildren(...Object.entries(VIEWS).filter(([, v]) => !v.hidden).map(([name, v]) =>
      h("a", { href: "#" + name, "data-view": name, text: v.title })));
    $("signin-form").addEventListener("submit", signIn);
    $("signout").addEventListener("click", () => signOut(""));
    window.addEventListener("hashchange", () => ui.rerender(true));
    if (FK.token()) start();
  }

  init();
})(window.FK || (window.FK = {}));
