"""Controller metrics: reconciles counted and timed per controller, kept cheap.

The worker loop reports each reconcile once, with its outcome (``success``,
``requeue_after``, ``error``, ``terminal``) and its duration as measured by the
injected clock (so under virtual time durations are virtual too). The seam is the
tiny :class:`Metrics` protocol; :class:`PrometheusMetrics` is the default and
:class:`NoMetrics` turns reporting off. Labelled children are resolved once per
(controller, outcome) and cached, so a reconcile costs one dictionary hit, two or
three additions and two observations — the series are :mod:`~fleetkeeper.runtime.tally`
families, turned into samples only when ``/metrics`` is scraped.

The prometheus series live in the default registry (``fleetkeeper_reconcile_total``
and ``fleetkeeper_reconcile_duration_seconds``, labelled by ``controller``), which is
what the API server's ``/metrics`` endpoint exposes. Beside them go controller-runtime's
names, labels and buckets (``controller_runtime_reconcile_total{controller, result}``
and its errors, terminal errors and time), so a dashboard made for a Go operator reads
ours: a terminal failure counts as an ``error`` result there, as in controller-runtime.
Its two gauges, ``controller_runtime_max_concurrent_reconciles`` and
``controller_runtime_active_workers``, are read from the live controllers at scrape time
(:data:`CONTROLLERS`), so the worker loop pays nothing for them.
"""

from __future__ import annotations

import weakref
from collections import Counter as Tally
from collections.abc import Iterator
from typing import Literal, Protocol

from prometheus_client import Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import REGISTRY, Collector

from fleetkeeper.runtime.tally import CounterCell, CounterFamily, HistogramCell, HistogramFamily

Outcome = Literal["success", "requeue_after", "error", "terminal"]

RECONCILE_TOTAL = CounterFamily(
    "fleetkeeper_reconcile_total", "Reconciles per controller and outcome.", ["controller", "result"]
)
RECONCILE_SECONDS = HistogramFamily(
    "fleetkeeper_reconcile_duration_seconds", "Time spent in reconcile, per controller.", ["controller"],
    buckets=Histogram.DEFAULT_BUCKETS
)

#: controller-runtime's buckets for ``controller_runtime_reconcile_time_seconds``
RECONCILE_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8,
                     0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25,
                     30, 40, 50, 60)
CR_RECONCILE_TOTAL = CounterFamily("controller_runtime_reconcile_total",
                                   "Total number of reconciliations per controller", ["controller", "result"])
CR_RECONCILE_ERRORS = CounterFamily("controller_runtime_reconcile_errors_total",
                                    "Total number of reconciliation errors per controller", ["controller"])
CR_TERMINAL_ERRORS = CounterFamily("controller_runtime_terminal_reconcile_errors_total",
                                   "Total number of terminal reconciliation errors per controller",
                                   ["controller"])
CR_RECONCILE_TIME = HistogramFamily("controller_runtime_reconcile_time_seconds",
                                    "Length of time per reconciliation per controller", ["controller"],
                                    buckets=RECONCILE_BUCKETS)
#: an outcome as controller-runtime's ``result`` label says it
CR_RESULTS: dict[str, str] = {"success": "success", "requeue_after": "requeue_after", "error": "error",
                              "terminal": "error"}


class Metrics(Protocol):
    """Receives one report per reconcile."""

    def observe(self, controller: str, outcome: Outcome, seconds: float) -> None: ...


class NoMetrics:
    """Reports nothing."""

    def observe(self, controller: str, outcome: Outcome, seconds: float) -> None:
        return None


class PrometheusMetrics:
    """Counts reconciles and observes their durations in the default prometheus registry."""

    def __init__(self) -> None:
        self._children: dict[tuple[str, str], tuple[tuple[CounterCell, ...], tuple[HistogramCell, ...]]] = {}

    def observe(self, controller: str, outcome: Outcome, seconds: float) -> None:
        children = self._children.get((controller, outcome))
        if children is None:
            children = self._children[(controller, outcome)] = _bind(controller, outcome)
        for counter in children[0]:
            counter.inc()
        for histogram in children[1]:
            histogram.observe(seconds)


def _bind(controller: str, outcome: str) -> tuple[tuple[CounterCell, ...], tuple[HistogramCell, ...]]:
    """The children one (controller, outcome) report increments and observes. The first report
    of a controller also makes its other controller-runtime series appear at 0, as there."""
    for result in ("success", "requeue_after", "requeue", "error"):
        CR_RECONCILE_TOTAL.labels(controller, result)
    errors, terminal = CR_RECONCILE_ERRORS.labels(controller), CR_TERMINAL_ERRORS.labels(controller)
    counters = [RECONCILE_TOTAL.labels(controller, outcome),
                CR_RECONCILE_TOTAL.labels(controller, CR_RESULTS[outcome])]
    if outcome in ("error", "terminal"):
        counters.append(errors)
    if outcome == "terminal":
        counters.append(terminal)
    return tuple(counters), (RECONCILE_SECONDS.labels(controller), CR_RECONCILE_TIME.labels(controller))


class Live(Protocol):
    """What the scrape reads of a running controller."""

    name: str
    workers: int

    @property
    def active_workers(self) -> int: ...


#: the controllers alive in this process (a controller adds itself when made)
CONTROLLERS: weakref.WeakSet[Live] = weakref.WeakSet()


class ControllerCollector(Collector):
    """controller-runtime's two gauges, read from :data:`CONTROLLERS` at scrape time (summed per
    name when several planes of one process run the same controller)."""

    def describe(self) -> list[Metric]:
        return []

    def collect(self) -> Iterator[Metric]:
        workers = GaugeMetricFamily("controller_runtime_max_concurrent_reconciles",
                                    "Maximum number of concurrent reconciles per controller",
                                    labels=["controller"])
        active = GaugeMetricFamily("controller_runtime_active_workers",
                                   "Number of currently used workers per controller", labels=["controller"])
        most: Tally[str] = Tally()
        busy: Tally[str] = Tally()
        for controller in list(CONTROLLERS):
            most[controller.name] += controller.workers
            busy[controller.name] += controller.active_workers
        for name in sorted(most):
            workers.add_metric([name], float(most[name]))
            active.add_metric([name], float(busy[name]))
        yield from (workers, active)


REGISTRY.register(ControllerCollector())


__all__ = ["CONTROLLERS", "CR_RECONCILE_ERRORS", "CR_RECONCILE_TIME", "CR_RECONCILE_TOTAL",
           "CR_TERMINAL_ERRORS", "RECONCILE_SECONDS", "RECONCILE_TOTAL", "ControllerCollector", "Live",
           "Metrics", "NoMetrics", "Outcome", "PrometheusMetrics"]
