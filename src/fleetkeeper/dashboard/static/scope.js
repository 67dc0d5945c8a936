// fleetkeeper dashboard: where the signed-in token may read, for a token bound in some namespaces only.
//
// At sign-in the page asks the plane what the token may do at the cluster scope (a
// SelfSubjectRulesReview, as `kubectl auth can-i --list`). A kind it may list and watch there is read
// across the fleet, as for the admin. A cluster-scoped kind it may not read is refused in words,
// without a request that would only be refused. A namespaced kind (ResourceBindings) is read in the
// namespaces the token may read it in: the candidates are every namespace when the token may list
// namespaces, else the ones typed in the page (kept in sessionStorage, like kubectl's -n) and a
// ServiceAccount's own; each candidate's rules are reviewed, and the kind is listed in those that
// allow it, the results merged. Bounded: MAX_CANDIDATES namespaces reviewed, MAX_NAMESPACES read; as
// a browser holds six connections to one server, MAX_STREAMS watches at most stay open, and beyond
// them each namespace is listed again every POLL_MS instead.
"use strict";

(function (FK) {
  const h = FK.h;
  FK.MAX_CANDIDATES = 200;
  FK.MAX_NAMESPACES = 50;
  FK.MAX_STREAMS = 4;
  FK.POLL_MS = 10000;
  FK.NAMESPACES_KEY = "fleetkeeper.namespaces";
  const NAMESPACE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
  const REVIEWS_AT_ONCE = 4;

  // the namespaces typed in the page: "team-a, team-b" → ["team-a", "team-b"] (or an error in words)
  FK.parseNamespaces = function (text) {
    const names = [...new Set(String(text || "").split(/[\s,]+/).filter(Boolean))];
    const bad = names.find((n) => n.length > 63 || !NAMESPACE.test(n));
    if (bad !== undefined) return { error: `namespaces: '${bad.slice(0, 70)}' is not a namespace name (a DNS label)` };
    if (names.length > FK.MAX_NAMESPACES) return { error: `namespaces: at most ${FK.MAX_NAMESPACES}` };
    return { names };
  };
  FK.typedNamespaces = () => FK.parseNamespaces(sessionStorage.getItem(FK.NAMESPACES_KEY) || "").names || [];

  // the token's resource rules in a namespace ("": at the cluster scope); null when the plane does not say
  FK.rulesIn = async function (namespace) {
    const answer = await FK.request("POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", {
      apiVersion: "authorization.k8s.io/v1", kind: "SelfSubjectRulesReview", spec: { namespace } });
    if (!answer.ok) return null;
    return ((answer.data || {}).status || {}).resourceRules || [];
  };

  const has = (list, value) => (list || []).includes("*") || (list || []).includes(value);
  // whether the rules let the token `verb` every object of `kind` (a rule naming objects does not)
  FK.allows = (rules, verb, kind) => (rules || []).some((r) => has(r.verbs, verb) &&
    has(r.apiGroups, kind.group) && has(r.resources, kind.resource) && !(r.resourceNames || []).length);
  const reads = (rules, kind) => FK.allows(rules, "list", kind) && FK.allows(rules, "watch", kind);

  async function pool(items, work) {
    const out = new Array(items.length);
    let next = 0;
    const worker = async () => { while (next < items.length) { const i = next++; out[i] = await work(items[i]); } };
    await Promise.all(Array.from({ length: Math.min(REVIEWS_AT_ONCE, items.length) }, worker));
    return out;
  }

  const NAMESPACES = { group: "", resource: "namespaces" };

  // where the token may read each kind: {all} (the plane does not review rules: read everything as
  // before), or {wide: {name: bool}, namespaces: {name: [ns…]}, listable, candidates, of, unreadable}
  FK.discover = async function (user, typed) {
    const cluster = await FK.rulesIn("");
    if (cluster === null) return { all: true };
    const wide = Object.fromEntries(Object.entries(FK.KINDS).map(([n, k]) => [n, reads(cluster, k)]));
    const narrow = Object.keys(FK.KINDS).filter((n) => !wide[n] && FK.KINDS[n].namespaced);
    const scope = { wide, narrow, namespaces: {}, listable: false, candidates: [], of: 0, unreadable: [] };
    if (!narrow.length) return scope;
    let candidates = null;
    if (FK.allows(cluster, "list", NAMESPACES)) {
      const answer = await FK.request("GET", "/api/v1/namespaces");
      if (answer.ok) {
        scope.listable = true;
        candidates = (answer.data.items || []).map((n) => n.metadata.name).sort();
      }
    }
    if (!candidates) {
      const own = /^system:serviceaccount:([^:]+):/.exec(user || "");
      candidates = [...new Set([...(own ? [own[1]] : []), ...typed])];
    }
    scope.of = candidates.length;
    scope.candidates = candidates.slice(0, FK.MAX_CANDIDATES);
    const rules = await pool(scope.candidates, FK.rulesIn);
    for (const name of narrow)
      scope.namespaces[name] = scope.candidates.filter((ns, i) => reads(rules[i], FK.KINDS[name]));
    scope.unreadable = typed.filter((ns) => !narrow.some((n) => scope.namespaces[n].includes(ns)));
    return scope;
  };

  // a namespaced kind read in some namespaces, merged: to the views, one collection like the others
  FK.Spread = class {
    constructor(name, onChange) {
      this.name = name;
      this.onChange = onChange;
      this.children = new Map();   // namespace → FK.Collection
      this.namespaces = [];        // the namespaces read (at most MAX_NAMESPACES)
      this.readable = 0;           // how many the token may read it in
      this.live = true;            // watched (else listed every POLL_MS)
      this.error = null;
    }

    get items() {
      const all = new Map();
      for (const child of this.children.values()) for (const [key, obj] of child.items) all.set(key, obj);
      return all;
    }

    get loaded() {
      return Array.from(this.children.values()).every((c) => c.loaded);
    }

    list_() {
      return Array.from(this.items.values());
    }

    // read `namespaces` (the first MAX_NAMESPACES), watched when `streams` watches are left
    use(namespaces, streams, refusal) {
      this.readable = namespaces.length;
      this.namespaces = namespaces.slice(0, FK.MAX_NAMESPACES);
      const live = this.namespaces.length <= streams;
      if (live !== this.live) this.stop();
      this.live = live;
      for (const [ns, child] of this.children) {
        if (!this.namespaces.includes(ns)) { child.stop(); this.children.delete(ns); }
      }
      for (const ns of this.namespaces) {
        if (this.children.has(ns)) continue;
        const child = new FK.Collection(this.name + "@" + ns, FK.pathOf(FK.KINDS[this.name], ns),
          () => this.onChange(this), live ? 0 : FK.POLL_MS);
        this.children.set(ns, child.start());
      }
      this.error = this.namespaces.length ? null : { status: 403, message: refusal };
      this.onChange(this);
    }

    stop() {
      for (const child of this.children.values()) child.stop();
      this.children.clear();
    }
  };

  // what the token cannot list at the cluster scope, in Kubernetes' words
  FK.cannotList = (user, kind) => `User "${user || "?"}" cannot list resource "${kind.resource}" in API group ` +
    `"${kind.group}" at the cluster scope`;

  // the line above a view reading namespaced kinds in some namespaces: which, and the namespace field
  FK.scopeBar = function (state, onApply) {
    const scope = state.scope;
    const spreads = (scope.narrow || []).map((n) => state[n]);
    if (!spreads.length) return null;
    const what = (scope.narrow || []).map((n) => FK.KINDS[n].resource).join(", ");
    const shown = [...new Set(spreads.flatMap((s) => s.namespaces))].sort();
    const parts = [`This token may not list ${what} in every namespace: ` +
      (shown.length ? "showing " + shown.join(", ") : "no namespace it may read is known") + "."];
    const most = Math.max(...spreads.map((s) => s.readable));
    if (most > FK.MAX_NAMESPACES) parts.push(`Capped: the first ${FK.MAX_NAMESPACES} of ${most} namespaces.`);
    if (scope.of > scope.candidates.length)
      parts.push(`Only the first ${scope.candidates.length} of ${scope.of} namespaces were checked.`);
    if (shown.length && spreads.some((s) => !s.live)) parts.push(`Listed again every ${FK.POLL_MS / 1000} s.`);
    if (scope.unreadable.length) parts.push("Not readable: " + scope.unreadable.join(", ") + ".");
    const bar = h("div", { class: "scope", "data-namespaces": shown.join(",") },
      h("p", { class: "muted", text: parts.join(" ") }));
    if (scope.listable) return bar;
    const field = h("input", { type: "text", name: "namespaces", "aria-label": "namespaces", spellcheck: "false",
      placeholder: "team-a, team-b", value: sessionStorage.getItem(FK.NAMESPACES_KEY) || "" });
    const error = h("span", { class: "notice", role: "alert" });
    const form = h("form", { class: "toolbar", onsubmit: (e) => {
      e.preventDefault();
      const parsed = FK.parseNamespaces(field.value);
      if (parsed.error) { error.textContent = parsed.error; return; }
      sessionStorage.setItem(FK.NAMESPACES_KEY, parsed.names.join(","));
      onApply();
    } }, h("label", { text: "Namespaces (as kubectl -n)" }), field,
    h("button", { type: "submit", name: "namespaces-apply", text: "Show" }), error);
    bar.append(form);
    return bar;
  };
})(window.FK || (window.FK = {}));
