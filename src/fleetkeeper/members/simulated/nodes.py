"""The nodes of a simulated cluster: created, counted, lost.

Nodes are named ``<cluster>-node-000``, ``-001`` … (so name order is creation order),
all Ready, each with the same allocatable resources. Each is both a scheduler
:class:`~fleetkeeper.members.simulated.scheduler.Node` and a stored ``v1.Node`` object
readers can get, list and watch.

``set_nodes(n)`` (the ``setNodes`` action) adds nodes under the lowest free names, or
removes the last ones by name. A removed node's pods start over: daemon pods are
deleted, every other pod is placed again — on another node if it fits, else Pending.
Deleting a Node object through the API has the same effect on that one node.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fleetkeeper.members.simulated import quantity
from fleetkeeper.members.simulated.daemonsets import DAEMONSET
from fleetkeeper.members.simulated.objects import GroupKind, Obj, ObjectKey
from fleetkeeper.members.simulated.scheduler import Node

if TYPE_CHECKING:
    from fleetkeeper.members.simulated.engine import Engine

NODE = GroupKind("", "Node")


def node_name(cluster: str, index: int) -> str:
    return f"{cluster}-node-{index:03d}"


def set_nodes(engine: Engine, count: int, *, allocatable: quantity.MilliList, kubelet_version: str) -> None:
    """Make the cluster have ``count`` nodes."""
    if count < 0:
        raise ValueError(f"a cluster cannot have {count} nodes")
    current = [n.name for n in engine.scheduler.nodes]
    for name in current[count:][::-1]:
        engine.delete_object(ObjectKey("", "Node", "", name))
    taken = set(current)
    index = 0
    for _ in range(max(0, count - len(current))):
        while node_name(engine.name, index) in taken:
            index += 1
        name = node_name(engine.name, index)
        taken.add(name)
        _add(engine, name, allocatable, kubelet_version)
    if len(current) != count:
        engine.capacity_freed()
        _wake_daemonsets(engine)


def forget(engine: Engine, name: str) -> None:
    """A node is gone: its pods start over elsewhere (daemon pods are deleted)."""
    if engine.scheduler.node(name) is None:
        return
    for pod in engine.scheduler.remove_node(name):
        if pod.pinned_node is not None:
            engine.delete_pod(pod)
        else:
            engine.lifecycle.reschedule(pod)
            engine.pod_changed(pod)
    _wake_daemonsets(engine)


def _add(engine: Engine, name: str, allocatable: quantity.MilliList, kubelet_version: str) -> None:
    labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
              "type": "kwok"}
    obj = engine.store.create(_node_object(name, labels, allocatable, kubelet_version, engine.now()))
    meta = obj["metadata"]
    engine.scheduler.add_node(Node(name=name, uid=meta["uid"], created=meta["creationTimestamp"],
                                   allocatable=dict(allocatable), labels=labels))


def _node_object(name: str, labels: dict[str, str], allocatable: quantity.MilliList, kubelet_version: str,
                 now: str) -> Obj:
    resources = quantity.format_list(allocatable)
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": {},
        "status": {
            "capacity": resources, "allocatable": resources,
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                            "message": "kubelet is posting ready status", "lastHeartbeatTime": now,
                            "lastTransitionTime": now}],
            "nodeInfo": {"kubeletVersion": kubelet_version, "operatingSystem": "linux",
                         "architecture": "amd64"},
        },
    }


def _wake_daemonsets(engine: Engine) -> None:
    for ds in engine.store.items(DAEMONSET):
        engine.wake(ObjectKey.of(ds))


__all__ = ["NODE", "forget", "node_name", "set_nodes"]
