"""``fleetkeeper status``: the control plane at a glance — who leads, which replicas run, the store,
the members — and the takeovers that led there.

Everything is read through the API (the admin kubeconfig, of any replica): the controllers'
Lease ``karmada-system/fleetkeeper-controller-manager`` (its holder leads since its
``acquireTime``), the replicas' presence records next to it
(:mod:`~fleetkeeper.runtime.presence`: live while renewed, *gone* once their duration ran
out — a replica killed without a clean stop), the Events the elections recorded on the Lease
(``LeaderElection``: ``X became leader``, ``X stopped leading``), and the Clusters' Ready
condition. The store is what the replicas announce, with the revision the API reads at.
A caller whose token may not read a part (RBAC) sees the others, and that part says it is
not shown and why (under ``forbidden`` in JSON); the command still succeeds.
``-o json`` prints the same as one object::

    fleetkeeper status
    fleetkeeper status -o json | jq .leader.identity
"""

from __future__ import annotations

import json
from collections.abc import Awaitable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, Any, TypeVar

import typer

from fleetkeeper import errors
from fleetkeeper.api import constants
from fleetkeeper.api.base import format_time, human_duration
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.conditions import get_condition
from fleetkeeper.api.coordination import Lease
from fleetkeeper.api.core import Event
from fleetkeeper.cli import connect
from fleetkeeper.client.interface import Client
from fleetkeeper.runtime import presence
from fleetkeeper.runtime.leaderelection import EVENT_REASON

#: the controllers' Lease (``fleetkeeper up``, ``controller-manager``)
LEASE, NAMESPACE = "fleetkeeper-controller-manager", constants.KARMADA_SYSTEM_NAMESPACE
#: how many of the latest takeover Events are shown
TAKEOVERS = 10
OUTPUTS = ("text", "json")
T = TypeVar("T")


@dataclass(frozen=True)
class Status:
    """What ``status`` read (see the module notes)."""

    lease: Lease | None
    replicas: list[presence.Replica]
    clusters: list[Cluster]
    takeovers: list[Event]
    revision: str
    #: section (leader, replicas, members, takeovers) → why the caller may not read it
    forbidden: dict[str, str] = field(default_factory=dict)


async def _allowed(forbidden: dict[str, str], section: str, read: Awaitable[T]) -> T | None:
    """``read``'s answer, or None with the server's refusal kept under ``section``."""
    try:
        return await read
    except errors.Forbidden as exc:
        forbidden[section] = exc.message
        return None


async def _lease(client: Client) -> Lease | None:
    try:
        return await client.get(Lease, LEASE, NAMESPACE)
    except errors.NotFound:
        return None


async def gather(client: Client, now: datetime) -> Status:
    """Read the lease, the replicas, the members and the takeovers (those the caller may)."""
    forbidden: dict[str, str] = {}
    lease = await _allowed(forbidden, "leader", _lease(client))
    records = await _allowed(forbidden, "replicas", client.list(
        Lease, NAMESPACE, label_selector=f"{presence.REPLICA_OF_LABEL}={LEASE}"))
    seen = [presence.seen(r, now) for r in records.items] if records is not None else []
    replicas = sorted(seen, key=lambda r: r.identity)
    listed = await _allowed(forbidden, "takeovers", client.list(Event, NAMESPACE))
    events = [e for e in (listed.items if listed is not None else [])
              if e.reason == EVENT_REASON and e.involved_object.kind == Lease.KIND
              and e.involved_object.name == LEASE]
    events.sort(key=lambda e: (e.last_timestamp or e.first_timestamp or now, e.name))
    members = await _allowed(forbidden, "members", client.list(Cluster))
    clusters = sorted(members.items, key=lambda c: c.name) if members is not None else []
    revision = next((x.resource_version for x in (records, listed, members) if x is not None), "")
    return Status(lease, replicas, clusters, events[-TAKEOVERS:], revision, forbidden)


def _time(value: datetime | None) -> str | None:
    return format_time(value) if value is not None else None


def _ago(value: datetime | None, now: datetime) -> str:
    return f"{human_duration((now - value).total_seconds())} ago" if value is not None else "never"


def report(status: Status, now: datetime) -> dict[str, Any]:
    """The status as one JSON-ready object."""
    spec = status.lease.spec if status.lease is not None else None
    holder = (spec.holder_identity or "") if spec is not None else ""
    leader = None
    if spec is not None and holder:
        leader = {"identity": holder, "since": _time(spec.acquire_time), "renewed": _time(spec.renew_time),
                  "leaseDurationSeconds": spec.lease_duration_seconds,
                  "transitions": spec.lease_transitions or 0}
    stores = sorted({r.store for r in status.replicas if r.live and r.store})
    replicas = [{"identity": r.identity, "state": ("leading" if r.identity == holder else "standby")
                 if r.live else "gone", "server": r.server, "store": r.store, "started": _time(r.started),
                 "renewed": _time(r.renewed)} for r in status.replicas]
    members = []
    for cluster in status.clusters:
        ready = get_condition(cluster.status.conditions, constants.COND_READY)
        members.append({"name": cluster.name, "ready": ready.status if ready else "Unknown",
                        "reason": ready.reason if ready else None, "syncMode": cluster.spec.sync_mode})
    takeovers = [{"time": _time(e.last_timestamp or e.first_timestamp), "message": e.message}
                 for e in status.takeovers]
    shown = {"store": {"urls": stores, "revision": status.revision}, "leader": leader, "replicas": replicas,
             "members": members, "takeovers": takeovers}
    return {**shown, "forbidden": dict(status.forbidden)} if status.forbidden else shown


def _leader(data: dict[str, Any], status: Status, now: datetime) -> list[str]:
    spec = status.lease.spec if status.lease is not None else None
    if data["leader"] is None or spec is None:
        return [f"leader     none (nobody holds the lease {NAMESPACE}/{LEASE})"]
    return [f"leader     {data['leader']['identity']} since {data['leader']['since']} "
            f"({_ago(spec.acquire_time, now)}); renewed {_ago(spec.renew_time, now)}; "
            f"{data['leader']['transitions']} transitions"]


def _replicas(data: dict[str, Any], status: Status, now: datetime) -> list[str]:
    live = sum(r["state"] != "gone" for r in data["replicas"])
    lines = [f"replicas   {len(data['replicas'])} seen, {live} live"]
    for record, replica in zip(status.replicas, data["replicas"], strict=True):
        lines.append(f"  {replica['identity']:<32} {replica['state']:<8} {replica['server'] or '-':<28} "
                     f"renewed {_ago(record.renewed, now)}")
    return lines


def _members(data: dict[str, Any], status: Status, now: datetime) -> list[str]:
    ready = sum(m["ready"] == "True" for m in data["members"])
    lines = [f"members    {ready} Ready, {len(data['members']) - ready} not Ready"]
    for member in data["members"]:
        state = "Ready" if member["ready"] == "True" else f"NotReady ({member['reason'] or member['ready']})"
        lines.append(f"  {member['name']:<32} {state}")
    return lines


def _takeovers(data: dict[str, Any], status: Status, now: datetime) -> list[str]:
    lines = [f"takeovers  (Events on Lease {NAMESPACE}/{LEASE}, latest last)"]
    lines += [f"  {takeover['time']}  {takeover['message']}" for takeover in data["takeovers"]]
    return lines


SECTIONS = (("leader", _leader), ("replicas", _replicas), ("members", _members), ("takeovers", _takeovers))


def render(data: dict[str, Any], status: Status, now: datetime) -> list[str]:
    """The status as lines of text; a section the caller may not read says so instead."""
    store = ", ".join(data["store"]["urls"]) or "(no live replica says)"
    lines = [f"store      {store} (revision {data['store']['revision'] or 'unknown'})"]
    for section, lines_of in SECTIONS:
        why = data.get("forbidden", {}).get(section)
        lines += [f"{section:<10} not shown: {why}"] if why else lines_of(data, status, now)
    return lines


def status(
    output: Annotated[str, typer.Option("--output", "-o", help="text or json")] = "text",
    kubeconfig: connect.KubeconfigOption = None,
) -> None:
    """Show who leads the controllers, the replicas, the store and the members."""
    if output not in OUTPUTS:
        raise typer.BadParameter(f"must be one of {', '.join(OUTPUTS)}", param_hint="--output")

    async def action(session: connect.Session) -> None:
        now = session.clock.now()
        found = await gather(session.client, now)
        data = report(found, now)
        if output == "json":
            typer.echo(json.dumps(data, indent=2))
        else:
            typer.echo("\n".join(render(data, found, now)))

    connect.run(kubeconfig, action)


__all__ = ["LEASE", "Status", "gather", "render", "report", "status"]
