"""``fleetkeeper status``: the control plane at a glance — who leads, which replicas run, the store,
the members — and the takeovers that led there.

Everything is read through the API (the admin kubeconfig, of any replica): the controllers'
Lease ``karmada-system/fleetkeeper-controller-manager`` (its holder leads since its
``acquireTime``), the replicas' presence records next to it
(:mod:`~fleetkeeper.runtime.presence`: live while renewed, *gone* once their duration ran
out — a replica killed without a clean stop), the Events the elections recorded on the Lease
(``LeaderElection``: ``X became leader``, ``X stopped leading``), and the Clusters' Ready
condition. The store is what the replicas announce, with the revision the API reads at.
``-o json`` prints the same as one object::

    fleetkeeper status
    fleetkeeper status -o json | jq .leader.identity
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any

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


@dataclass(frozen=True)
class Status:
    """What ``status`` read (see the module notes)."""

    lease: Lease | None
    replicas: list[presence.Replica]
    clusters: list[Cluster]
    takeovers: list[Event]
    revision: str


async def gather(client: Client, now: datetime) -> Status:
    """Read the lease, the replicas, the members and the takeovers."""
    try:
        lease: Lease | None = await client.get(Lease, LEASE, NAMESPACE)
    except errors.NotFound:
        lease = None
    records = await client.list(Lease, NAMESPACE, label_selector=f"{presence.REPLICA_OF_LABEL}={LEASE}")
    replicas = sorted((presence.seen(r, now) for r in records.items), key=lambda r: r.identity)
    events = [e for e in (await client.list(Event, NAMESPACE)).items
              if e.reason == EVENT_REASON and e.involved_object.kind == Lease.KIND
              and e.involved_object.name == LEASE]
    events.sort(key=lambda e: (e.last_timestamp or e.first_timestamp or now, e.name))
    clusters = sorted((await client.list(Cluster)).items, key=lambda c: c.name)
    return Status(lease, replicas, clusters, events[-TAKEOVERS:], records.resource_version)


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
    return {"store": {"urls": stores, "revision": status.revision}, "leader": leader, "replicas": replicas,
            "members": members, "takeovers": takeovers}


def render(data: dict[str, Any], status: Status, now: datetime) -> list[str]:
    """The status as lines of text."""
    store = ", ".join(data["store"]["urls"]) or "(no live replica says)"
    lines = [f"store      {store} (revision {data['store']['revision']})"]
    spec = status.lease.spec if status.lease is not None else None
    if data["leader"] is None or spec is None:
        lines.append("leader     none (nobody holds the lease "
                     f"{NAMESPACE}/{LEASE})")
    else:
        lines.append(f"leader     {data['leader']['identity']} since {data['leader']['since']} "
                     f"({_ago(spec.acquire_time, now)}); renewed {_ago(spec.renew_time, now)}; "
                     f"{data['leader']['transitions']} transitions")
    live = sum(r["state"] != "gone" for r in data["replicas"])
    lines.append(f"replicas   {len(data['replicas'])} seen, {live} live")
    for record, replica in zip(status.replicas, data["replicas"], strict=True):
        lines.append(f"  {replica['identity']:<32} {replica['state']:<8} {replica['server'] or '-':<28} "
                     f"renewed {_ago(record.renewed, now)}")
    ready = sum(m["ready"] == "True" for m in data["members"])
    lines.append(f"members    {ready} Ready, {len(data['members']) - ready} not Ready")
    for member in data["members"]:
        state = "Ready" if member["ready"] == "True" else f"NotReady ({member['reason'] or member['ready']})"
        lines.append(f"  {member['name']:<32} {state}")
    lines.append(f"takeovers  (Events on Lease {NAMESPACE}/{LEASE}, latest last)")
    for takeover in data["takeovers"]:
        lines.append(f"  {takeover['time']}  {takeover['message']}")
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
