"""The nodes of a simulated cluster: created, counted, lost.

Nodes are named ``<cluster>-node-000``, ``-001`` … (so name order is creation order),
all Ready, each with the same allocatable resources. Each is both a scheduler
:class:`~fleetkeeper.members.simulated.scheduler.Node` and a stored ``v1.Node`` object
readers can get, list and watch.

``set_nodes(n)`` (the ``setNodes`` action) adds nodes under the lowest free names, or
removes the last ones by name. A removed node's pods start over: daemon pods are
deleted, every other pod is placed again — on another node if it fits, else Pending.
Deleting a Node object through the API has the same effect on that one node.

A node reads like a kind worker: an InternalIP and Hostname, a pod range (``network.py``),
``nodeInfo`` with the cluster's kubelet version, Debian and containerd, and the worker
role label ``kubectl get nodes`` prints as ROLES.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fleetkeeper.members.simulated import quantity
from fleetkeeper.members.simulated.daemonsets import DAEMONSET
from fleetkeeper.members.simulated.network import AddressPool, format_ip
from fleetkeeper.members.simulated.objects import GroupKind, Obj, ObjectKey
from fleetkeeper.members.simulated.scheduler import Node

if TYPE_CHECKING:
    from fleetkeeper.members.simulated.engine import Engine

NODE = GroupKind("", "Node")
#: what a simulated node runs (``status.nodeInfo``; a kind node's)
OS_IMAGE = "Debian GNU/Linux 12 (bookworm)"
KERNEL_VERSION = "6.8.0-48-generic"
CONTAINER_RUNTIME = "containerd://1.7.18"
ROLE_LABEL = "node-role.kubernetes.io/worker"


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
    engine.network.leave(name)
    for pod in engine.scheduler.remove_node(name):
        if pod.pinned_node is not None:
            engine.delete_pod(pod)
        else:
            engine.lifecycle.reschedule(pod)
            engine.pod_changed(pod)
    _wake_daemonsets(engine)


def _add(engine: Engine, name: str, allocatable: quantity.MilliList, kubelet_version: str) -> None:
    labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
              ROLE_LABEL: "", "type": "kwok"}
    address, pool = engine.network.join(name, max_pods=allocatable.get("pods", 0) // 1000)
    obj = engine.store.create(_node_object(name, labels, allocatable, kubelet_version, engine.now(),
                                           address=address, pool=pool))
    meta = obj["metadata"]
    engine.scheduler.add_node(Node(name=name, uid=meta["uid"], created=meta["creationTimestamp"],
                                   allocatable=dict(allocatable), labels=labels, address=address, pool=pool))


def _node_object(name: str, labels: dict[str, str], allocatable: quantity.MilliList, kubelet_version: str,
                 now: str, *, address: int, pool: AddressPool | None) -> Obj:
    resources = quantity.format_list(allocatable)
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": {"podCIDR": pool.cidr, "podCIDRs": [pool.cidr]} if pool is not None else {},
        "status": {
            "capacity": resources, "allocatable": resources,
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                            "message": "kubelet is posting ready status", "lastHeartbeatTime": now,
                            "lastTransitionTime": now}],
            "addresses": [{"type": "InternalIP", "address": format_ip(address)},
                          {"type": "Hostname", "address": name}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {"kubeletVersion": kubelet_version,
                         "operatingSystem": "linux", "architecture": "amd64", "osImage": OS_IMAGE,
                         "kernelVersion": KERNEL_VERSION, "containerRuntimeVersion": CONTAINER_RUNTIME,
                         "machineID": "", "systemUUID": "", "bootID": ""},
        },
    }


def _wake_daemonsets(engine: Engine) -> None:
    for ds in engine.store.items(DAEMONSET):
        engine.wake(ObjectKey.of(ds))


__all__ = ["NODE", "forget", "node_name", "set_nodes"]
