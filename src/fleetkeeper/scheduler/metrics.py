"""Karmada's scheduler metrics (``karmada_scheduler_*``), with its labels and buckets.

* ``schedule_attempts_total{result, schedule_type}`` and
  ``e2e_scheduling_duration_seconds{result, schedule_type}`` — one per scheduling run of
  a binding: ``result`` is ``scheduled`` or ``error`` (an unschedulable binding is an
  ``error``, as in Karmada), ``schedule_type`` is ``ReconcileSchedule`` or ``ScaleSchedule``;
* ``scheduling_algorithm_duration_seconds{schedule_step}`` — ``Filter``, ``Score``,
  ``Select`` and ``AssignReplicas`` of a run;
* ``queue_incoming_bindings_total{event}`` — bindings queued, by why (``BindingAdd``,
  ``BindingUpdate``, ``ClusterChanged``, ``ScheduleAttemptFailure``);
* ``scheduler_pending_bindings{queue}`` (Karmada's scheduling-queue gauge) — bindings
  ``active`` (ready to be scheduled), in ``backoff`` (waiting to be retried) and
  ``unschedulable`` (parked until a cluster changes), read from the live schedulers when
  ``/metrics`` is scraped (:data:`SCHEDULERS`);
* ``framework_extension_point_duration_seconds{extension_point, result}`` and
  ``plugin_execution_duration_seconds{plugin, extension_point, result}`` — the filter
  and score plugins; a plugin's verdicts are computed once per snapshot for all its
  clusters (see :mod:`~fleetkeeper.scheduler.framework`), and that sweep is what is timed.

Times are intervals of a :data:`Timer` — the scheduler's injected clock — and a scheduler
made without one (the what-if CLI) observes no durations. Children are bound once per
label set and kept; the counters and histograms are :mod:`~fleetkeeper.runtime.tally`
families, turned into samples only when ``/metrics`` is scraped.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator
from typing import Protocol

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import REGISTRY, Collector

from fleetkeeper.runtime.karmada_metrics import child
from fleetkeeper.runtime.tally import CounterFamily, HistogramFamily

#: a monotonic reading in seconds (the injected clock's)
Timer = Callable[[], float]

SCHEDULED, ERROR = "scheduled", "error"
RECONCILE_SCHEDULE, SCALE_SCHEDULE = "ReconcileSchedule", "ScaleSchedule"
FILTER, SCORE, SELECT, ASSIGN = "Filter", "Score", "Select", "AssignReplicas"
BINDING_ADD, BINDING_UPDATE, CLUSTER_CHANGED, ATTEMPT_FAILURE = (
    "BindingAdd", "BindingUpdate", "ClusterChanged", "ScheduleAttemptFailure")
PREFIX = "karmada_scheduler_"

ATTEMPTS = CounterFamily(PREFIX + "schedule_attempts_total",
                         "Number of attempts to schedule a ResourceBinding or ClusterResourceBinding",
                         ["result", "schedule_type"])
E2E_SECONDS = HistogramFamily(PREFIX + "e2e_scheduling_duration_seconds", "E2e scheduling latency in seconds",
                              ["result", "schedule_type"], buckets=tuple(0.001 * 2 ** n for n in range(15)))
ALGORITHM_SECONDS = HistogramFamily(PREFIX + "scheduling_algorithm_duration_seconds",
                                    "Scheduling algorithm latency in seconds(exclude scale scheduler)",
                                    ["schedule_step"], buckets=tuple(0.001 * 2 ** n for n in range(15)))
INCOMING = CounterFamily(PREFIX + "queue_incoming_bindings_total",
                         "Number of ResourceBinding and ClusterResourceBinding objects added to scheduling "
                         "queues by event type.", ["event"])
EXTENSION_POINT_SECONDS = HistogramFamily(PREFIX + "framework_extension_point_duration_seconds",
                                          "Latency for running all plugins of a specific extension point.",
                                          ["extension_point", "result"],
                                          buckets=tuple(0.0001 * 2 ** n for n in range(12)))
PLUGIN_SECONDS = HistogramFamily(PREFIX + "plugin_execution_duration_seconds",
                                 "Duration for running a plugin at a specific extension point.",
                                 ["plugin", "extension_point", "result"],
                                 buckets=tuple(0.00001 * 1.5 ** n for n in range(20)))

class Pending(Protocol):
    """What the scrape reads of a live scheduler: its bindings by queue."""

    def pending(self) -> tuple[int, int, int]:
        """(active, backoff, unschedulable)."""
        ...


#: the schedulers alive in this process (a scheduler adds itself when made)
SCHEDULERS: weakref.WeakSet[Pending] = weakref.WeakSet()


class PendingCollector(Collector):
    """``scheduler_pending_bindings{queue}``, summed over :data:`SCHEDULERS`."""

    def describe(self) -> list[Metric]:
        return []

    def collect(self) -> Iterator[Metric]:
        family = GaugeMetricFamily(
            "scheduler_pending_bindings",
            "Number of pending bindings, by the queue type. 'active' means number of bindings in activeQ; "
            "'backoff' means number of bindings in backoffQ; 'unschedulable' means number of bindings in "
            "unschedulableBindings that the scheduler attempted to schedule and failed.",
            labels=["queue"])
        totals = [0, 0, 0]
        for scheduler in list(SCHEDULERS):
            for index, count in enumerate(scheduler.pending()):
                totals[index] += count
        for queue, count in zip(("active", "backoff", "unschedulable"), totals, strict=True):
            family.add_metric([queue], float(count))
        yield family


REGISTRY.register(PendingCollector())


def attempt(schedule_type: str, seconds: float, *, failed: bool) -> None:
    """One scheduling run of a binding."""
    result = ERROR if failed else SCHEDULED
    child(ATTEMPTS, result, schedule_type).inc()
    child(E2E_SECONDS, result, schedule_type).observe(seconds)


def step(name: str, seconds: float) -> None:
    """One step of the algorithm."""
    child(ALGORITHM_SECONDS, name).observe(seconds)


def incoming(event: str) -> None:
    """A binding queued for scheduling, and why."""
    child(INCOMING, event).inc()


__all__ = [
    "ALGORITHM_SECONDS", "ASSIGN", "ATTEMPTS", "ATTEMPT_FAILURE", "BINDING_ADD", "BINDING_UPDATE",
    "CLUSTER_CHANGED", "E2E_SECONDS", "ERROR", "EXTENSION_POINT_SECONDS", "FILTER", "INCOMING",
    "PLUGIN_SECONDS", "RECONCILE_SCHEDULE", "SCALE_SCHEDULE", "SCHEDULED", "SCHEDULERS", "SCORE", "SELECT",
    "Pending", "PendingCollector", "Timer", "attempt", "incoming", "step",
]
