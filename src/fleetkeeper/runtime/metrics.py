"""Controller metrics: one counter and one histogram per controller, kept cheap.

The worker loop reports each reconcile once, with its outcome (``success``,
``requeue_after``, ``error``, ``terminal``) and its duration as measured by the
injected clock (so under virtual time durations are virtual too). The seam is the
tiny :class:`Metrics` protocol; :class:`PrometheusMetrics` is the default and
:class:`NoMetrics` turns reporting off. Labelled children are resolved once per
(controller, outcome) and cached, so a reconcile costs two dictionary hits and two
increments.

The prometheus series live in the default registry (``fleetkeeper_reconcile_total``
and ``fleetkeeper_reconcile_duration_seconds``, labelled by ``controller``), which is
what the API server's ``/metrics`` endpoint exposes.
"""

from __future__ import annotations

from typing import Literal, Protocol

from prometheus_client import Counter, Histogram

Outcome = Literal["success", "requeue_after", "error", "terminal"]

RECONCILE_TOTAL = Counter(
    "fleetkeeper_reconcile_total", "Reconciles per controller and outcome.", ["controller", "result"]
)
RECONCILE_SECONDS = Histogram(
    "fleetkeeper_reconcile_duration_seconds", "Time spent in reconcile, per controller.", ["controller"]
)


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
        self._counters: dict[tuple[str, str], Counter] = {}
        self._histograms: dict[str, Histogram] = {}

    def observe(self, controller: str, outcome: Outcome, seconds: float) -> None:
        counter = self._counters.get((controller, outcome))
        if counter is None:
            counter = self._counters[(controller, outcome)] = RECONCILE_TOTAL.labels(controller, outcome)
        histogram = self._histograms.get(controller)
        if histogram is None:
            histogram = self._histograms[controller] = RECONCILE_SECONDS.labels(controller)
        counter.inc()
        histogram.observe(seconds)


__all__ = ["RECONCILE_SECONDS", "RECONCILE_TOTAL", "Metrics", "NoMetrics", "Outcome", "PrometheusMetrics"]
