"""Fleet metrics: the member clusters and the bindings as Prometheus gauges.

What an operator alerts on during a failover, read from the plane's shared informer
caches when ``/metrics`` is scraped (nothing is counted per event, so the failover
pays nothing for it):

* ``fleetkeeper_cluster_ready{cluster, status}`` — 1 for the status of the cluster's
  ``Ready`` condition (``True``, ``False`` or ``Unknown``; a cluster never probed is
  ``Unknown``), 0 for the other two;
* ``fleetkeeper_cluster_taints{cluster, effect}`` — how many taints of each effect the
  cluster carries (a ``NoExecute`` count above 0 is a cluster being evacuated);
* ``fleetkeeper_bindings{state}`` — ResourceBindings and ClusterResourceBindings:
  ``total``, ``scheduled`` (placed on at least one cluster), ``fully_applied``,
  ``unhealthy`` (some copy reports a health other than Healthy) and ``evicting``
  (graceful-eviction tasks pending: an old copy kept until its replacement is healthy).

Beside them, Karmada's cluster gauges with its names and its ``member_cluster`` label,
from the same caches: ``cluster_ready_state`` (1 when Ready is True, else 0),
``cluster_node_number``, ``cluster_ready_node_number``, and
``cluster_{cpu,memory,pod}_{allocatable,allocated}_*`` from the cluster's resource summary
(CPU in cores, memory in bytes; a cluster without a summary has none of these).

One collector is registered in the process's default registry; every running plane
adds its caches to it (and removes them when it stops), so the figures are the sum of
the planes of the process — ``fleetkeeper up`` runs one. Pull agents export none.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import REGISTRY, Collector

from fleetkeeper.api import constants
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.conditions import get_condition, is_condition_true
from fleetkeeper.api.core import ResourceList
from fleetkeeper.api.quantity import parse_quantity
from fleetkeeper.runtime.bindings import BindingInformers
from fleetkeeper.runtime.informer import Informer
from fleetkeeper.runtime.spec import ControllerSpec, Deps, Runs

READY_STATUSES = ("True", "False", "Unknown")
EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
BINDING_STATES = ("total", "scheduled", "fully_applied", "unhealthy", "evicting")
#: Karmada's resource gauges: (name, help, summary field, resource)
RESOURCE_GAUGES = (
    ("cluster_memory_allocatable_bytes", "Allocatable cluster memory resource in bytes.", "allocatable",
     "memory"),
    ("cluster_cpu_allocatable_number", "Number of allocatable CPU in the cluster.", "allocatable", "cpu"),
    ("cluster_pod_allocatable_number", "Number of allocatable pods in the cluster.", "allocatable", "pods"),
    ("cluster_memory_allocated_bytes", "Allocated cluster memory resource in bytes.", "allocated", "memory"),
    ("cluster_cpu_allocated_number", "Number of allocated CPU in the cluster.", "allocated", "cpu"),
    ("cluster_pod_allocated_number", "Number of allocated pods in the cluster.", "allocated", "pods"),
)


@dataclass(frozen=True, eq=False)
class Caches:
    """One plane's caches the collector reads."""

    clusters: Informer[Cluster]
    bindings: BindingInformers


class FleetCollector(Collector):
    """Reads every registered plane's caches at scrape time (see the module notes)."""

    def __init__(self) -> None:
        self.planes: list[Caches] = []

    def describe(self) -> list[Metric]:
        return []  # the series depend on the clusters; nothing is collected at registration

    def collect(self) -> Iterator[Metric]:
        ready = GaugeMetricFamily(
            "fleetkeeper_cluster_ready", "1 when the cluster's Ready condition has this status, else 0.",
            labels=["cluster", "status"])
        taints = GaugeMetricFamily("fleetkeeper_cluster_taints", "Taints on the member cluster, by effect.",
                                   labels=["cluster", "effect"])
        bindings = GaugeMetricFamily("fleetkeeper_bindings",
                                     "Resource bindings: total, scheduled, fully applied, with an unhealthy "
                                     "copy, with graceful-eviction tasks pending.", labels=["state"])
        states: Counter[str] = Counter()
        for plane in list(self.planes):
            for cluster in plane.clusters.list():
                condition = get_condition(cluster.status.conditions, constants.COND_READY)
                status = condition.status if condition is not None else "Unknown"
                for candidate in READY_STATUSES:
                    ready.add_metric([cluster.name, candidate], 1.0 if candidate == status else 0.0)
                effects: Counter[str] = Counter(str(taint.effect) for taint in cluster.spec.taints or [])
                for effect in EFFECTS:
                    taints.add_metric([cluster.name, effect], float(effects[effect]))
            for binding in plane.bindings.list():
                states["total"] += 1
                states["scheduled"] += bool(binding.spec.clusters)
                states["fully_applied"] += is_condition_true(binding.status.conditions,
                                                             constants.COND_FULLY_APPLIED)
                states["unhealthy"] += any(item.health not in (None, "Healthy")
                                           for item in binding.status.aggregated_status or [])
                states["evicting"] += bool(binding.spec.graceful_eviction_tasks)
        for state in BINDING_STATES:
            bindings.add_metric([state], float(states[state]))
        yield from (ready, taints, bindings)
        yield from self._karmada_clusters()

    def _karmada_clusters(self) -> Iterator[Metric]:
        """Karmada's cluster gauges (see the module notes)."""
        label = ["member_cluster"]
        state = GaugeMetricFamily("cluster_ready_state", "State of the cluster (1 if ready, 0 otherwise).",
                                  labels=label)
        nodes = GaugeMetricFamily("cluster_node_number", "Number of nodes in the cluster.", labels=label)
        ready_nodes = GaugeMetricFamily("cluster_ready_node_number", "Number of ready nodes in the cluster.",
                                        labels=label)
        resources = [(GaugeMetricFamily(name, text, labels=label), field, resource)
                     for name, text, field, resource in RESOURCE_GAUGES]
        for plane in list(self.planes):
            for cluster in plane.clusters.list():
                status, name = cluster.status, [cluster.name]
                state.add_metric(name, float(is_condition_true(status.conditions, constants.COND_READY)))
                if status.node_summary is not None:
                    nodes.add_metric(name, float(status.node_summary.total_num))
                    ready_nodes.add_metric(name, float(status.node_summary.ready_num))
                summary = status.resource_summary
                for family, field, resource in resources:
                    amounts: ResourceList | None = getattr(summary, field) if summary is not None else None
                    if amounts is not None:
                        family.add_metric(name, _amount(amounts, resource))
        yield from (state, nodes, ready_nodes)
        yield from (family for family, _, _ in resources)


def _amount(amounts: ResourceList, resource: str) -> float:
    """A resource of a summary as a number (0 when absent or unreadable)."""
    try:
        return float(parse_quantity(amounts.get(resource, "0")))
    except ValueError:
        return 0.0


#: the process's collector, in the default registry (what ``/metrics`` serves)
COLLECTOR = FleetCollector()
REGISTRY.register(COLLECTOR)


class FleetMetrics:
    """Adds this plane's caches to :data:`COLLECTOR` while the plane runs (a runnable)."""

    needs_leader_election = False
    name = "fleet-metrics"

    def __init__(self, caches: Caches) -> None:
        self.caches = caches

    async def run(self) -> None:
        COLLECTOR.planes.append(self.caches)
        try:
            await asyncio.Event().wait()  # until the plane stops (cancelled)
        finally:
            COLLECTOR.planes.remove(self.caches)


def _new(deps: Deps) -> FleetMetrics:
    informers = deps.informers
    return FleetMetrics(Caches(informers.informer_for(Cluster), BindingInformers(informers)))


#: exports the fleet's state (control planes, not Pull agents)
SPEC = ControllerSpec(FleetMetrics.name, runnable=_new, runs=Runs.PLANE, leader_elected=False)


__all__ = ["BINDING_STATES", "COLLECTOR", "EFFECTS", "READY_STATUSES", "SPEC", "Caches", "FleetCollector",
           "FleetMetrics"]
