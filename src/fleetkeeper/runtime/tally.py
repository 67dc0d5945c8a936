"""Counters and histograms a hot loop bumps as plain numbers, turned into samples at scrape time.

prometheus_client's ``Counter`` and ``Histogram`` take a lock and walk a list of value
objects on every increment and observation; the workqueue and the worker loop report a few
of them per key, which made metrics a visible share of a propagation run. A
:class:`CounterFamily` or :class:`HistogramFamily` has the same name, help, labels and
buckets, and is a registry ``Collector`` of its own: its children (:meth:`labels`, bound
once and kept) hold a float and a list of per-bucket counts, so a report is an addition or
a ``bisect`` and an addition. The scrape turns them into the very samples prometheus_client
gives — cumulative ``le`` buckets, ``_count``, ``_sum`` and ``_created`` (unless the
registry's created series are turned off) — in the same order, with the same float sums.

Children are bumped by the control loop's thread only; a scrape from the API server's
thread reads a snapshot (a histogram's ``_count`` is the sum of the buckets it read).
``_created`` is the child's creation in real wall time, as prometheus_client stamps it.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Sequence

import prometheus_client.metrics
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import REGISTRY, Collector, CollectorRegistry
from prometheus_client.samples import Sample
from prometheus_client.utils import floatToGoString

from fleetkeeper.clock import Clock, SystemClock

#: what ``_created`` is stamped with: real wall time, whatever clock the controllers run on
WALL: Clock = SystemClock()
INF = float("inf")


def _created_series() -> bool:
    """Whether the registry's own counters and histograms expose ``_created`` now."""
    return bool(getattr(prometheus_client.metrics, "_use_created", True))


class CounterCell:
    """One labelled counter: a float that only goes up."""

    __slots__ = ("created", "value")

    def __init__(self) -> None:
        self.value = 0.0
        self.created = WALL.now().timestamp()

    def inc(self, amount: float = 1.0) -> None:
        if amount < 0:
            raise ValueError("Counters can only be incremented by non-negative amounts.")
        self.value += amount


class HistogramCell:
    """One labelled histogram: a count per bucket (not cumulative) and the sum observed."""

    __slots__ = ("bounds", "counts", "created", "sum")

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds
        self.counts = [0] * len(bounds)
        self.sum = 0.0
        self.created = WALL.now().timestamp()

    def observe(self, amount: float) -> None:
        """Count ``amount`` in the first bucket whose bound it does not exceed (NaN in none)."""
        self.sum += amount
        index = bisect_left(self.bounds, amount)
        if amount <= self.bounds[index]:
            self.counts[index] += 1


class _Family(Collector):
    """What both families share: the name, help and labels, the children, the registration."""

    kind = ""

    def __init__(self, name: str, documentation: str, labelnames: Sequence[str], *,
                 registry: CollectorRegistry | None = REGISTRY) -> None:
        if not labelnames:
            raise ValueError(f"{name}: a family needs at least one label")
        self.name = name
        self.documentation = documentation
        self.labelnames = tuple(labelnames)
        self._described = [Metric(name, documentation, self.kind)]
        if registry is not None:
            registry.register(self)

    def describe(self) -> list[Metric]:
        return self._described

    def _key(self, values: tuple[object, ...]) -> tuple[str, ...]:
        if len(values) != len(self.labelnames):
            raise ValueError(f"{self.name}: expected {len(self.labelnames)} label values, got {len(values)}")
        return tuple(str(value) for value in values)


class CounterFamily(_Family):
    """A labelled counter, exposed as prometheus_client's ``Counter`` of the same name would be."""

    kind = "counter"

    def __init__(self, name: str, documentation: str, labelnames: Sequence[str], *,
                 registry: CollectorRegistry | None = REGISTRY) -> None:
        super().__init__(name.removesuffix("_total"), documentation, labelnames, registry=registry)
        self._cells: dict[tuple[str, ...], CounterCell] = {}

    def labels(self, *values: object) -> CounterCell:
        key = self._key(values)
        found = self._cells.get(key)
        if found is None:
            found = self._cells[key] = CounterCell()
        return found

    def remove(self, *values: object) -> None:
        self._cells.pop(self._key(values), None)

    def collect(self) -> Iterator[Metric]:
        family = CounterMetricFamily(self.name, self.documentation, labels=self.labelnames)
        created = _created_series()
        for key, cell in tuple(self._cells.items()):
            family.add_metric(key, cell.value, cell.created if created else None)
        yield family


class HistogramFamily(_Family):
    """A labelled histogram, exposed as prometheus_client's ``Histogram`` of the same name and
    buckets would be (``+Inf`` is added when the buckets do not end with it)."""

    kind = "histogram"

    def __init__(self, name: str, documentation: str, labelnames: Sequence[str], *,
                 buckets: Sequence[float], registry: CollectorRegistry | None = REGISTRY) -> None:
        bounds = [float(bound) for bound in buckets]
        if bounds != sorted(bounds) or not bounds or bounds[0] < 0:
            raise ValueError(f"{name}: buckets must be sorted and not negative")
        if bounds[-1] != INF:
            bounds.append(INF)
        if "le" in labelnames:
            raise ValueError(f"{name}: 'le' is the buckets' label")
        self.bounds = tuple(bounds)
        self._les = tuple(str(floatToGoString(bound)) for bound in bounds)  # type: ignore[no-untyped-call]
        super().__init__(name, documentation, labelnames, registry=registry)
        self._cells: dict[tuple[str, ...], HistogramCell] = {}

    def labels(self, *values: object) -> HistogramCell:
        key = self._key(values)
        found = self._cells.get(key)
        if found is None:
            found = self._cells[key] = HistogramCell(self.bounds)
        return found

    def remove(self, *values: object) -> None:
        self._cells.pop(self._key(values), None)

    def collect(self) -> Iterator[Metric]:
        family = HistogramMetricFamily(self.name, self.documentation, labels=self.labelnames)
        created = _created_series()
        for key, cell in tuple(self._cells.items()):
            total, cumulative = 0.0, []
            for le, count in zip(self._les, list(cell.counts), strict=True):
                total += count
                cumulative.append((le, total))
            family.add_metric(key, cumulative, cell.sum)
            if created:
                labels = dict(zip(self.labelnames, key, strict=True))
                family.samples.append(Sample(self.name + "_created", labels, cell.created, None))
        yield family


__all__ = ["WALL", "CounterCell", "CounterFamily", "HistogramCell", "HistogramFamily"]
