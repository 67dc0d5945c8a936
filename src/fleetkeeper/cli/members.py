"""karmadactl-style reads of the member clusters, through the plane's cluster proxy.

The CLI talks to the plane only; a member is read through Karmada's cluster proxy
(:meth:`~fleetkeeper.client.rest.RestClient.proxied`) with the caller's credentials, so
these commands work against a remote plane as well as a local one::

    fleetkeeper get pods -C member1,member2          # a CLUSTER column
    fleetkeeper get deploy --operation-scope members # every Push member
    fleetkeeper get deploy --operation-scope all     # the plane's (CLUSTER Karmada) and the members'
    fleetkeeper logs -C member1 deploy/nginx         # pod/NAME, NAME; -f follows
    fleetkeeper top clusters                         # allocatable and allocated, from Cluster status

A member that cannot be read is reported on stderr and the others are still shown (exit 1
at the end). Pull clusters are skipped by ``--operation-scope``, as the plane does not reach
their API; naming one with ``-C`` says so.
"""

from __future__ import annotations

import asyncio
import re
from datetime import datetime
from decimal import Decimal
from typing import Annotated, Any

import typer

from fleetkeeper import errors
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.quantity import parse_quantity
from fleetkeeper.api.scheme import ResourceInfo
from fleetkeeper.cli import connect, kinds
from fleetkeeper.cli import table as t
from fleetkeeper.cli.table import Column, dig
from fleetkeeper.client.rest import RestClient

#: ``--operation-scope``: the plane's objects, the members', or both (karmadactl's values)
SCOPES = ("karmada", "members", "all")
#: the CLUSTER of an object the plane itself holds
PLANE = "Karmada"
MAX_CLUSTERS = 100
CLUSTER_NAME = re.compile(r"[a-z0-9]([-a-z0-9.]{0,61}[a-z0-9])?")
#: the workload kinds ``logs KIND/NAME`` finds a pod of, by their label selector
WORKLOADS = frozenset({"Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job"})


def parse_clusters(value: str | None) -> list[str]:
    """``-C a,b`` as names (each a cluster name; at most :data:`MAX_CLUSTERS`)."""
    names = list(dict.fromkeys(n.strip() for n in (value or "").split(",") if n.strip()))
    if len(names) > MAX_CLUSTERS:
        raise typer.BadParameter(f"at most {MAX_CLUSTERS} clusters", param_hint="--cluster")
    for name in names:
        if not CLUSTER_NAME.fullmatch(name):
            raise typer.BadParameter(f"{name[:120]!r} is not a cluster name", param_hint="--cluster")
    return names


def check_scope(scope: str) -> str:
    if scope not in SCOPES:
        raise typer.BadParameter(f"{scope[:60]!r}: must be one of {', '.join(SCOPES)}",
                                 param_hint="--operation-scope")
    return scope


async def targets(session: connect.Session, clusters: list[str], scope: str) -> list[str]:
    """The members to read: those named, else every Push cluster (with a members scope)."""
    if clusters or scope == "karmada":
        return clusters
    listed = await session.client.list(Cluster)
    return sorted(c.metadata.name for c in listed.items if c.spec.sync_mode != "Pull" and c.metadata.name)


async def _read(client: RestClient, info: ResourceInfo, cluster: str, *, namespace: str | None,
                name: str | None, selector: str | None, field_selector: str | None) -> list[dict[str, Any]]:
    member = client.proxied(cluster)
    try:
        if name:
            return [(await member.get(info.model, name, namespace or "")).to_dict()]
        listed = await member.list(info.model, namespace, label_selector=selector,
                                   field_selector=field_selector)
        return [x.to_dict() for x in listed.items]
    finally:
        await member.aclose()


async def listing(session: connect.Session, info: ResourceInfo, clusters: list[str], *,
                  namespace: str | None, name: str | None, selector: str | None,
                  field_selector: str | None) -> tuple[list[tuple[str, dict[str, Any]]], list[str]]:
    """(cluster, object) of every member read, in cluster order; and what could not be read."""
    answers = await asyncio.gather(*(
        _read(session.client, info, c, namespace=namespace, name=name, selector=selector,
              field_selector=field_selector) for c in clusters), return_exceptions=True)
    found: list[tuple[str, dict[str, Any]]] = []
    failed: list[str] = []
    for cluster, answer in zip(clusters, answers, strict=True):
        if isinstance(answer, errors.ApiError):
            failed.append(f"cluster {cluster}: {connect.server_error(answer)}")
        elif isinstance(answer, BaseException):
            raise answer
        else:
            found.extend((cluster, obj) for obj in answer)
    return found, failed


def cluster_column(where: dict[int, str]) -> Column:
    """The CLUSTER column of objects read from several clusters (keyed by the object's id)."""
    return Column("CLUSTER", lambda obj, now: where.get(id(obj), PLANE))


# --------------------------------------------------------------------------- logs


async def _pod_of(member: RestClient, target: str, namespace: str) -> str:
    """The pod ``target`` names: ``pod/NAME``, ``NAME``, or one of a workload's (``deploy/NAME``)."""
    kind, _, name = target.rpartition("/")
    info = kinds.resolve(kind or "pod")
    if info.kind == "Pod":
        return name
    if info.kind not in WORKLOADS:
        raise connect.BadInput(f"{target}: logs are read from a pod, or from a pod of a "
                               f"{', '.join(sorted(WORKLOADS))}")
    workload = (await member.get(info.model, name, namespace)).to_dict()
    labels = dig(workload, "spec", "selector", "matchLabels") or {}
    if not labels:
        raise connect.Failed(f"{target} has no spec.selector.matchLabels to find its pods by")
    selector = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
    pods = (await member.list(kinds.resolve("pod").model, namespace, label_selector=selector)).items
    names = sorted(p.metadata.name or "" for p in pods)
    if not names:
        raise connect.Failed(f"{target} has no pods")
    if len(names) > 1:
        typer.echo(f"Found {len(names)} pods, using pod/{names[0]}", err=True)
    return names[0]


def logs(
    target: Annotated[str, typer.Argument(help="pod/NAME, NAME, or a workload: deploy/NAME, sts/NAME, …",
                                          show_default=False)],
    cluster: Annotated[str, typer.Option("--cluster", "-C", help="the member cluster",
                                         show_default=False)],
    namespace: Annotated[str | None, typer.Option("--namespace", "-n", help="namespace [default: the "
                                                  "kubeconfig context's]", show_default=False)] = None,
    container: Annotated[str | None, typer.Option("--container", "-c", help="the container [default: the "
                                                  "pod's only one]", show_default=False)] = None,
    follow: Annotated[bool, typer.Option("--follow", "-f", help="keep printing new lines (Ctrl-C stops)")]
    = False,
    tail: Annotated[int, typer.Option(min=-1, help="the last N lines only (-1: all)")] = -1,
    kubeconfig: connect.KubeconfigOption = None,
) -> None:
    """Print the log of a pod in a member cluster, through the plane's cluster proxy."""
    (name,) = parse_clusters(cluster) or [""]
    if not name:
        raise typer.BadParameter("name one member cluster", param_hint="--cluster")

    async def action(session: connect.Session) -> None:
        member = session.client.proxied(name)
        try:
            ns = namespace or session.namespace
            try:
                pod = await _pod_of(member, target, ns)
            except kinds.UnknownKind as exc:
                raise connect.BadInput(str(exc)) from None
            params = {"follow": "true"} if follow else {}
            if container:
                params["container"] = container
            if tail >= 0:
                params["tailLines"] = str(tail)
            async for line in member.lines(f"/api/v1/namespaces/{ns}/pods/{pod}/log", params, follow=follow):
                typer.echo(line)
        finally:
            await member.aclose()

    try:
        connect.run(kubeconfig, action)
    except KeyboardInterrupt:
        raise typer.Exit(0) from None


# --------------------------------------------------------------------------- top clusters

top_app = typer.Typer(help="Resource use of the member clusters.", no_args_is_help=True)


def _amount(summary: Any, which: str, resource: str) -> Decimal | None:
    value = dig(summary, which, resource)
    try:
        return parse_quantity(value) if value is not None else None
    except ValueError:
        return None


def _cpu(value: Decimal | None) -> str:
    return t.NONE if value is None else f"{int(value * 1000)}m"


def _memory(value: Decimal | None) -> str:
    return t.NONE if value is None else f"{int(value / (1024 * 1024))}Mi"


def _share(used: Decimal | None, total: Decimal | None) -> str:
    return f"{int(used * 100 / total)}%" if used is not None and total else t.NONE


def _usage(resource: str, shown: Any) -> list[Column]:
    def allocatable(obj: dict[str, Any], now: datetime) -> str:
        return str(shown(_amount(dig(obj, "status", "resourceSummary"), "allocatable", resource)))

    def allocated(obj: dict[str, Any], now: datetime) -> str:
        return str(shown(_amount(dig(obj, "status", "resourceSummary"), "allocated", resource)))

    def share(obj: dict[str, Any], now: datetime) -> str:
        summary = dig(obj, "status", "resourceSummary")
        return _share(_amount(summary, "allocated", resource), _amount(summary, "allocatable", resource))

    label = resource.upper()
    return [Column(f"{label}-ALLOCATABLE", allocatable), Column(f"{label}-ALLOCATED", allocated),
            Column(f"{label}%", share)]


TOP_COLUMNS = (t.NAME, *_usage("cpu", _cpu), *_usage("memory", _memory),
               *_usage("pods", lambda v: t.NONE if v is None else str(int(v))))


@top_app.command("clusters")
def top_clusters(
    name: Annotated[str | None, typer.Argument(help="one cluster", show_default=False)] = None,
    kubeconfig: connect.KubeconfigOption = None,
) -> None:
    """What each member can hold (allocatable) and what its pods ask for (allocated), from the
    clusters' status as their last status update saw it."""

    async def action(session: connect.Session) -> tuple[list[dict[str, Any]], datetime]:
        if name:
            return [(await session.client.get(Cluster, name)).to_dict()], session.clock.now()
        listed = sorted((c.to_dict() for c in (await session.client.list(Cluster)).items),
                        key=lambda c: str(dig(c, "metadata", "name")))
        return listed, session.clock.now()

    found, now = connect.run(kubeconfig, action)
    if not found:
        typer.echo("No clusters found.", err=True)
        return
    t.render(TOP_COLUMNS, found, now=now)


__all__ = ["PLANE", "SCOPES", "check_scope", "cluster_column", "listing", "logs", "parse_clusters",
           "targets", "top_app", "top_clusters"]
