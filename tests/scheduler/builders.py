"""Small builders for scheduler tests: clusters, bindings and placements from plain dicts.

Cases read like the YAML a user would write; the builders fill in what every object
needs (sync mode, the Deployment API, a resource reference) so each table row only
states what the case is about.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.placement import Placement
from fleetkeeper.api.work import ResourceBinding, ResourceBindingSpec, ResourceBindingStatus
from fleetkeeper.scheduler.snapshot import ClusterFacts, Snapshot, facts_of

NOW = datetime(2026, 1, 1, tzinfo=UTC)
DEPLOYMENT_API = [{"groupVersion": "apps/v1", "resources": [{"name": "deployments", "kind": "Deployment"}]}]


def cluster(name: str, *, labels: dict[str, str] | None = None, taints: list[dict[str, Any]] | None = None,
            provider: str | None = None, region: str | None = None, zones: list[str] | None = None,
            apis: list[dict[str, Any]] | None = None, summary: dict[str, Any] | None = None,
            models: list[dict[str, Any]] | None = None, deleting: bool = False) -> Cluster:
    """A member cluster serving Deployments, with what the case needs."""
    spec: dict[str, Any] = {"syncMode": "Push"}
    for key, value in (("provider", provider), ("region", region), ("zones", zones), ("taints", taints),
                       ("resourceModels", models)):
        if value is not None:
            spec[key] = value
    status: dict[str, Any] = {"apiEnablements": DEPLOYMENT_API if apis is None else apis}
    if summary is not None:
        status["resourceSummary"] = summary
    meta: dict[str, Any] = {"name": name, "labels": labels or {}}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return Cluster.from_dict({"metadata": meta, "spec": spec, "status": status})


def pods(n: int) -> dict[str, Any]:
    """A resource summary with room for ``n`` pods and nothing else."""
    return {"allocatable": {"pods": str(n)}}


def facts(name: str, **kwargs: Any) -> ClusterFacts:
    return facts_of(cluster(name, **kwargs))


def snapshot(*clusters: Cluster) -> Snapshot:
    return Snapshot(facts_of(c) for c in clusters)


def placement(data: dict[str, Any]) -> Placement:
    return Placement.from_dict(data)


def binding(placement: dict[str, Any] | None = None, *, replicas: int = 0,
            clusters: list[dict[str, Any]] | None = None,
            uid: str = "", requirements: dict[str, Any] | None = None, status: dict[str, Any] | None = None,
            name: str = "nginx", **spec: Any) -> ResourceBinding:
    """A ResourceBinding for Deployment ``name`` in ``default``."""
    body: dict[str, Any] = {
        "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default", "name": name,
                     "uid": uid},
        "replicas": replicas,
        **spec,
    }
    if placement is not None:
        body["placement"] = placement
    if clusters is not None:
        body["clusters"] = clusters
    if requirements is not None:
        body["replicaRequirements"] = requirements
    return ResourceBinding.from_dict({
        "metadata": {"name": f"{name}-deployment", "namespace": "default"},
        "spec": body,
        "status": status or {},
    })


def spec_of(**kwargs: Any) -> ResourceBindingSpec:
    return binding(**kwargs).spec


def empty_status() -> ResourceBindingStatus:
    return ResourceBindingStatus()


def static_weights(*pairs: tuple[str, int]) -> dict[str, Any]:
    """A Divided/Weighted replicaScheduling with one static weight per cluster name."""
    return {
        "replicaSchedulingType": "Divided",
        "replicaDivisionPreference": "Weighted",
        "weightPreference": {"staticWeightList": [
            {"targetCluster": {"clusterNames": [name]}, "weight": weight} for name, weight in pairs]},
    }


DYNAMIC = {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted",
           "weightPreference": {"dynamicWeight": "AvailableReplicas"}}
AGGREGATED = {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}
DUPLICATED = {"replicaSchedulingType": "Duplicated"}
