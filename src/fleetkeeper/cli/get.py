"""``fleetkeeper get KIND [NAME]``: objects as tables, YAML or JSON.

Like ``kubectl get``, with columns chosen for failover work: clusters show their mode,
readiness and taints; bindings where their replicas are scheduled, how healthy each
copy is and how many eviction tasks are open; Works their cluster and whether they are
applied and healthy; timeline entries read as a log (oldest first). Kinds kubectl prints
(Pods, Deployments, Services …) have kubectl's columns (:mod:`fleetkeeper.api.printing`, as
the plane and the members answer kubectl)::

    fleetkeeper get clusters
    fleetkeeper get rb -A -o wide
    fleetkeeper get works -n karmada-es-member1
    fleetkeeper get binding nginx-deployment -o yaml
    fleetkeeper get timeline --field-selector subject.name=member1

``-o yaml|json`` print the objects as the API server has them (a ``List`` for more than
one); ``-o wide`` adds columns; ``-o jsonpath=TEMPLATE`` and ``-o custom-columns=SPEC`` are
kubectl's (:mod:`fleetkeeper.cli.output`). Namespaced kinds use ``-n NS``, ``-A`` for every
namespace, else the kubeconfig context's namespace.

``-w`` (``--watch``) prints what there is, then each change as it happens — a row, an
object or a template's text per added, modified or deleted object, as ``kubectl get -w``
does — until Ctrl-C, or for ``--request-timeout`` at most. The watch resumes from the
listing's resourceVersion, so no change between the two is lost.

``-C member1,member2`` and ``--operation-scope members|all`` read the member clusters
through the plane's cluster proxy, with a CLUSTER column (:mod:`fleetkeeper.cli.members`).
"""

from __future__ import annotations

import asyncio
import json
from datetime import datetime
from typing import Annotated, Any

import typer
import yaml

from fleetkeeper.api.printing import columns as printing
from fleetkeeper.api.printing.kube import KUBE_COLUMNS
from fleetkeeper.api.scheme import ResourceInfo
from fleetkeeper.cli import connect, kinds, members
from fleetkeeper.cli import output as o
from fleetkeeper.cli import table as t
from fleetkeeper.cli.table import Column, dig

OUTPUTS = o.PLAIN


# --------------------------------------------------------------------------- cells


def _taints(obj: dict[str, Any], now: datetime) -> str:
    taints = dig(obj, "spec", "taints") or []
    return ",".join(f"{x.get('key')}:{x.get('effect')}" for x in taints if isinstance(x, dict)) or t.NONE


def _nodes(obj: dict[str, Any], now: datetime) -> str:
    summary = dig(obj, "status", "nodeSummary")
    if not isinstance(summary, dict):
        return t.NONE
    return f"{summary.get('readyNum', 0)}/{summary.get('totalNum', 0)}"


def _resource(obj: dict[str, Any], now: datetime) -> str:
    ref = dig(obj, "spec", "resource") or {}
    return f"{ref.get('kind')}/{ref.get('name')}" if isinstance(ref, dict) and ref.get("kind") else t.NONE


def scheduled(obj: dict[str, Any], now: datetime | None = None) -> str:
    """``member1:1,member2:2`` from a binding's ``spec.clusters``."""
    targets = dig(obj, "spec", "clusters") or []
    shown = [f"{c.get('name')}:{c.get('replicas', 0)}" for c in targets if isinstance(c, dict)]
    return ",".join(shown) or t.NONE


def health(obj: dict[str, Any], now: datetime | None = None) -> str:
    """``Healthy`` when every copy is, else each cluster's health."""
    items = [i for i in dig(obj, "status", "aggregatedStatus") or [] if isinstance(i, dict)]
    if not items:
        return t.NONE
    states = [(str(i.get("clusterName")), str(i.get("health") or "Unknown")) for i in items]
    if all(state == "Healthy" for _, state in states):
        return "Healthy"
    return ",".join(f"{cluster}:{state}" for cluster, state in states)


def _evictions(obj: dict[str, Any], now: datetime) -> str:
    return str(len(dig(obj, "spec", "gracefulEvictionTasks") or []))


def _conditions(obj: dict[str, Any], now: datetime) -> str:
    found = [c for c in dig(obj, "status", "conditions") or [] if isinstance(c, dict)]
    return ",".join(f"{c.get('type')}={c.get('status')}" for c in found) or t.NONE


def _work_cluster(obj: dict[str, Any], now: datetime) -> str:
    namespace = str(dig(obj, "metadata", "namespace") or "")
    return namespace.removeprefix("karmada-es-") if namespace.startswith("karmada-es-") else t.NONE


def _workload(obj: dict[str, Any], now: datetime) -> str:
    manifests = dig(obj, "spec", "workload", "manifests") or []
    return ",".join(f"{m.get('kind')}/{dig(m, 'metadata', 'name')}" for m in manifests
                    if isinstance(m, dict)) or t.NONE


def _work_health(obj: dict[str, Any], now: datetime) -> str:
    statuses = [s for s in dig(obj, "status", "manifestStatuses") or [] if isinstance(s, dict)]
    return ",".join(sorted({str(s.get("health") or "Unknown") for s in statuses})) or t.NONE


def _selectors(obj: dict[str, Any], now: datetime) -> str:
    found = dig(obj, "spec", "resourceSelectors") or []
    return ",".join(f"{s.get('kind')}/{s.get('name') or '*'}" for s in found if isinstance(s, dict)) or t.NONE


def _placement_clusters(obj: dict[str, Any], now: datetime) -> str:
    return ",".join(dig(obj, "spec", "placement", "clusterAffinity", "clusterNames") or []) or t.NONE


def _subject(obj: dict[str, Any], now: datetime) -> str:
    subject = obj.get("subject") or {}
    ns = subject.get("namespace")
    return f"{subject.get('kind')}/{ns + '/' if ns else ''}{subject.get('name')}"


def _renewed(obj: dict[str, Any], now: datetime) -> str:
    renewed = dig(obj, "spec", "renewTime")
    return t.age(renewed, now) + " ago" if renewed else t.NONE


_BINDING = (Column("RESOURCE", _resource), Column("SCHEDULED", scheduled), Column("HEALTH", health),
            Column("EVICTIONS", _evictions), Column("CONDITIONS", _conditions, wide=True))
_POLICY = (Column("SELECTORS", _selectors), Column("CLUSTERS", _placement_clusters),
           Column("PRIORITY", t.field("spec", "priority"), wide=True))

#: (group, kind) → the columns between NAME and AGE
COLUMNS: dict[tuple[str, str], tuple[Column, ...]] = {
    ("cluster.karmada.io", "Cluster"): (
        Column("MODE", t.field("spec", "syncMode")), Column("READY", t.condition_status("Ready")),
        Column("VERSION", t.field("status", "kubernetesVersion")),
        Column("REGION", t.field("spec", "region")),
        Column("TAINTS", _taints), Column("NODES", _nodes, wide=True),
        Column("API-ENDPOINT", t.field("spec", "apiEndpoint"), wide=True)),
    ("work.karmada.io", "ResourceBinding"): _BINDING,
    ("work.karmada.io", "ClusterResourceBinding"): _BINDING,
    ("work.karmada.io", "Work"): (
        Column("CLUSTER", _work_cluster), Column("WORKLOAD", _workload),
        Column("APPLIED", t.condition_status("Applied")), Column("HEALTH", _work_health)),
    ("policy.karmada.io", "PropagationPolicy"): _POLICY,
    ("policy.karmada.io", "ClusterPropagationPolicy"): _POLICY,
    ("coordination.k8s.io", "Lease"): (
        Column("HOLDER", t.field("spec", "holderIdentity")), Column("RENEWED", _renewed)),
}
TIMELINE = (Column("TIME (UTC)", lambda o, now: t.timestamp(o.get("time"))), Column("SUBJECT", _subject),
            Column("ACTION", t.field("action")), Column("REASON", t.field("reason")),
            Column("MESSAGE", t.field("message")), Column("COMPONENT", t.field("component"), wide=True))


def _kubectl_cell(column: printing.Column) -> t.Cell:
    def cell(obj: dict[str, Any], now: datetime) -> str:
        value = column.extract(obj, now)
        if value is None:
            return t.NONE
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value)

    return cell


def _kubectl(columns: tuple[printing.Column, ...]) -> tuple[Column, ...]:
    """kubectl's columns as this command prints them: upper-case headers, ``priority: 1`` as wide."""
    shared = {id(printing.NAME): t.NAME, id(printing.AGE): t.AGE}
    return tuple(shared.get(id(c)) or Column(c.name.upper(), _kubectl_cell(c), wide=c.priority > 0)
                 for c in columns)


#: kubectl's columns for the built-in kinds :data:`COLUMNS` has none of its own for
KUBECTL: dict[tuple[str, str], tuple[Column, ...]] = {
    key: _kubectl(columns) for key, columns in KUBE_COLUMNS.items() if key not in COLUMNS}


def columns_for(info: ResourceInfo, *, all_namespaces: bool) -> list[Column]:
    """NAMESPACE (with ``-A``), then NAME, the kind's columns and AGE (kubectl's, for a kind kubectl
    prints, as :mod:`fleetkeeper.api.printing` has them) — or the timeline's log columns."""
    if info.kind == "TimelineEntry":
        return list(TIMELINE)
    head = [t.NAMESPACE] if info.namespaced and all_namespaces else []
    key = (info.group, info.kind)
    if key in KUBECTL:
        return [*head, *KUBECTL[key]]
    return [*head, t.NAME, *COLUMNS.get(key, ()), t.AGE]


# --------------------------------------------------------------------------- output


def dump(objects: list[dict[str, Any]], output: str, *, single: bool) -> str:
    """YAML or JSON of one object, or of a ``List``."""
    doc: dict[str, Any] = objects[0] if single and objects else {
        "apiVersion": "v1", "kind": "List", "items": objects, "metadata": {"resourceVersion": ""}}
    if output == "json":
        return json.dumps(doc, indent=2)
    return yaml.safe_dump(doc, sort_keys=False).rstrip("\n")


def sort_key(info: ResourceInfo) -> Any:
    if info.kind == "TimelineEntry":
        return lambda o: (str(o.get("time") or ""), dig(o, "metadata", "name") or "")
    return lambda o: (dig(o, "metadata", "namespace") or "", dig(o, "metadata", "name") or "")


def namespace_for(info: ResourceInfo, namespace: str | None, all_namespaces: bool,
                  default: str) -> str | None:
    if not info.namespaced:
        return ""
    if all_namespaces:
        return None
    return namespace or default


class Printer:
    """Prints what ``get`` found, then (with ``-w``) each changed object, in the chosen output."""

    def __init__(self, out: o.Output, info: ResourceInfo, *, all_namespaces: bool, watching: bool) -> None:
        self.out, self.info, self.watching = out, info, watching
        self.columns = columns_for(info, all_namespaces=all_namespaces)
        self.printed = 0

    def first(self, objects: list[dict[str, Any]], *, single: bool, where: str, now: datetime) -> None:
        """The listing (or the one object); ``No … found`` when a table would be empty."""
        streamed = self.out.format in ("yaml", "json", "jsonpath")
        if streamed and not self.watching:
            self._whole(objects, single=single)
        elif streamed:
            for obj in objects:
                self.changed(obj, now=now)
        elif objects:
            self._rows(objects, now=now)
        else:
            typer.echo(f"No {self.info.plural} found{where}.", err=True)

    def _whole(self, objects: list[dict[str, Any]], *, single: bool) -> None:
        if self.out.format == "jsonpath":
            document = objects[0] if single and objects else o.as_list(objects)
            typer.echo(self._jsonpath(document), nl=False)
        else:
            typer.echo(dump(objects, self.out.format, single=single))

    def _jsonpath(self, document: Any) -> str:
        try:
            return o.print_jsonpath(self.out.template, document)
        except ValueError as exc:
            raise connect.Failed(str(exc)) from None

    def _rows(self, objects: list[dict[str, Any]], *, now: datetime) -> None:
        header = self.printed == 0
        if self.out.format == "custom-columns":
            try:
                rows = o.custom_rows(self.out.columns, objects, header=header)
            except ValueError as exc:
                raise connect.Failed(str(exc)) from None
            typer.echo(o.tabulate(rows))
        else:
            t.render(self.columns, objects, now=now, wide=self.out.format == "wide", header=header)
        self.printed += len(objects)

    def changed(self, obj: dict[str, Any], *, now: datetime) -> None:
        """One object as ``-w`` prints it."""
        if self.out.format == "jsonpath":
            typer.echo(self._jsonpath(obj), nl=False)
        elif self.out.format == "json":
            typer.echo(json.dumps(obj, indent=2))
        elif self.out.format == "yaml":
            typer.echo(("---\n" if self.printed else "") + dump([obj], "yaml", single=True))
            self.printed += 1
        else:
            self._rows([obj], now=now)


async def across(session: connect.Session, info: ResourceInfo, printer: Printer, *, clusters: list[str],
                 scope: str, namespace: str | None, name: str | None, selector: str | None,
                 field_selector: str | None) -> None:
    """``-C``/``--operation-scope``: the members' objects (and with ``all`` the plane's), with a
    CLUSTER column; a member that cannot be read is reported after the others."""
    objects: list[dict[str, Any]] = []
    if scope == "all":
        if name:
            objects = [(await session.client.get(info.model, name, namespace or "")).to_dict()]
        else:
            listed = await session.client.list(info.model, namespace, label_selector=selector,
                                               field_selector=field_selector)
            objects = sorted((x.to_dict() for x in listed.items), key=sort_key(info))
    found, failed = await members.listing(session, info, await members.targets(session, clusters, scope),
                                          namespace=namespace, name=name, selector=selector,
                                          field_selector=field_selector)
    where = {id(obj): cluster for cluster, obj in found}
    key = sort_key(info)
    objects += sorted((obj for _, obj in found), key=lambda obj: (where[id(obj)], key(obj)))
    shown = printer.columns  # CLUSTER after NAME (at the front for a kind whose name is a wide column)
    at = shown.index(t.NAME) + 1 if t.NAME in shown else int(t.NAMESPACE in shown)
    shown.insert(at, members.cluster_column(where))
    printer.first(objects, single=False, where="", now=session.clock.now())
    if failed:
        raise connect.Failed("\n".join(failed))


async def follow(session: connect.Session, info: ResourceInfo, *, namespace: str | None, since: str,
                 name: str | None, selector: str | None, field_selector: str | None, printer: Printer,
                 limit: float) -> None:
    """Print each change after ``since`` until ``limit`` seconds have passed (0: until interrupted)."""
    fields = ",".join(f for f in (field_selector, f"metadata.name={name}" if name else None) if f) or None
    stream = session.client.watch(info.model, namespace, resource_version=since, label_selector=selector,
                                  field_selector=fields)
    try:
        async with asyncio.timeout(limit or None):
            async for event in stream:
                printer.changed(event.object.to_dict(), now=session.clock.now())
    except TimeoutError:
        return


def get(
    kind: Annotated[str, typer.Argument(help="kind: clusters, rb, works, pp, deploy, timeline, …",
                                        show_default=False)],
    name: Annotated[str | None, typer.Argument(help="one object by name", show_default=False)] = None,
    namespace: Annotated[str | None, typer.Option("--namespace", "-n", help="namespace [default: the "
                                                  "kubeconfig context's]", show_default=False)] = None,
    all_namespaces: Annotated[bool, typer.Option("--all-namespaces", "-A", help="every namespace")] = False,
    output: Annotated[str, typer.Option("--output", "-o", help="table, wide, yaml, json, jsonpath=TEMPLATE "
                                        "or custom-columns=NAME:.path,…")] = "table",
    selector: Annotated[str | None, typer.Option("--selector", "-l", help="label selector",
                                                 show_default=False)] = None,
    field_selector: Annotated[str | None, typer.Option(help="field selector, e.g. subject.name=member1",
                                                       show_default=False)] = None,
    watch: Annotated[bool, typer.Option("--watch", "-w",
                                        help="then print each change (Ctrl-C stops)")] = False,
    request_timeout: Annotated[str, typer.Option(help="with -w, stop after this long (0s: never)")] = "0s",
    cluster: Annotated[str | None, typer.Option(
        "--cluster", "-C", help="member clusters to read, comma-separated (through the cluster proxy)",
        show_default=False)] = None,
    operation_scope: Annotated[str, typer.Option(help="karmada (the plane), members (-C's, or every Push "
                                                 "member) or all", callback=members.check_scope)] = "karmada",
    kubeconfig: connect.KubeconfigOption = None,
) -> None:
    """List objects of a kind, or show one, from the control plane."""
    try:
        out = o.parse_output(output)
        info = kinds.resolve(kind)
    except kinds.UnknownKind as exc:
        raise typer.BadParameter(str(exc), param_hint="KIND") from None
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--output") from None
    if name and all_namespaces:
        raise typer.BadParameter("a name is looked up in one namespace; drop -A",
                                 param_hint="--all-namespaces")
    limit = connect.duration(request_timeout, "--request-timeout")
    clusters = members.parse_clusters(cluster)
    scope = "members" if clusters and operation_scope == "karmada" else operation_scope
    if watch and scope != "karmada":
        raise typer.BadParameter("-w watches the plane only; drop -C and --operation-scope",
                                 param_hint="--watch")
    printer = Printer(out, info, all_namespaces=all_namespaces, watching=watch)

    async def action(session: connect.Session) -> None:
        ns = namespace_for(info, namespace, all_namespaces, session.namespace)
        if scope != "karmada":
            await across(session, info, printer, clusters=clusters, scope=scope, namespace=ns, name=name,
                         selector=selector, field_selector=field_selector)
            return
        if name:
            one = await session.client.get(info.model, name, ns or "")
            found, since = [one], str(one.metadata.resource_version or "")
        else:
            listed = await session.client.list(info.model, ns, label_selector=selector,
                                               field_selector=field_selector)
            found, since = list(listed.items), listed.resource_version
        objects = sorted((x.to_dict() for x in found), key=sort_key(info))
        where = "" if ns in ("", None) else f" in namespace {ns}"
        printer.first(objects, single=bool(name), where=where, now=session.clock.now())
        if watch:
            await follow(session, info, namespace=ns, since=since, name=name, selector=selector,
                         field_selector=field_selector, printer=printer, limit=limit)

    try:
        connect.run(kubeconfig, action)
    except KeyboardInterrupt:
        raise typer.Exit(0) from None


__all__ = ["COLUMNS", "KUBECTL", "TIMELINE", "Printer", "across", "columns_for", "dump", "follow", "get",
           "health", "namespace_for", "scheduled"]
