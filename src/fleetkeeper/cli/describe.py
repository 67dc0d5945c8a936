"""``fleetkeeper describe binding NS/NAME`` and ``describe cluster NAME``: the why.

``describe`` answers "why did (or didn't) it fail over?" by putting side by side what a
binding (or a cluster) is now and the failover timeline that led there.

* **binding** — the resource, replicas and placement; where it is scheduled; its
  suspension, if any (what it holds back explains copies not applied and health
  unknown); each copy's applied state and health (``status.aggregatedStatus``); its
  conditions; open eviction
  tasks and the eviction history; its Works (with the override policies applied to each);
  then the **timeline**: every
  ``TimelineEntry`` about the binding, its Works and the clusters its placement names, it
  runs on or was evicted from — Ready changes, taints, evictions, schedules, Work
  creation/deletion — oldest first. ``describe crb NAME`` describes a
  ClusterResourceBinding the same way. A dependency's binding (attached by
  ``propagateDeps``) is never scheduled itself: it says which bindings it follows and
  the clusters it goes to with them.
* **cluster** — mode, endpoint, location, version, nodes, what its failure would do now
  (``if it fails: N workloads move, M short, K homeless``, as ``whatif`` says); conditions; taints (with
  when they were added); the Pull heartbeat (its Lease); the workloads scheduled there;
  eviction tasks away from it; then its timeline.

A part the caller's token may not read (RBAC: the Works of other namespaces, the timeline,
the Lease, the bindings) is marked ``not shown`` with the server's reason; the rest stands.

``describe binding NAME --chart FILE`` also draws the binding's replicas per cluster over that
timeline as SVG (:mod:`fleetkeeper.cli.chart`).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from fleetkeeper import errors
from fleetkeeper.api import constants
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.coordination import Lease
from fleetkeeper.api.timeline import TimelineEntry
from fleetkeeper.api.work import Binding, ClusterResourceBinding, ResourceBinding, Work
from fleetkeeper.cli import chart, connect, kinds
from fleetkeeper.cli import table as t
from fleetkeeper.cli.get import health, scheduled
from fleetkeeper.cli.table import dig, text
from fleetkeeper.client.rest import RestClient
from fleetkeeper.options import Options
from fleetkeeper.readiness.live import read_fleet
from fleetkeeper.readiness.whatif import whatif

KINDS = {"ResourceBinding": ResourceBinding, "ClusterResourceBinding": ClusterResourceBinding,
         "Cluster": Cluster}


# --------------------------------------------------------------------------- shared pieces


def _fields(out: Console, pairs: list[tuple[str, str]]) -> None:
    width = max(len(k) for k, _ in pairs) + 2
    for key, value in pairs:
        out.print(f"{key + ':':<{width}}{value}", soft_wrap=True)


def _section(out: Console, title: str, headers: list[str], values: list[list[str]]) -> None:
    out.print()
    if not values:
        out.print(f"[bold]{title}:[/bold] <none>")
        return
    out.print(f"[bold]{title}:[/bold]")
    t.rows(headers, values, out=out)


def _not_shown(out: Console, title: str, refused: errors.Forbidden) -> None:
    """Say that a part is left out because the caller may not read it."""
    out.print()
    out.print(f"[bold]{title}:[/bold] not shown: {escape(refused.message)}", soft_wrap=True)


def _conditions(out: Console, obj: dict[str, Any], now: datetime) -> None:
    found = [c for c in dig(obj, "status", "conditions") or [] if isinstance(c, dict)]
    _section(out, "Conditions", ["TYPE", "STATUS", "REASON", "MESSAGE", "SINCE"],
             [[text(c.get("type")), text(c.get("status")), text(c.get("reason")), text(c.get("message")),
               t.age(c.get("lastTransitionTime"), now)] for c in found])


async def timeline(client: RestClient, subjects: list[tuple[str, str, str | None]]) -> list[dict[str, Any]]:
    """Every entry about the (kind, name, namespace) subjects, oldest first, without duplicates."""

    async def about(kind: str, name: str, namespace: str | None) -> list[TimelineEntry]:
        selector = f"subject.kind={kind},subject.name={name}"
        if namespace:
            selector += f",subject.namespace={namespace}"
        return (await client.list(TimelineEntry, field_selector=selector)).items

    batches = await asyncio.gather(*(about(*s) for s in dict.fromkeys(subjects)))
    unique = {e.name: e.to_dict() for batch in batches for e in batch}
    return sorted(unique.values(), key=lambda e: (str(e.get("time") or ""), dig(e, "metadata", "name") or ""))


def _timeline(out: Console, entries: list[dict[str, Any]], *, with_subject: bool) -> None:
    def row(e: dict[str, Any]) -> list[str]:
        subject = e.get("subject") or {}
        cells = [t.timestamp(e.get("time"))]
        if with_subject:
            ns = subject.get("namespace")
            cells.append(f"{subject.get('kind')}/{ns + '/' if ns else ''}{subject.get('name')}")
        return [*cells, text(e.get("action")), text(e.get("message")), text(e.get("component"))]

    headers = ["TIME (UTC)", *(["SUBJECT"] if with_subject else []), "ACTION", "MESSAGE", "BY"]
    _section(out, "Failover timeline (oldest first)", headers, [row(e) for e in entries])


async def _timeline_shown(client: RestClient, subjects: list[tuple[str, str, str | None]], out: Console, *,
                          with_subject: bool) -> list[dict[str, Any]]:
    """Print the subjects' timeline (or that the caller may not read it); return its entries."""
    try:
        entries = await timeline(client, subjects)
    except errors.Forbidden as exc:
        _not_shown(out, "Failover timeline", exc)
        return []
    _timeline(out, entries, with_subject=with_subject)
    return entries


def _tasks(tasks: list[dict[str, Any]], now: datetime, *, label: str = "FROM") -> list[list[str]]:
    return [[text(x.get(label)), text(x.get("reason")), text(x.get("producer")), text(x.get("purgeMode")),
             t.age(x.get("creationTimestamp"), now), text(x.get("message"))] for x in tasks]


# --------------------------------------------------------------------------- bindings


def _placement(obj: dict[str, Any]) -> str:
    placement = dig(obj, "spec", "placement") or {}
    names = dig(placement, "clusterAffinity", "clusterNames") or []
    scheduling = placement.get("replicaScheduling") or {}
    parts = [f"clusters {', '.join(names)}" if names else "any cluster"]
    if scheduling:
        parts.append("/".join(str(v) for v in (scheduling.get("replicaSchedulingType"),
                                                scheduling.get("replicaDivisionPreference")) if v))
        weights = dig(scheduling, "weightPreference", "staticWeightList") or []
        if weights:
            shown = [f"{'+'.join(dig(w, 'targetCluster', 'clusterNames') or ['?'])}:{w.get('weight')}"
                     for w in weights]
            parts.append("weights " + ", ".join(shown))
    return "; ".join(p for p in parts if p)


def _followed(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """The bindings a dependency's binding follows (``spec.requiredBy``)."""
    return [s for s in dig(obj, "spec", "requiredBy") or [] if isinstance(s, dict)]


def _names(snapshots: list[dict[str, Any]]) -> str:
    return ", ".join(f"{s['namespace']}/{s.get('name')}" if s.get("namespace") else text(s.get("name"))
                     for s in snapshots)


def _placement_line(obj: dict[str, Any]) -> str:
    follows = _followed(obj)
    if not follows:
        return _placement(obj)
    told = f"follows {_names(follows)} (a dependency goes where the bindings it follows go)"
    return f"{_placement(obj)}; also {told}" if dig(obj, "spec", "placement") else told


def _scheduled_line(obj: dict[str, Any], now: datetime) -> str:
    follows = _followed(obj)
    own = {str(c.get("name")) for c in dig(obj, "spec", "clusters") or [] if isinstance(c, dict)}
    theirs = sorted({str(c.get("name")) for s in follows for c in s.get("clusters") or []
                     if isinstance(c, dict)} - own)
    if follows and not own:
        return f"{','.join(theirs) or t.NONE} (with {_names(follows)}; a dependency is not scheduled itself)"
    line = f"{scheduled(obj)} (last scheduled {t.age(dig(obj, 'status', 'lastScheduledTime'), now)} ago)"
    return f"{line}; also {','.join(theirs)} with {_names(follows)}" if theirs else line


@dataclass(frozen=True, slots=True)
class _Hold:
    """What a binding's ``spec.suspension`` holds back: dispatching to ``clusters`` (``None``:
    every one; empty: none), scheduling."""

    clusters: frozenset[str] | None
    scheduling: bool

    @property
    def dispatching(self) -> bool:
        return self.clusters is None or bool(self.clusters)

    def holds(self, cluster: Any) -> bool:
        return self.clusters is None or str(cluster) in self.clusters

    def line(self) -> str:
        told, why = [], []
        if self.dispatching:
            where = "every cluster" if self.clusters is None else ", ".join(sorted(self.clusters))
            told.append(f"dispatching to {where}")
            why.append("the template's changes reach no held cluster, so its copies there are not applied "
                       "— FullyApplied is False — and report no health")
        if self.scheduling:
            told.append("scheduling")
            why.append("the scheduler leaves it where it is")
        return f"{'; '.join(told)} (spec.suspension: {'; '.join(why)} until resumed)"


def _hold(obj: dict[str, Any]) -> _Hold | None:
    """The binding's suspension, or None without one."""
    suspension = dig(obj, "spec", "suspension") or {}
    on = frozenset(str(n) for n in dig(suspension, "dispatchingOnClusters", "clusterNames") or [])
    hold = _Hold(None if suspension.get("dispatching") else on, bool(suspension.get("scheduling")))
    return hold if hold.dispatching or hold.scheduling else None


def _health_line(obj: dict[str, Any], hold: _Hold | None) -> str:
    shown = health(obj)
    if hold is None or not hold.dispatching or shown == "Healthy":
        return shown
    return f"{shown} (dispatching suspended)"


def related_clusters(obj: dict[str, Any]) -> list[str]:
    """Clusters a binding may run on (by name), runs on, was evicted from, or reports about."""
    names = list(dig(obj, "spec", "placement", "clusterAffinity", "clusterNames") or [])
    names += [c.get("name") for c in dig(obj, "spec", "clusters") or []]
    names += [x.get("fromCluster") for x in dig(obj, "spec", "gracefulEvictionTasks") or []]
    names += [x.get("clusterName") for x in dig(obj, "spec", "evictionHistory") or []]
    names += [x.get("clusterName") for x in dig(obj, "status", "aggregatedStatus") or []]
    names += [c.get("name") for x in _followed(obj) for c in x.get("clusters") or [] if isinstance(c, dict)]
    return sorted({str(n) for n in names if n})


async def describe_binding(client: RestClient, model: type[Binding], name: str, namespace: str,
                           out: Console, now: datetime, *, chart_to: Path | None = None) -> None:
    binding = await client.get(model, name, namespace)
    obj = binding.to_dict()
    hold = _hold(obj)

    def held(cluster: Any) -> str | None:
        return "dispatching suspended" if hold is not None and hold.holds(cluster) else None

    ref = dig(obj, "spec", "resource") or {}
    _fields(out, [
        ("Name", binding.name), *([("Namespace", namespace)] if namespace else []),
        ("Resource", f"{ref.get('apiVersion')} {ref.get('kind')} "
                     f"{str(ref['namespace']) + '/' if ref.get('namespace') else ''}{ref.get('name')}"),
        ("Replicas", text(dig(obj, "spec", "replicas"))),
        *([("Priority", f"{binding.spec.schedule_priority_value()} (schedulePriority: scheduled and "
                        "evicted before lower ones)")] if binding.spec.schedule_priority is not None else []),
        ("Placement", _placement_line(obj)),
        ("Scheduled", _scheduled_line(obj, now)),
        *([("Suspended", hold.line())] if hold is not None else []),
        ("Health", _health_line(obj, hold)),
    ])
    copies = [c for c in dig(obj, "status", "aggregatedStatus") or [] if isinstance(c, dict)]
    _section(out, "Copies", ["CLUSTER", "APPLIED", "HEALTH", "READY", "MESSAGE"],
             [[text(c.get("clusterName")), text(c.get("applied")), text(c.get("health") or "Unknown"),
               text(dig(c, "status", "readyReplicas")),
               text(c.get("appliedMessage") or held(c.get("clusterName")))] for c in copies])
    _conditions(out, obj, now)
    _section(out, "Eviction tasks", ["FROM", "REASON", "PRODUCER", "PURGE MODE", "AGE", "MESSAGE"],
             _tasks(dig(obj, "spec", "gracefulEvictionTasks") or [], now, label="fromCluster"))
    history = dig(obj, "spec", "evictionHistory") or []
    if history:
        _section(out, "Eviction history", ["CLUSTER", "REASON", "PRODUCER", "AGO"],
                 [[text(h.get("clusterName")), text(h.get("reason")), text(h.get("producer")),
                   t.age(h.get("evictedAt"), now)] for h in history])
    works: list[Work] = []
    try:
        works = await _works_of(client, binding)
        _section(out, "Works", ["NAMESPACE", "NAME", "APPLIED", "HEALTH", "OVERRIDES"],
                 [[w.namespace, w.name, t.condition_status("Applied")(w.to_dict(), now), _work_health(w),
                   applied_overrides(w)] for w in works])
    except errors.Forbidden as exc:
        _not_shown(out, "Works", exc)
    subjects: list[tuple[str, str, str | None]] = [(binding.kind, binding.name, namespace or None)]
    subjects += [("Cluster", c, None) for c in related_clusters(obj)]
    subjects += [("Work", w.name, w.namespace) for w in works]
    entries = await _timeline_shown(client, subjects, out, with_subject=True)
    if chart_to is not None:
        title = f"{namespace + '/' if namespace else ''}{name}: replicas per cluster"
        svg = chart.render(chart.from_entries(entries, title=title))
        await asyncio.to_thread(chart_to.write_text, svg, encoding="utf-8")


def applied_overrides(work: Work) -> str:
    """The override policies applied to a Work's manifest, cluster-wide ones first (from
    Karmada's applied-overrides annotations); ``<none>`` when there are none."""
    names: list[str] = []
    annotations = work.annotations()
    for key in (constants.APPLIED_CLUSTER_OVERRIDES_ANNOTATION, constants.APPLIED_OVERRIDES_ANNOTATION):
        try:
            items = json.loads(annotations.get(key) or "[]")
        except ValueError:
            items = []
        names += [str(i.get("policyName")) for i in items if isinstance(i, dict) and i.get("policyName")]
    return ", ".join(names) or t.NONE


def _work_health(work: Work) -> str:
    states = {str(s.health or "Unknown") for s in work.status.manifest_statuses or []}
    return ",".join(sorted(states)) or t.NONE


async def _works_of(client: RestClient, binding: Binding) -> list[Work]:
    label = (constants.RB_PERMANENT_ID_LABEL if isinstance(binding, ResourceBinding)
             else constants.CRB_PERMANENT_ID_LABEL)
    permanent = (binding.metadata.labels or {}).get(label)
    if not permanent:
        return []
    listed = await client.list(Work, None, label_selector=f"{label}={permanent}")
    return sorted(listed.items, key=lambda w: (w.namespace, w.name))


# --------------------------------------------------------------------------- clusters


async def describe_cluster(client: RestClient, name: str, out: Console, now: datetime) -> None:
    cluster = await client.get(Cluster, name)
    obj = cluster.to_dict()
    spec = obj.get("spec") or {}
    nodes = dig(obj, "status", "nodeSummary") or {}
    location = ", ".join(f"{k} {v}" for k, v in (("region", spec.get("region")), ("zones", ",".join(
        spec.get("zones") or [])), ("provider", spec.get("provider"))) if v) or t.NONE
    _fields(out, [
        ("Name", name), ("Mode", text(spec.get("syncMode"))), ("API endpoint", text(spec.get("apiEndpoint"))),
        ("Location", location), ("Version", text(dig(obj, "status", "kubernetesVersion"))),
        ("Nodes", f"{nodes.get('readyNum', 0)}/{nodes.get('totalNum', 0)} ready" if nodes else t.NONE),
        ("Joined", f"{t.age(dig(obj, 'metadata', 'creationTimestamp'), now)} ago"),
        ("If it fails", await _if_it_fails(client, name, now)),
        *_fault_drills(cluster),
    ])
    _conditions(out, obj, now)
    taints = [x for x in spec.get("taints") or [] if isinstance(x, dict)]
    _section(out, "Taints", ["KEY", "VALUE", "EFFECT", "ADDED"],
             [[text(x.get("key")), text(x.get("value")), text(x.get("effect")),
               f"{t.age(x.get('timeAdded'), now)} ago" if x.get("timeAdded") else t.NONE] for x in taints])
    if spec.get("syncMode") == "Pull":
        await _heartbeat(client, name, out, now)
    try:
        await _workloads(client, name, out, now)
    except errors.Forbidden as exc:
        _not_shown(out, "Workloads scheduled here", exc)
    await _timeline_shown(client, [("Cluster", name, None)], out, with_subject=False)


async def _if_it_fails(client: RestClient, name: str, now: datetime) -> str:
    """What losing the cluster now would do (``fleetkeeper whatif --down NAME``), in one line; the
    circuit breaker at its default threshold. A user who may not list the bindings or the taint
    policies is told so here; the rest of the description stands."""
    try:
        fleet = await read_fleet(client, threshold=Options().eviction_circuit_breaker_threshold)
    except errors.Forbidden as exc:
        return f"unknown ({escape(exc.message)})"
    summary = whatif(fleet, [name], now).summary()
    moved = summary["moved"]
    line = (f"{moved} workload{'s' * (moved != 1)} move{'s' * (moved == 1)}, {summary['short']} short, "
            f"{summary['homeless']} homeless")
    return line + (f", {summary['blocked']} blocked" if summary["blocked"] else "")


def _fault_drills(cluster: Cluster) -> list[tuple[str, str]]:
    """A ``Fault drills`` field when ``fleetkeeper fault`` annotated the cluster (none otherwise)."""
    prefix = constants.FAULT_ANNOTATION_PREFIX
    drills = [escape(f"{key.removeprefix(prefix)}={value}")
              for key, value in sorted(cluster.annotations().items()) if key.startswith(prefix)]
    return [("Fault drills", ", ".join(drills))] if drills else []


async def _heartbeat(client: RestClient, name: str, out: Console, now: datetime) -> None:
    out.print()
    try:
        lease = (await client.get(Lease, name, constants.LEASE_NAMESPACE)).to_dict()
    except errors.NotFound:
        out.print("[bold]Heartbeat:[/bold] no Lease yet (the agent never renewed)")
        return
    except errors.Forbidden as exc:
        out.print(f"[bold]Heartbeat:[/bold] not shown: {escape(exc.message)}", soft_wrap=True)
        return
    renewed = dig(lease, "spec", "renewTime")
    out.print(f"[bold]Heartbeat:[/bold] Lease {constants.LEASE_NAMESPACE}/{name} renewed "
              f"{t.age(renewed, now)} ago by {text(dig(lease, 'spec', 'holderIdentity'))} "
              f"(duration {text(dig(lease, 'spec', 'leaseDurationSeconds'))}s)")


async def _workloads(client: RestClient, name: str, out: Console, now: datetime) -> None:
    rbs, crbs = await asyncio.gather(client.list(ResourceBinding, None), client.list(ClusterResourceBinding))
    here: list[list[str]] = []
    leaving: list[list[str]] = []
    for binding in [*rbs.items, *crbs.items]:
        obj = binding.to_dict()
        for target in dig(obj, "spec", "clusters") or []:
            if target.get("name") == name:
                copy: dict[str, Any] = next((c for c in dig(obj, "status", "aggregatedStatus") or []
                                             if c.get("clusterName") == name), {})
                here.append([binding.key, text(target.get("replicas", 0)), text(copy.get("health") or None)])
        tasks = [x for x in dig(obj, "spec", "gracefulEvictionTasks") or [] if x.get("fromCluster") == name]
        leaving += [[binding.key, *row[1:]] for row in _tasks(tasks, now, label="fromCluster")]
    _section(out, "Workloads scheduled here", ["BINDING", "REPLICAS", "HEALTH"], here)
    _section(out, "Eviction tasks away from here", ["BINDING", "REASON", "PRODUCER", "PURGE MODE", "AGE",
                                                    "MESSAGE"], leaving)


# --------------------------------------------------------------------------- command


def split_name(target: str, namespace: str | None, *, namespaced: bool) -> tuple[str, str]:
    """``NS/NAME`` or ``NAME`` (+ ``-n``) → (namespace, name); empty namespace when cluster-scoped."""
    if "/" in target:
        ns, _, name = target.partition("/")
        if not namespaced:
            raise typer.BadParameter(f"{target!r}: cluster-scoped objects have no namespace",
                                     param_hint="NAME")
        if not ns or not name or "/" in name:
            raise typer.BadParameter(f"{target!r}: expected NAMESPACE/NAME", param_hint="NAME")
        return ns, name
    return ((namespace or "") if namespaced else ""), target


def describe(
    kind: Annotated[str, typer.Argument(help="binding (rb), crb or cluster", show_default=False)],
    name: Annotated[str, typer.Argument(help="NAME, or NAMESPACE/NAME for a binding", show_default=False)],
    namespace: Annotated[str | None, typer.Option(
        "--namespace", "-n", help="namespace of a binding [default: the kubeconfig context's]",
        show_default=False)] = None,
    kubeconfig: connect.KubeconfigOption = None,
    chart_to: Annotated[Path | None, typer.Option(
        "--chart", help="a binding: also draw its replicas per cluster over time, with the failover's "
        "marks, as SVG into this file", show_default=False)] = None,
) -> None:
    """Explain a binding or a cluster: its state, and the failover timeline that led there."""
    try:
        info = kinds.resolve(kind)
    except kinds.UnknownKind as exc:
        raise typer.BadParameter(str(exc), param_hint="KIND") from None
    if info.kind not in KINDS:
        raise typer.BadParameter(f"{kind!r}: describe explains bindings (rb, crb) and clusters",
                                 param_hint="KIND")
    if chart_to is not None and info.kind == "Cluster":
        raise typer.BadParameter("draws a binding's replicas: describe binding NAME --chart FILE",
                                 param_hint="--chart")
    ns, object_name = split_name(name, namespace, namespaced=info.namespaced)

    async def action(session: connect.Session) -> None:
        out = t.console()
        now = session.clock.now()
        if info.kind == "Cluster":
            await describe_cluster(session.client, object_name, out, now)
        else:
            model = ResourceBinding if info.kind == "ResourceBinding" else ClusterResourceBinding
            where = (ns or session.namespace) if info.namespaced else ""
            await describe_binding(session.client, model, object_name, where, out, now, chart_to=chart_to)

    connect.run(kubeconfig, action)


__all__ = ["describe", "describe_binding", "describe_cluster", "related_clusters", "split_name", "timeline"]
