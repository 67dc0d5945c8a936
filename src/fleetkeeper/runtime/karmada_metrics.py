"""Karmada's controller metrics, with its names, labels and buckets, for the controllers.

Karmada's dashboards and alerts read these series; the controllers that do the same
work report them here (the cluster gauges — ``cluster_ready_state`` and the node and
resource figures — are read from the caches at scrape time instead, by
:mod:`~fleetkeeper.controllers.fleet_metrics`):

* ``cluster_sync_status_duration_seconds{member_cluster}`` — one status sync of a cluster;
* ``eviction_queue_depth{name}``, ``eviction_kind_total{member_cluster, resource_kind}`` —
  the bindings waiting for the taint manager to evict them (gauges), by queue
  (``binding-eviction``, ``cluster-binding-eviction``) and by cluster and kind;
* ``eviction_processing_latency_seconds{name}``, ``eviction_processing_total{name, result}``;
* ``binding_sync_work_duration_seconds{result}`` — a binding turned into its Works;
* ``work_sync_workload_duration_seconds{result}`` — a Work applied to its member;
* ``create_resource_to_cluster``, ``update_resource_to_cluster``, ``delete_resource_from_cluster``
  — writes to members by ``result``, ``apiversion``, ``kind``, ``member_cluster`` (and
  ``recreate`` / ``operationResult``);
* ``policy_apply_attempts_total{result}``, ``resource_apply_policy_duration_seconds{result}``
  — a resource template claimed by a policy;
* ``karmada_build_info`` — 1, with the version as labels.

``result`` is ``success`` or ``error``, as Karmada's. Every child a hot loop uses is
bound once and kept (:func:`child`), so a report is a dictionary hit and an addition: the
counters and histograms are :mod:`~fleetkeeper.runtime.tally` families, turned into samples
only when ``/metrics`` is scraped. Durations are intervals of the injected clock, like the
reconcile durations.
"""

from __future__ import annotations

import platform
from typing import Protocol, TypeVar

from prometheus_client import Gauge, Histogram

import fleetkeeper
from fleetkeeper.runtime.tally import CounterFamily, HistogramFamily

SUCCESS, ERROR = "success", "error"
#: Karmada's buckets: 1 ms doubling, 12 (work and policy syncs) or 15 (evictions) of them
SYNC_BUCKETS = tuple(0.001 * 2 ** n for n in range(12))
EVICTION_BUCKETS = tuple(0.001 * 2 ** n for n in range(15))
MEMBER = "member_cluster"

CLUSTER_SYNC_SECONDS = HistogramFamily("cluster_sync_status_duration_seconds",
                                       "Duration in seconds for syncing the status of the cluster once.",
                                       [MEMBER], buckets=Histogram.DEFAULT_BUCKETS)
EVICTION_QUEUE_DEPTH = Gauge("eviction_queue_depth", "Current depth of the eviction queue", ["name"])
EVICTION_KIND = Gauge("eviction_kind_total", "Number of resources in the eviction queue by resource kind",
                      [MEMBER, "resource_kind"])
EVICTION_SECONDS = HistogramFamily("eviction_processing_latency_seconds",
                                   "Latency of processing an eviction task in seconds", ["name"],
                                   buckets=EVICTION_BUCKETS)
EVICTION_TOTAL = CounterFamily("eviction_processing_total", "Total number of evictions processed",
                               ["name", "result"])
SYNC_WORK_SECONDS = HistogramFamily(
    "binding_sync_work_duration_seconds",
    "Duration in seconds to sync works for ResourceBinding and ClusterResourceBinding objects. By the "
    "result, 'error' means a binding failed to sync works. Otherwise 'success'.", ["result"],
    buckets=SYNC_BUCKETS)
SYNC_WORKLOAD_SECONDS = HistogramFamily(
    "work_sync_workload_duration_seconds",
    "Duration in seconds to sync the workload to a target cluster. By the result, 'error' means a work "
    "failed to sync workloads. Otherwise 'success'.", ["result"], buckets=SYNC_BUCKETS)
CREATE_TO_CLUSTER = CounterFamily(
    "create_resource_to_cluster", "Number of creation operations against a target member cluster.",
    ["result", "apiversion", "kind", MEMBER, "recreate"])
UPDATE_TO_CLUSTER = CounterFamily(
    "update_resource_to_cluster", "Number of updating operation of the resource to a target member cluster.",
    ["result", "apiversion", "kind", MEMBER, "operationResult"])
DELETE_FROM_CLUSTER = CounterFamily(
    "delete_resource_from_cluster", "Number of deletion operations against a target member cluster.",
    ["result", "apiversion", "kind", MEMBER])
POLICY_APPLY_ATTEMPTS = CounterFamily(
    "policy_apply_attempts_total",
    "Number of attempts to be applied for a PropagationPolicy or ClusterPropagationPolicy. By the result, "
    "'error' means a resource template failed to apply the policy. Otherwise 'success'.", ["result"])
POLICY_APPLY_SECONDS = HistogramFamily(
    "resource_apply_policy_duration_seconds",
    "Duration in seconds to apply a PropagationPolicy or ClusterPropagationPolicy for the resource "
    "templates.",
    ["result"], buckets=SYNC_BUCKETS)
BUILD_INFO = Gauge("karmada_build_info",
                   "Karmada build metadata exposed as labels with a constant value of 1.",
                   ["git_version", "git_commit", "git_short_commit", "git_tree_state", "build_date",
                    "go_version", "compiler", "platform"])
BUILD_INFO.labels(f"v{fleetkeeper.__version__}", "", "", "", "", f"python{platform.python_version()}",
                  platform.python_implementation().lower(),
                  f"{platform.system().lower()}/{platform.machine().lower()}").set(1)

C = TypeVar("C", covariant=True)


class Family(Protocol[C]):
    """A labelled series family: a tally family or a prometheus_client gauge."""

    def labels(self, *labelvalues: str) -> C: ...

    def remove(self, *labelvalues: str) -> None: ...


_CHILDREN: dict[tuple[int, tuple[str, ...]], object] = {}


def child(family: Family[C], *labels: str) -> C:
    """``family``'s child for ``labels``, bound once per label set and kept."""
    key = (id(family), labels)
    found = _CHILDREN.get(key)
    if found is None:
        found = _CHILDREN[key] = family.labels(*labels)
    return found  # type: ignore[return-value]


def drop(family: Family[object], *labels: str) -> None:
    """Remove ``family``'s child for ``labels`` (a deleted cluster's), if it has one."""
    if _CHILDREN.pop((id(family), labels), None) is not None:
        family.remove(*labels)


def result_of(failed: bool) -> str:
    """Karmada's ``result`` label."""
    return ERROR if failed else SUCCESS


__all__ = [
    "BUILD_INFO", "CLUSTER_SYNC_SECONDS", "CREATE_TO_CLUSTER", "DELETE_FROM_CLUSTER", "ERROR",
    "EVICTION_KIND", "EVICTION_QUEUE_DEPTH", "EVICTION_SECONDS", "EVICTION_TOTAL", "POLICY_APPLY_ATTEMPTS",
    "POLICY_APPLY_SECONDS", "SUCCESS", "SYNC_WORKLOAD_SECONDS", "SYNC_WORK_SECONDS", "UPDATE_TO_CLUSTER",
    "child", "drop", "result_of",
]
