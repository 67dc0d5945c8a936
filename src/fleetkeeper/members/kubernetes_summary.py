"""Node and resource summaries of a member cluster, from its Nodes and Pods (pure functions).

What the cluster-status controller writes into ``Cluster.status``:

* ``nodeSummary`` — ``totalNum`` nodes, ``readyNum`` of them with condition
  ``Ready=True``;
* ``resourceSummary.allocatable`` — the sum of the nodes' ``status.allocatable``;
* ``allocating`` — the requests of pods not yet bound to a node (no ``spec.nodeName``);
* ``allocated`` — the requests of pods bound to a node that are not ``Succeeded`` or
  ``Failed``; each pod also counts one ``pods``.

A pod's request is Kubernetes' effective request (the sum of its containers, or the
largest init container when that is more; a container with only limits requests its
limits). The arithmetic is the simulated cluster's (integer milli-units, canonical
quantity strings), so a summary reads the same whichever backend produced it; ``cpu``,
``memory`` and ``pods`` are always present, zero when nothing counts.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from fleetkeeper.members.simulated import quantity
from fleetkeeper.members.simulated.pods import pod_requests

FINISHED_PHASES = frozenset({"Succeeded", "Failed"})
_BASE = {"cpu": 0, "memory": 0, "pods": 0}


def node_summary(nodes: Iterable[dict[str, Any]]) -> dict[str, int]:
    """``{totalNum, readyNum}`` of a list of Node objects."""
    total = ready = 0
    for node in nodes:
        total += 1
        conditions = (node.get("status") or {}).get("conditions") or []
        if any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions):
            ready += 1
    return {"totalNum": total, "readyNum": ready}


def resource_summary(nodes: Iterable[dict[str, Any]], pods: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """``{allocatable, allocating, allocated}`` as ResourceLists (see the module notes)."""
    allocatable = quantity.sum_lists(
        quantity.milli_list((node.get("status") or {}).get("allocatable")) for node in nodes)
    allocating: quantity.MilliList = {}
    allocated: quantity.MilliList = {}
    for pod in pods:
        spec = pod.get("spec") or {}
        if not spec.get("nodeName"):
            quantity.add_into(allocating, pod_requests(spec))
        elif (pod.get("status") or {}).get("phase") not in FINISHED_PHASES:
            quantity.add_into(allocated, pod_requests(spec))
    return {part: quantity.format_list({**_BASE, **values})
            for part, values in (("allocatable", allocatable), ("allocating", allocating),
                                 ("allocated", allocated))}


__all__ = ["FINISHED_PHASES", "node_summary", "resource_summary"]
