// fleetkeeper dashboard: the API, as the signed-in token sees it.
//
// Every call goes to this page's own origin with "Authorization: Bearer <token>" (the token is
// kept in sessionStorage: it goes when the tab closes). A Collection lists a kind, then watches it
// from the list's resourceVersion; a watch that ends is started again from the last version seen,
// and one the server answers 410 Gone (too old) lists again. A 401 signs the user out; a 403 is kept
// on the collection, for the views to say what the token may not read. A collection made with
// `pollMs` lists again at that interval instead of watching (scope.js: a browser holds only six
// connections to one server, so only a few watches may stay open at once).
"use strict";

const FK = window.FK || (window.FK = {});

FK.TOKEN_KEY = "fleetkeeper.token";
FK.token = () => sessionStorage.getItem(FK.TOKEN_KEY) || "";
FK.onUnauthorized = () => {};

FK.request = async function (method, path, body, contentType) {
  const headers = { Accept: "application/json", Authorization: "Bearer " + FK.token() };
  const init = { method, headers, credentials: "omit", cache: "no-store" };
  if (body !== undefined) {
    headers["Content-Type"] = contentType || "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (e) {
    return { status: 0, ok: false, data: { message: "the plane cannot be reached" } };
  }
  let data = null;
  try {
    data = await response.json();
  } catch (e) {
    data = null;
  }
  if (response.status === 401) FK.onUnauthorized();
  return { status: response.status, ok: response.ok, data };
};

FK.message = function (answer) {
  const d = answer.data || {};
  return (d.message || d.reason || "HTTP " + answer.status);
};

FK.key = (obj) => {
  const m = obj.metadata || {};
  return m.namespace ? m.namespace + "/" + m.name : m.name;
};

const MAX_BACKOFF_MS = 30000;
const WATCH_SECONDS = 240;

FK.Collection = class {
  constructor(name, path, onChange, pollMs) {
    this.name = name;
    this.path = path;
    this.onChange = onChange;
    this.pollMs = pollMs || 0;
    this.seen = "";       // what a poll found last (its items' versions): unchanged, nothing re-renders
    this.wake = null;
    this.items = new Map();
    this.version = "";
    this.error = null;    // {status, message} when the token may not list (or the list failed)
    this.loaded = false;
    this.stopped = false;
    this.controller = null;
    this.backoff = 1000;
  }

  start() {
    this.run();
    return this;
  }

  stop() {
    this.stopped = true;
    if (this.controller) this.controller.abort();
    if (this.wake) this.wake();
  }

  // a collection the token may not list, said without asking the server (and logging a 403)
  static refusedAs(name, message) {
    const refused = new FK.Collection(name, "", () => {});
    refused.error = { status: 403, message };
    refused.loaded = true;
    refused.stopped = true;
    return refused;
  }

  changed() {
    this.onChange(this);
  }

  async run() {
    while (!this.stopped) {
      try {
        if (!this.version || this.pollMs) {
          const listed = await this.list();
          if (!listed) return;  // refused: the error is shown, nothing to watch
        }
        if (this.pollMs) await new Promise((r) => { this.wake = r; setTimeout(r, this.pollMs); });
        else await this.watch();
        this.backoff = 1000;
      } catch (e) {
        if (this.stopped) return;
        await new Promise((r) => setTimeout(r, this.backoff));
        this.backoff = Math.min(this.backoff * 2, MAX_BACKOFF_MS);
      }
    }
  }

  async list() {
    const answer = await FK.request("GET", this.path);
    if (!answer.ok) {
      this.error = { status: answer.status, message: FK.message(answer) };
      this.loaded = true;
      this.changed();
      if (answer.status === 401 || answer.status === 403) return false;
      throw new Error(this.error.message);
    }
    const items = answer.data.items || [];
    const seen = items.map((o) => FK.key(o) + "@" + (o.metadata || {}).resourceVersion).join(",");
    const same = this.loaded && !this.error && seen === this.seen;
    this.error = null;
    this.seen = seen;
    this.items = new Map(items.map((o) => [FK.key(o), o]));
    this.version = (answer.data.metadata || {}).resourceVersion || "";
    this.loaded = true;
    if (!same) this.changed();
    return true;
  }

  async watch() {
    this.controller = new AbortController();
    const query = "?watch=1&allowWatchBookmarks=true&timeoutSeconds=" + WATCH_SECONDS +
      "&resourceVersion=" + encodeURIComponent(this.version);
    const response = await fetch(this.path + query, {
      headers: { Accept: "application/json", Authorization: "Bearer " + FK.token() },
      credentials: "omit", cache: "no-store", signal: this.controller.signal,
    });
    if (response.status === 410) {
      this.version = "";
      return;
    }
    if (response.status === 401) {
      FK.onUnauthorized();
      this.stopped = true;
      return;
    }
    if (!response.ok || !response.body) throw new Error("watch " + this.name + ": HTTP " + response.status);
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let newline;
      while ((newline = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, newline).trim();
        buffer = buffer.slice(newline + 1);
        if (line && this.apply(JSON.parse(line)) === "gone") {
          this.version = "";
          this.controller.abort();
          return;
        }
      }
    }
  }

  apply(event) {
    const obj = event.object || {};
    if (event.type === "ERROR") return obj.code === 410 ? "gone" : null;
    const version = (obj.metadata || {}).resourceVersion;
    if (version) this.version = version;
    if (event.type === "BOOKMARK") return null;
    if (event.type === "DELETED") this.items.delete(FK.key(obj));
    else this.items.set(FK.key(obj), obj);
    this.changed();
    return null;
  }

  list_() {
    return Array.from(this.items.values());
  }
};

// the kinds the views read: where they live, and whether they are namespaced
FK.KINDS = {
  clusters: { group: "cluster.karmada.io", version: "v1alpha1", resource: "clusters", namespaced: false },
  bindings: { group: "work.karmada.io", version: "v1alpha2", resource: "resourcebindings", namespaced: true },
  clusterBindings: { group: "work.karmada.io", version: "v1alpha2", resource: "clusterresourcebindings",
    namespaced: false },
  timeline: { group: "fleetkeeper.io", version: "v1alpha1", resource: "timelineentries", namespaced: false },
};
// a kind's list path: across the fleet, or in one namespace
FK.pathOf = (kind, namespace) => "/apis/" + kind.group + "/" + kind.version +
  (namespace ? "/namespaces/" + encodeURIComponent(namespace) : "") + "/" + kind.resource;
FK.PATHS = Object.fromEntries(Object.entries(FK.KINDS).map(([name, kind]) => [name, FK.pathOf(kind, "")]));

// May the token do this? (a SelfSubjectAccessReview, as kubectl auth can-i)
FK.can = async function (verb, group, resource) {
  const answer = await FK.request("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", {
    apiVersion: "authorization.k8s.io/v1", kind: "SelfSubjectAccessReview",
    spec: { resourceAttributes: { verb, group, resource } },
  });
  return answer.ok && !!((answer.data || {}).status || {}).allowed;
};

FK.whatif = (question) => FK.request("POST", "/dashboard/api/whatif", question);
