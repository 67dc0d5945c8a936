"""``fleetkeeper fault``: fault drills on the simulated members of a running control plane.

``fleetkeeper up`` runs its simulated members in its own process, so a drill needs a
way in. It is the API, like everything else: the command records the wanted fault as
an annotation on the Cluster object (a patch through the API server, with the admin
kubeconfig, so it is authenticated like any write and reaches only the server the
kubeconfig names). Action names are the scenario actions' (docs/scenario-format.md)::

    fleetkeeper fault clusterDown member1        # faults.fleetkeeper.io/api: down (refused)
    fleetkeeper fault clusterBlackhole member1   # faults.fleetkeeper.io/api: blackhole (timeouts)
    fleetkeeper fault clusterUnhealthy member1   # faults.fleetkeeper.io/api: unhealthy (/readyz 500)
    fleetkeeper fault clusterUp member1          # removes faults.fleetkeeper.io/api
    fleetkeeper fault setNodes member1 --nodes 1 # faults.fleetkeeper.io/nodes: "1"
    fleetkeeper fault crashWorkload member1 deployment/nginx [-n default]
    fleetkeeper fault healWorkload member1 deployment/nginx
                                                 # faults.fleetkeeper.io/crashed-workloads: JSON list
                                                 # (removed when the last one is healed)
    fleetkeeper fault dnsDown member1            # faults.fleetkeeper.io/dns: down
    fleetkeeper fault dnsUp member1              # removes faults.fleetkeeper.io/dns

The simulated member's add-ons (:mod:`fleetkeeper.cmd.detector`) apply them whenever
the Cluster changes — level-triggered: each annotation says what that part of the
member is now (its API, its node count, which workloads crash-loop, its DNS), so a
drill survives a restart of ``fleetkeeper up``. Undoing a fault removes its annotation, so
a Cluster carries only the drills in force; the member side then undoes what that
annotation had done (and only that: while an annotation is absent that part of the
member is otherwise left alone, so scenario actions and annotations never fight). A
value that cannot be read is ignored (and logged once). Only simulated members take
drills: on any other member (``kube://…``) the command refuses, writing nothing, and
exits 1. ``agentDown``/``agentUp`` have no
annotation: a Pull agent is a process of its own (``fleetkeeper agent``), stopped and
started as such.
"""

from __future__ import annotations

import json
import weakref
from dataclasses import dataclass
from typing import Annotated, Any

import structlog
import typer

from fleetkeeper import errors
from fleetkeeper.api import constants
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.cli import connect, kinds
from fleetkeeper.members.simulated import ApiState, SimulatedCluster
from fleetkeeper.members.simulated.objects import ObjectKey, group_of

API_ANNOTATION = f"{constants.FAULT_ANNOTATION_PREFIX}api"
NODES_ANNOTATION = f"{constants.FAULT_ANNOTATION_PREFIX}nodes"
CRASHED_ANNOTATION = f"{constants.FAULT_ANNOTATION_PREFIX}crashed-workloads"
DNS_ANNOTATION = f"{constants.FAULT_ANNOTATION_PREFIX}dns"
#: action → (annotation, value) for the actions that set one value; None: the action undoes
#: a fault, removing its annotation
ACTIONS: dict[str, tuple[str, str | None]] = {
    "clusterDown": (API_ANNOTATION, "down"),
    "clusterBlackhole": (API_ANNOTATION, "blackhole"),
    "clusterUnhealthy": (API_ANNOTATION, "unhealthy"),
    "clusterUp": (API_ANNOTATION, None),
    "dnsDown": (DNS_ANNOTATION, "down"),
    "dnsUp": (DNS_ANNOTATION, None),
}
SET_NODES = "setNodes"
CRASH, HEAL = "crashWorkload", "healWorkload"
AGENT_ACTIONS = ("agentDown", "agentUp")
KNOWN = (*ACTIONS, SET_NODES, CRASH, HEAL)
#: the most nodes a drill may give a simulated member (a typo should not build a million)
MAX_NODES = 1000
#: the kinds whose pods a simulated member runs (a workload is named as kubectl names a kind)
WORKLOAD_KINDS = frozenset({("apps", "Deployment"), ("apps", "StatefulSet"), ("apps", "DaemonSet"),
                            ("apps", "ReplicaSet"), ("batch", "Job"), ("", "Pod")})
#: tries of the read-modify-write of the crashed-workloads annotation
CONFLICT_RETRIES = 5

_log = structlog.get_logger("fleetkeeper.fault")
#: (cluster, annotation, value) already reported as unreadable
_reported: set[tuple[str, str, str]] = set()
#: per member, the annotations whose faults it has taken (undone when the annotation goes)
_taken: weakref.WeakKeyDictionary[SimulatedCluster, set[str]] = weakref.WeakKeyDictionary()


@dataclass(frozen=True, slots=True)
class Workload:
    api_version: str
    kind: str
    namespace: str
    name: str

    @property
    def key(self) -> ObjectKey:
        return ObjectKey(group_of(self.api_version), self.kind, self.namespace, self.name)

    def to_dict(self) -> dict[str, str]:
        return {"apiVersion": self.api_version, "kind": self.kind, "namespace": self.namespace,
                "name": self.name}


# --------------------------------------------------------------------------- the member side
def apply_faults(cluster: Cluster, member: SimulatedCluster) -> None:
    """Make ``member`` match the faults annotated on ``cluster`` (an absent annotation: that
    part is left alone, unless the annotation was there before, when what it did is undone;
    an unreadable one is ignored and logged once)."""
    annotations = cluster.annotations()
    _undo_removed(annotations, member)
    api = annotations.get(API_ANNOTATION)
    if api is not None:
        _apply_api(cluster.name, api, member)
    nodes = annotations.get(NODES_ANNOTATION)
    if nodes is not None:
        count = _node_count(nodes)
        if count is None:
            _unreadable(cluster.name, NODES_ANNOTATION, nodes, f"a whole number of nodes, 0 to {MAX_NODES}")
        elif count != member.node_count:
            member.set_nodes(count)
    crashed = annotations.get(CRASHED_ANNOTATION)
    if crashed is not None:
        workloads = parse_workloads(crashed)
        if workloads is None:
            _unreadable(cluster.name, CRASHED_ANNOTATION, crashed,
                        "a JSON list of {apiVersion, kind, namespace, name}")
        else:
            wanted = {w.key for w in workloads}
            for key in sorted(wanted - member.crashed):
                member.crash(key)
            for key in sorted(member.crashed - wanted):
                member.heal(key)
    dns = annotations.get(DNS_ANNOTATION)
    if dns == "down" and member.dns_ok:
        member.dns_down()
    elif dns == "up" and not member.dns_ok:
        member.dns_up()
    elif dns is not None and dns not in ("down", "up"):
        _unreadable(cluster.name, DNS_ANNOTATION, dns, "down or up")


def _undo_removed(annotations: dict[str, str], member: SimulatedCluster) -> None:
    """Undo the faults of the annotations this member took that are gone (``clusterUp``,
    ``dnsUp``, the last ``healWorkload``); remember the ones present."""
    taken = _taken.setdefault(member, set())
    for annotation in sorted(taken - annotations.keys()):
        if annotation == API_ANNOTATION and member.state is not ApiState.UP:
            member.up()
        elif annotation == DNS_ANNOTATION and not member.dns_ok:
            member.dns_up()
        elif annotation == CRASHED_ANNOTATION:
            for key in sorted(member.crashed):
                member.heal(key)
    taken.intersection_update(annotations.keys())
    taken.update(a for a in (API_ANNOTATION, DNS_ANNOTATION, CRASHED_ANNOTATION) if a in annotations)


def _apply_api(cluster: str, value: str, member: SimulatedCluster) -> None:
    actions = {"down": member.down, "blackhole": member.blackhole, "unhealthy": member.unhealthy,
               "up": member.up}
    act = actions.get(value)
    if act is None:
        _unreadable(cluster, API_ANNOTATION, value, "down, blackhole, unhealthy or up")
    elif member.state.value != value:
        act()


def _node_count(value: str) -> int | None:
    try:
        count = int(value)
    except ValueError:
        return None
    return count if 0 <= count <= MAX_NODES else None


def parse_workloads(value: str) -> list[Workload] | None:
    """The crashed-workloads annotation's list (``None`` when it cannot be read)."""
    try:
        items = json.loads(value)
    except ValueError:
        return None
    if not isinstance(items, list):
        return None
    out: list[Workload] = []
    for item in items:
        if not isinstance(item, dict):
            return None
        fields = [item.get(name) for name in ("apiVersion", "kind", "namespace", "name")]
        strings = [f for f in fields if isinstance(f, str) and f]
        if len(strings) != len(fields):
            return None
        out.append(Workload(*strings))
    return out


def _unreadable(cluster: str, annotation: str, value: str, wanted: str) -> None:
    if (cluster, annotation, value) not in _reported:
        _reported.add((cluster, annotation, value))
        _log.warning("fault annotation ignored", cluster=cluster, annotation=annotation, value=value,
                     wanted=wanted)


# --------------------------------------------------------------------------- the command
def _workload(text: str, namespace: str) -> Workload:
    kind, sep, name = text.partition("/")
    if not sep or not name or "/" in name:
        raise typer.BadParameter(f"{text!r}: expected KIND/NAME, e.g. deployment/nginx",
                                 param_hint="WORKLOAD")
    try:
        info = kinds.resolve(kind)
    except kinds.UnknownKind:
        info = None
    if info is None or (info.group, info.kind) not in WORKLOAD_KINDS:
        known = ", ".join(sorted(k for _, k in WORKLOAD_KINDS))
        raise typer.BadParameter(f"{kind!r} is not a workload kind with pods (known: {known})",
                                 param_hint="WORKLOAD")
    return Workload(info.api_version, info.kind, namespace, name)


def _check(action: str, workload: str | None, nodes: int | None) -> None:
    if action in AGENT_ACTIONS:
        raise typer.BadParameter(
            f"{action} acts on a Pull cluster's agent, a process of its own: stop or start that "
            "`fleetkeeper agent` instead (the members of `fleetkeeper up` are Push clusters)",
            param_hint="ACTION")
    if action not in KNOWN:
        raise typer.BadParameter(f"unknown action {action!r} (known: {', '.join(KNOWN)})",
                                 param_hint="ACTION")
    if action == SET_NODES:
        if nodes is None:
            raise typer.BadParameter("setNodes needs the node count: --nodes N", param_hint="--nodes")
        if not 0 <= nodes <= MAX_NODES:
            raise typer.BadParameter(f"must be 0 to {MAX_NODES}, got {nodes}", param_hint="--nodes")
    elif nodes is not None:
        raise typer.BadParameter(f"only setNodes takes a node count, not {action}", param_hint="--nodes")
    if action in (CRASH, HEAL):
        if workload is None:
            raise typer.BadParameter(f"{action} needs the workload: KIND/NAME, e.g. deployment/nginx",
                                     param_hint="WORKLOAD")
    elif workload is not None:
        raise typer.BadParameter(f"only {CRASH} and {HEAL} take a workload, not {action}",
                                 param_hint="WORKLOAD")


async def _set_crashed(session: connect.Session, cluster: str, workload: Workload, crash: bool) -> str:
    """Add ``workload`` to (or remove it from) the cluster's crashed list; the new value (the
    annotation is removed with the last one)."""
    for _ in range(CONFLICT_RETRIES):
        current = _simulated(await session.client.get(Cluster, cluster))
        listed = parse_workloads(current.annotations().get(CRASHED_ANNOTATION, "[]")) or []
        keep = [w for w in listed if w.key != workload.key]
        wanted = sorted([*keep, workload] if crash else keep, key=lambda w: w.key)
        value = json.dumps([w.to_dict() for w in wanted], separators=(",", ":"))
        patch: dict[str, Any] = {"metadata": {"resourceVersion": current.metadata.resource_version,
                                              "annotations": {CRASHED_ANNOTATION: value if wanted else None}}}
        try:
            await session.client.patch(Cluster, cluster, patch=patch, patch_type="merge")
        except errors.Conflict:
            continue
        return value
    raise connect.Failed(f"cluster/{cluster}: changed {CONFLICT_RETRIES} times while being annotated; "
                         "try again")


def _simulated(cluster: Cluster) -> Cluster:
    """``cluster``, if it is a simulated member; a member that is not would record the fault
    with nothing acting on it, so the drill is refused (exit 1) before anything is written."""
    endpoint = cluster.spec.api_endpoint or ""
    if not endpoint.startswith("simulated://"):
        raise connect.Failed(f"cluster/{cluster.name} is not a simulated member (apiEndpoint "
                             f"{endpoint or 'none'}): fault drills act only on the simulated members "
                             "of `fleetkeeper up`; nothing was written")
    return cluster


def fault(
    action: Annotated[str, typer.Argument(
        help="clusterDown, clusterBlackhole, clusterUnhealthy, clusterUp, setNodes, crashWorkload, "
             "healWorkload, dnsDown or dnsUp (as in scenarios)", show_default=False)],
    cluster: Annotated[str, typer.Argument(help="the member cluster", show_default=False)],
    workload: Annotated[str | None, typer.Argument(
        help="for crashWorkload and healWorkload: KIND/NAME, e.g. deployment/nginx",
        show_default=False)] = None,
    namespace: Annotated[str, typer.Option("--namespace", "-n", help="the workload's namespace")] = "default",
    nodes: Annotated[int | None, typer.Option(
        "--nodes", help="for setNodes: the member's node count from now on", show_default=False)] = None,
    kubeconfig: connect.KubeconfigOption = None,
) -> None:
    """Inject a fault into a simulated member cluster of a running `fleetkeeper up`.

    The fault is an annotation on the Cluster; it stays, across restarts, until undone.
    Watch the plane react: kubectl get clusters; kubectl get rb -A -w.
    """
    _check(action, workload, nodes)
    target = _workload(workload, namespace) if workload is not None else None

    async def act(session: connect.Session) -> tuple[str, str | None]:
        if target is not None:
            crashed = await _set_crashed(session, cluster, target, action == CRASH)
            return CRASHED_ANNOTATION, crashed if crashed != "[]" else None
        annotation, value = (NODES_ANNOTATION, str(nodes)) if action == SET_NODES else ACTIONS[action]
        _simulated(await session.client.get(Cluster, cluster))
        patch = {"metadata": {"annotations": {annotation: value}}}
        await session.client.patch(Cluster, cluster, patch=patch, patch_type="merge")
        return annotation, value

    annotation, value = connect.run(kubeconfig, act)
    done = f"annotated {annotation}={value}" if value is not None else f"removed {annotation}"
    typer.echo(f"cluster/{cluster} {action} ({done})")


__all__ = ["ACTIONS", "API_ANNOTATION", "CRASHED_ANNOTATION", "DNS_ANNOTATION", "NODES_ANNOTATION",
           "WORKLOAD_KINDS", "Workload", "apply_faults", "fault", "parse_workloads"]
