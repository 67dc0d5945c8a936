"""Deployment and ReplicaSet controllers.

A Deployment owns one ReplicaSet per pod template, named ``<deployment>-<hash>`` and
labelled ``pod-template-hash``, exactly as in Kubernetes; the ReplicaSet owns the pods.
A template change (a new image) makes a new ReplicaSet with every replica and scales
the old ones to zero at once: pods are *replaced*, not surged, so ``updatedReplicas``
counts pods of the new template while the old ones go away. Going back to an earlier
template scales its old ReplicaSet up again. Not modelled: ``minReadySeconds`` (a pod
is available as soon as it is ready), the progress deadline, ``paused``, and pruning old
ReplicaSets beyond ``revisionHistoryLimit``.

Status fields follow ``apps/v1``: ``observedGeneration``, ``replicas``,
``updatedReplicas``, ``readyReplicas``, ``availableReplicas``, ``unavailableReplicas``
and the ``Available`` / ``Progressing`` conditions with Kubernetes' reasons and
messages. ``Available`` is True when at least ``replicas - maxUnavailable`` pods are
available (``maxUnavailable`` from the rolling-update strategy, default 25 %, rounded
down; 0 for ``Recreate``).
"""

from __future__ import annotations

import math
from typing import Any

from fleetkeeper.members.simulated.controllers import (
    Runtime,
    conditions_of,
    omit_zero,
    owner_ref,
    pod_labels,
    scale,
    set_condition,
    spec_int,
    template_hash,
    write_status,
)
from fleetkeeper.members.simulated.events import involved
from fleetkeeper.members.simulated.objects import GroupKind, Obj, ObjectKey
from fleetkeeper.members.simulated.pods import Pod

REPLICASET = GroupKind("apps", "ReplicaSet")
DEPLOYMENT = GroupKind("apps", "Deployment")
HASH_LABEL = "pod-template-hash"
RS_CONTROLLER, DEPLOYMENT_CONTROLLER = "replicaset-controller", "deployment-controller"


def reconcile_replicaset(runtime: Runtime, rs: Obj) -> None:
    spec = rs.get("spec") or {}
    meta = rs["metadata"]
    template = spec.get("template") or {}
    revision = (meta.get("labels") or {}).get(HASH_LABEL) or template_hash(template)
    labels = pod_labels(template, {HASH_LABEL: revision} if HASH_LABEL in (meta.get("labels") or {}) else {})

    def create() -> Pod:
        return runtime.create_pod(rs, template, name=runtime.pod_name(meta["name"], meta["namespace"]),
                                  revision=revision, labels=labels)

    pods = [p for p in runtime.pods.owned_by(meta["uid"]) if not p.finished]
    pods = scale(runtime, pods, want=spec_int(spec, "replicas", 1), owner=rs, component=RS_CONTROLLER,
                 create=create)
    ready = sum(1 for p in pods if p.ready)
    status = {"replicas": len(pods), "fullyLabeledReplicas": len(pods), "readyReplicas": ready,
              "availableReplicas": ready, "observedGeneration": meta["generation"]}
    write_status(runtime, rs, omit_zero(status, "fullyLabeledReplicas", "readyReplicas", "availableReplicas"))


def reconcile_deployment(runtime: Runtime, deploy: Obj) -> None:
    spec = deploy.get("spec") or {}
    meta = deploy["metadata"]
    replicas = spec_int(spec, "replicas", 1)
    template = spec.get("template") or {}
    revision = template_hash(template)
    keys = [key for key in runtime.store.dependents(meta["uid"]) if key.group_kind == REPLICASET]
    owned = [rs for rs in map(runtime.store.get, keys) if rs is not None]
    current = next((rs for rs in owned if _revision(rs) == revision), None)
    if current is None:
        current = runtime.store.create(_new_replicaset(deploy, template, revision, replicas))
        if replicas:
            _scaled(runtime, deploy, current, 0, replicas)
    else:
        _scale_replicaset(runtime, deploy, current, replicas)
    for old in owned:
        if old is not current:
            _scale_replicaset(runtime, deploy, old, 0)
    _write_deployment_status(runtime, deploy, current, owned)


def _new_replicaset(deploy: Obj, template: dict[str, Any], revision: str, replicas: int) -> Obj:
    meta = deploy["metadata"]
    spec = deploy.get("spec") or {}
    labels = {**((template.get("metadata") or {}).get("labels") or {}), HASH_LABEL: revision}
    selector = dict(spec.get("selector") or {})
    selector["matchLabels"] = {**(selector.get("matchLabels") or {}), HASH_LABEL: revision}
    rs_template = {**template, "metadata": {**(template.get("metadata") or {}), "labels": labels}}
    return {
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": f"{meta['name']}-{revision}", "namespace": meta["namespace"], "labels": labels,
                     "annotations": {"deployment.kubernetes.io/desired-replicas": str(replicas)},
                     "ownerReferences": [owner_ref(deploy)]},
        "spec": {"replicas": replicas, "selector": selector, "template": rs_template},
    }


def _revision(rs: Obj) -> str | None:
    labels: dict[str, str] = rs["metadata"].get("labels") or {}
    return labels.get(HASH_LABEL)


def _scale_replicaset(runtime: Runtime, deploy: Obj, rs: Obj, replicas: int) -> None:
    spec = rs.get("spec") or {}
    before = spec_int(spec, "replicas", 1)
    if before != replicas:
        runtime.store.replace(ObjectKey.of(rs), spec={**spec, "replicas": replicas})
        _scaled(runtime, deploy, rs, before, replicas)


def _scaled(runtime: Runtime, deploy: Obj, rs: Obj, before: int, after: int) -> None:
    way = "up" if after > before else "down"
    runtime.events.record(involved(deploy), "ScalingReplicaSet",
                          f"Scaled {way} replica set {rs['metadata']['name']} from {before} to {after}",
                          component=DEPLOYMENT_CONTROLLER)


def _max_unavailable(spec: dict[str, Any], replicas: int) -> int:
    strategy = spec.get("strategy") or {}
    if strategy.get("type") == "Recreate":
        return 0
    rolling = strategy.get("rollingUpdate") or {}
    unavailable = _int_or_percent(rolling.get("maxUnavailable", "25%"), replicas, round_up=False)
    surge = _int_or_percent(rolling.get("maxSurge", "25%"), replicas, round_up=True)
    return 1 if unavailable == 0 and surge == 0 else unavailable


def _int_or_percent(value: Any, total: int, *, round_up: bool) -> int:
    if isinstance(value, str) and value.endswith("%"):
        exact = int(value[:-1]) * total / 100
        return math.ceil(exact) if round_up else math.floor(exact)
    return int(value)


def _write_deployment_status(runtime: Runtime, deploy: Obj, current: Obj, owned: list[Obj]) -> None:
    spec = deploy.get("spec") or {}
    replicas = spec_int(spec, "replicas", 1)
    uids = {current["metadata"]["uid"], *(rs["metadata"]["uid"] for rs in owned)}
    every = [p for uid in sorted(uids) for p in runtime.pods.owned_by(uid) if not p.finished]
    updated = sum(1 for p in runtime.pods.owned_by(current["metadata"]["uid"]) if not p.finished)
    available = sum(1 for p in every if p.ready)
    now = runtime.now()
    conditions = conditions_of(deploy)
    minimum = available >= replicas - _max_unavailable(spec, replicas)
    set_condition(conditions, "Available", status=minimum, now=now, with_update_time=True,
                  reason="MinimumReplicasAvailable" if minimum else "MinimumReplicasUnavailable",
                  message="Deployment has minimum availability." if minimum
                  else "Deployment does not have minimum availability.")
    name = current["metadata"]["name"]
    done = updated == replicas == len(every) and available >= replicas
    progress = "has successfully progressed" if done else "is progressing"
    set_condition(conditions, "Progressing", status=True, now=now, with_update_time=True,
                  reason="NewReplicaSetAvailable" if done else "ReplicaSetUpdated",
                  message=f'ReplicaSet "{name}" {progress}.')
    status = {
        "observedGeneration": deploy["metadata"]["generation"], "replicas": len(every),
        "updatedReplicas": updated, "readyReplicas": available, "availableReplicas": available,
        "unavailableReplicas": max(0, replicas - available), "conditions": conditions,
    }
    omit_zero(status, "replicas", "updatedReplicas", "readyReplicas", "availableReplicas",
              "unavailableReplicas")
    write_status(runtime, deploy, status)


__all__ = ["DEPLOYMENT", "HASH_LABEL", "REPLICASET", "reconcile_deployment", "reconcile_replicaset"]
