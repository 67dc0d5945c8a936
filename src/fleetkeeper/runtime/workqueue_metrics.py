"""client-go's workqueue metrics, with controller-runtime's names, labels and buckets.

A :class:`~fleetkeeper.runtime.workqueue.Workqueue` reports what happens to its keys
through one :class:`QueueMetrics`, made once per queue with its label children already
bound (``name`` and ``controller`` are both the queue's name, as controller-runtime
labels them), so a key costs a few dictionary operations and additions — the series are
:mod:`~fleetkeeper.runtime.tally` families, turned into samples only when scraped:

* ``workqueue_adds_total`` — adds that put a key in the queue (not those coalesced);
* ``workqueue_retries_total`` — rate-limited adds (a failure retried), as client-go counts
  them; a plain delayed add (a requeue after a time) is no retry;
* ``workqueue_queue_duration_seconds`` — from the add to a worker taking the key;
* ``workqueue_work_duration_seconds`` — from a worker taking the key to ``done``.

Durations are read from the queue's injected clock, like every interval of the
controllers (under a virtual clock they are virtual). The gauges — ``workqueue_depth``,
``workqueue_unfinished_work_seconds`` and ``workqueue_longest_running_processor_seconds``
— are computed from the live queues when ``/metrics`` is scraped (:data:`QUEUES`).
"""

from __future__ import annotations

import weakref
from collections.abc import Hashable, Iterator
from typing import Protocol

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import REGISTRY, Collector

from fleetkeeper.runtime.tally import CounterFamily, HistogramFamily

#: client-go's latency buckets: 10 ns × 10^n, twelve of them
BUCKETS = tuple(10e-9 * 10 ** n for n in range(12))
LABELS = ["name", "controller"]

ADDS = CounterFamily("workqueue_adds_total", "Total number of adds handled by workqueue", LABELS)
RETRIES = CounterFamily("workqueue_retries_total",
                  "Total number of items added to the workqueue with a non-zero delay (rate-limited "
                  "requeues, explicit RequeueAfter or AddAfter calls)", LABELS)
QUEUE_SECONDS = HistogramFamily("workqueue_queue_duration_seconds",
                                "How long in seconds an item stays in workqueue before being requested",
                                LABELS, buckets=BUCKETS)
WORK_SECONDS = HistogramFamily("workqueue_work_duration_seconds",
                               "How long in seconds processing an item from workqueue takes.", LABELS,
                               buckets=BUCKETS)


class QueueMetrics:
    """One queue's bound children and the times its keys were added and taken."""

    __slots__ = ("added_at", "adds", "queued", "retries", "started_at", "work")

    def __init__(self, name: str) -> None:
        self.adds = ADDS.labels(name, name)
        self.retries = RETRIES.labels(name, name)
        self.queued = QUEUE_SECONDS.labels(name, name)
        self.work = WORK_SECONDS.labels(name, name)
        #: key → when it was added and is still waiting / when a worker took it
        self.added_at: dict[Hashable, float] = {}
        self.started_at: dict[Hashable, float] = {}

    def added(self, key: Hashable, now: float) -> None:
        self.adds.inc()
        self.added_at.setdefault(key, now)

    def taken(self, key: Hashable, now: float) -> None:
        since = self.added_at.pop(key, None)
        if since is not None:
            self.queued.observe(now - since)
        self.started_at[key] = now

    def finished(self, key: Hashable, now: float) -> None:
        since = self.started_at.pop(key, None)
        if since is not None:
            self.work.observe(now - since)

    def dropped(self) -> None:
        """The queue shut down: what waited will not be taken."""
        self.added_at.clear()


class Observed(Protocol):
    """What the scrape reads of a live queue."""

    name: str
    metrics: QueueMetrics

    def __len__(self) -> int: ...

    def now(self) -> float: ...


#: the queues alive in this process (a queue adds itself when made)
QUEUES: weakref.WeakSet[Observed] = weakref.WeakSet()


class QueueCollector(Collector):
    """The three workqueue gauges, from :data:`QUEUES` at scrape time (summed per name)."""

    def describe(self) -> list[Metric]:
        return []

    def collect(self) -> Iterator[Metric]:
        depth = GaugeMetricFamily("workqueue_depth", "Current depth of workqueue by workqueue and priority",
                                  labels=["name", "controller", "priority"])
        unfinished = GaugeMetricFamily(
            "workqueue_unfinished_work_seconds",
            "How many seconds of work has been done that is in progress and hasn't been observed by "
            "work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads "
            "by observing the rate at which this increases.", labels=LABELS)
        longest = GaugeMetricFamily("workqueue_longest_running_processor_seconds",
                                    "How many seconds has the longest running processor for workqueue been "
                                    "running.", labels=LABELS)
        figures: dict[str, list[float]] = {}
        for queue in list(QUEUES):
            now = queue.now()
            spans = [now - started for started in queue.metrics.started_at.values()]
            row = figures.setdefault(queue.name, [0.0, 0.0, 0.0])
            row[0] += len(queue)
            row[1] += sum(spans)
            row[2] = max(row[2], max(spans, default=0.0))
        for name in sorted(figures):
            size, busy, most = figures[name]
            depth.add_metric([name, name, ""], size)
            unfinished.add_metric([name, name], busy)
            longest.add_metric([name, name], most)
        yield from (depth, unfinished, longest)


REGISTRY.register(QueueCollector())


__all__ = ["ADDS", "QUEUES", "QUEUE_SECONDS", "RETRIES", "WORK_SECONDS", "Observed", "QueueCollector",
           "QueueMetrics"]
