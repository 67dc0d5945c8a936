"""``whatif --simulate``: the live fleet as a scenario, and what its run says about each workload.

A what-if decides where workloads go; a simulated failure also says *when*: the whole
control plane runs in virtual time (:mod:`fleetkeeper.simulation`) on simulated members
sized like the real ones, the named clusters go down, and the failover timeline tells,
per workload, when it was rescheduled and when its replacement was ready (the eviction
completed). Pure: :func:`scenario_doc` builds the scenario document from API objects the
caller read, :func:`outcomes` reads the run's timeline.

Each member becomes a simulated cluster with its labels, location, its own taints (not
those the plane adds for readiness) and its node count, each node holding an equal share
of the cluster's allocatable resources. Templates and policies are copied without their
status and server-set metadata; the plane's options are the defaults, but for the circuit
breaker's threshold. Each failure is injected :data:`DOWN_AT` seconds into the run, once the
fleet has settled, and the run lasts ``horizon`` seconds more.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from fleetkeeper.api import constants, timeline
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.quantity import parse_quantity
from fleetkeeper.simulation.driver import TimelineLine

#: seconds into the run the clusters go down (the fleet is placed and Healthy by then)
DOWN_AT = 60
#: the plane's own taints, which the simulated plane adds by itself
_PLANE_TAINTS = (constants.TAINT_CLUSTER_NOT_READY, "cluster.karmada.io/unreachable")
_META = ("name", "namespace", "labels", "annotations")


def cluster_def(cluster: Cluster) -> dict[str, Any]:
    """The scenario's ``spec.clusters`` entry for a member."""
    spec, status = cluster.spec, cluster.status
    out: dict[str, Any] = {"name": cluster.name, "labels": dict(cluster.labels())}
    for key, value in (("provider", spec.provider), ("region", spec.region),
                       ("zone", spec.zone or next(iter(spec.zones or ()), None))):
        if value:
            out[key] = value
    taints = [t.to_dict() for t in spec.taints or () if t.key not in _PLANE_TAINTS]
    if taints:
        out["taints"] = [{k: v for k, v in t.items() if k != "timeAdded"} for t in taints]
    nodes = status.node_summary.total_num if status.node_summary is not None else 0
    allocatable = (status.resource_summary.allocatable if status.resource_summary else None) or {}
    if nodes > 0:
        out["nodes"] = nodes
        out["nodeResources"] = _share(allocatable, nodes)
    return out


def _share(allocatable: Mapping[str, str], nodes: int) -> dict[str, str]:
    """One node's share of the cluster's CPU, memory and pods."""
    out = {}
    for name in ("cpu", "memory", "pods"):
        if name in allocatable:
            amount: Decimal = parse_quantity(allocatable[name]) / nodes
            out[name] = f"{int(amount * 1000)}m" if name == "cpu" else str(int(amount))
    return out


def manifest(obj: Mapping[str, Any]) -> dict[str, Any]:
    """An object as one would apply it: no status, only the metadata a person writes."""
    meta = obj.get("metadata") or {}
    kept = {k: meta[k] for k in _META if meta.get(k)}
    return {**{k: v for k, v in obj.items() if k not in ("metadata", "status")}, "metadata": kept}


def scenario_doc(clusters: Iterable[Cluster], resources: Iterable[Mapping[str, Any]], down: Iterable[str], *,
                 threshold: float, horizon: float) -> dict[str, Any]:
    """The scenario: the fleet and its resources, ``down`` failing at :data:`DOWN_AT`."""
    listed = sorted(clusters, key=lambda c: c.name)
    first = {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "name": listed[0].name} \
        if listed else None
    look = [{"object": first, "exists": True}] if first else []
    return {"apiVersion": "fleetkeeper.io/v1alpha1", "kind": "Scenario", "metadata": {"name": "whatif"},
            "spec": {"settings": {"evictionCircuitBreakerThreshold": threshold},
                     "clusters": [cluster_def(c) for c in listed],
                     "resources": [manifest(r) for r in resources],
                     "timeline": [{"at": f"{DOWN_AT}s", "do": [{"clusterDown": name} for name in down]},
                                  {"at": f"{DOWN_AT + horizon:g}s", "expect": look}]}}


@dataclass(frozen=True, slots=True)
class Simulated:
    """One workload's simulated failover: seconds after the failure (``None``: not within the run)."""

    binding: str
    rescheduled_after: float | None
    ready_after: float | None

    def as_dict(self) -> dict[str, Any]:
        return {"binding": self.binding, "rescheduledAfterSeconds": _seconds(self.rescheduled_after),
                "readyAfterSeconds": _seconds(self.ready_after)}


def _seconds(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def subject(key: str) -> str:
    """The timeline subject of a binding key (``rb/NS/NAME``, ``crb/NAME``)."""
    return f"rb/{key}" if "/" in key else f"crb/{key}"


def outcomes(lines: Iterable[TimelineLine], keys: Iterable[str], *, down_at: float = DOWN_AT
             ) -> list[Simulated]:
    """When each binding of ``keys`` was rescheduled and its eviction completed, after ``down_at``."""
    first: dict[tuple[str, str], float] = {}
    for line in lines:
        if line.t >= down_at and line.action in (timeline.SCHEDULED, timeline.EVICTION_COMPLETED):
            first.setdefault((line.subject, line.action), line.t - down_at)
    return [Simulated(key, first.get((subject(key), timeline.SCHEDULED)),
                      first.get((subject(key), timeline.EVICTION_COMPLETED))) for key in keys]


__all__ = ["DOWN_AT", "Simulated", "cluster_def", "manifest", "outcomes", "scenario_doc", "subject"]
