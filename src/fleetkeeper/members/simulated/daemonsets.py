"""DaemonSet controller: one pod per eligible node.

A node is eligible when it matches the template's ``nodeSelector``. Each daemon pod is
pinned to its node; if the node lacks room it may preempt lower-priority pods, else it
stays Pending there. Pods of removed nodes are deleted (the cluster wakes every
DaemonSet when the node set changes). A template change replaces every pod of the old
revision at once.

Status (``apps/v1``): ``desiredNumberScheduled`` (eligible nodes),
``currentNumberScheduled`` (of those, running a daemon pod), ``numberReady``,
``numberAvailable``, ``updatedNumberScheduled``, ``numberUnavailable``,
``numberMisscheduled`` (always 0 here) and ``observedGeneration``.
"""

from __future__ import annotations

from fleetkeeper.members.simulated.controllers import (
    Runtime,
    omit_zero,
    pod_labels,
    template_hash,
    write_status,
)
from fleetkeeper.members.simulated.events import involved
from fleetkeeper.members.simulated.objects import GroupKind, Obj
from fleetkeeper.members.simulated.pods import Pod

DAEMONSET = GroupKind("apps", "DaemonSet")
DAEMONSET_CONTROLLER = "daemonset-controller"


def reconcile_daemonset(runtime: Runtime, ds: Obj) -> None:
    spec = ds.get("spec") or {}
    meta = ds["metadata"]
    template = spec.get("template") or {}
    revision = template_hash(template)
    selector: dict[str, str] = (template.get("spec") or {}).get("nodeSelector") or {}
    eligible = [n.name for n in runtime.scheduler.nodes
                if all(n.labels.get(k) == v for k, v in selector.items())]
    by_node: dict[str, Pod] = {}
    for pod in runtime.pods.owned_by(meta["uid"]):
        node = pod.pinned_node or ""
        if node not in eligible or node in by_node or pod.revision != revision or pod.finished:
            runtime.delete_pod(pod)
            runtime.events.record(involved(ds), "SuccessfulDelete", f"Deleted pod: {pod.name}",
                                  component=DAEMONSET_CONTROLLER)
        else:
            by_node[node] = pod
    labels = pod_labels(template, {"controller-revision-hash": revision,
                                   "pod-template-generation": str(meta["generation"])})
    for node in eligible:
        if node not in by_node:
            name = runtime.pod_name(meta["name"], meta["namespace"])
            by_node[node] = runtime.create_pod(ds, template, name=name, revision=revision, labels=labels,
                                               pinned_node=node)
            runtime.events.record(involved(ds), "SuccessfulCreate", f"Created pod: {name}",
                                  component=DAEMONSET_CONTROLLER)
    pods = list(by_node.values())
    ready = sum(1 for p in pods if p.ready)
    status = {
        "currentNumberScheduled": sum(1 for p in pods if p.node is not None),
        "desiredNumberScheduled": len(eligible), "numberMisscheduled": 0, "numberReady": ready,
        "numberAvailable": ready, "numberUnavailable": len(eligible) - ready,
        "updatedNumberScheduled": sum(1 for p in pods if p.node is not None and p.revision == revision),
        "observedGeneration": meta["generation"],
    }
    omit_zero(status, "numberAvailable", "numberUnavailable", "updatedNumberScheduled")
    write_status(runtime, ds, status)


__all__ = ["DAEMONSET", "reconcile_daemonset"]
