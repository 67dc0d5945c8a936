"""Tally families: prometheus_client's samples, byte for byte, without its cost per report."""

from __future__ import annotations

import asyncio
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from prometheus_client import (
    CollectorRegistry,
    Counter,
    Histogram,
    disable_created_metrics,
    enable_created_metrics,
    generate_latest,
)
from prometheus_client.registry import REGISTRY

from fleetkeeper.clock import VirtualClock
from fleetkeeper.errors import Conflict
from fleetkeeper.runtime.controller import Controller
from fleetkeeper.runtime.reconcile import FuncReconciler, Request, Result
from fleetkeeper.runtime.tally import CounterFamily, HistogramFamily
from fleetkeeper.runtime.workqueue import Workqueue
from fleetkeeper.runtime.workqueue_metrics import BUCKETS

from .helpers import run_virtual

LABELS = ["controller", "result"]
CREATED = re.compile(rb"^(\w+_created\{[^}]*\}) \S+$", re.MULTILINE)


def exposition(registry: CollectorRegistry) -> bytes:
    """The text format, with each ``_created`` value (a wall-clock stamp) replaced by ``T``."""
    return CREATED.sub(rb"\1 T", generate_latest(registry))


reports = st.lists(st.tuples(
    st.sampled_from(["a", "b", "c"]),
    st.one_of(st.sampled_from([0.0, *BUCKETS, float("inf"), float("nan")]),
              st.floats(min_value=0.0, allow_infinity=True))), max_size=40)


@given(reports)
def test_the_scrape_is_what_prometheus_clients_own_series_give(seen: list[tuple[str, float]]) -> None:
    ours, theirs = CollectorRegistry(), CollectorRegistry()
    counted = CounterFamily("demo_events_total", "Events.", LABELS, registry=ours)
    timed = HistogramFamily("demo_seconds", "Time taken.", LABELS, buckets=BUCKETS, registry=ours)
    their_counted = Counter("demo_events_total", "Events.", LABELS, registry=theirs)
    their_timed = Histogram("demo_seconds", "Time taken.", LABELS, buckets=BUCKETS, registry=theirs)
    for key, amount in seen:
        for counter in (counted, their_counted):
            counter.labels("c", key).inc()
            counter.labels("c", "amount").inc(amount)
        for histogram in (timed, their_timed):
            histogram.labels("c", key).observe(amount)
    assert exposition(ours) == exposition(theirs)
    if seen:
        assert b"demo_seconds_created{" in exposition(ours) and b"demo_events_created{" in exposition(ours)


def test_created_series_go_when_the_registry_turns_them_off() -> None:
    ours, theirs = CollectorRegistry(), CollectorRegistry()
    CounterFamily("quiet_total", "Quiet.", ["name"], registry=ours).labels("a").inc()
    Counter("quiet_total", "Quiet.", ["name"], registry=theirs).labels("a").inc()
    HistogramFamily("quiet_seconds", "Quiet.", ["name"], buckets=[1], registry=ours).labels("a").observe(2)
    Histogram("quiet_seconds", "Quiet.", ["name"], buckets=[1], registry=theirs).labels("a").observe(2)
    disable_created_metrics()
    try:
        assert generate_latest(ours) == generate_latest(theirs)
        assert b"_created" not in generate_latest(ours)
    finally:
        enable_created_metrics()


def test_a_family_checks_its_labels_and_buckets_as_prometheus_client_does() -> None:
    registry = CollectorRegistry()
    family = CounterFamily("checked_total", "Checked.", ["name"], registry=registry)
    with pytest.raises(ValueError, match="expected 1 label values"):
        family.labels("a", "b")
    with pytest.raises(ValueError, match="non-negative"):
        family.labels("a").inc(-1.0)
    with pytest.raises(ValueError, match="Duplicated timeseries"):
        CounterFamily("checked", "Checked again.", ["name"], registry=registry)
    with pytest.raises(ValueError, match="sorted"):
        HistogramFamily("unsorted_seconds", "Unsorted.", ["name"], buckets=[2.0, 1.0], registry=registry)
    family.labels("gone").inc()
    family.remove("gone")
    assert registry.get_sample_value("checked_total", {"name": "gone"}) is None


def sample(series: str, /, **labels: str) -> float:
    return REGISTRY.get_sample_value(series, labels) or 0.0


def test_a_queues_series_follow_its_adds_gets_and_dones_on_virtual_time() -> None:
    async def main(clock: VirtualClock) -> None:
        queue: Workqueue[str] = Workqueue(clock=clock, name="tally-sequence")
        queue.add("a")
        queue.add("a")  # coalesced: no add
        queue.add("b")
        await clock.sleep(0.5)
        assert await queue.get() == "a"  # queued 0.5
        queue.add("a")  # while processing: an add, queued from now
        await clock.sleep(2.0)
        queue.done("a")  # worked 2.0; "a" is ready again
        assert await queue.get() == "b"  # queued 2.5
        queue.done("b")  # worked 0
        assert await queue.get() == "a"  # queued 2.0
        queue.add_rate_limited("c")
        await clock.sleep(0.001)
        queue.done("a")  # worked 0.001
        assert await queue.get() == "c"  # queued 0: the limiter's delay is spent parked, not queued
        queue.done("c")

    run_virtual(main)
    labels = {"name": "tally-sequence", "controller": "tally-sequence"}
    assert sample("workqueue_adds_total", **labels) == 4.0
    assert sample("workqueue_retries_total", **labels) == 1.0
    assert sample("workqueue_queue_duration_seconds_count", **labels) == 4.0
    assert sample("workqueue_queue_duration_seconds_sum", **labels) == pytest.approx(0.5 + 2.5 + 2.0 + 0.0)
    assert sample("workqueue_queue_duration_seconds_bucket", **labels, le="1e-08") == 1.0
    assert sample("workqueue_queue_duration_seconds_bucket", **labels, le="1.0") == 2.0
    assert sample("workqueue_queue_duration_seconds_bucket", **labels, le="10.0") == 4.0
    assert sample("workqueue_work_duration_seconds_count", **labels) == 4.0
    assert sample("workqueue_work_duration_seconds_sum", **labels) == pytest.approx(2.001)
    assert sample("workqueue_work_duration_seconds_bucket", **labels, le="1e-08") == 2.0
    assert sample("workqueue_work_duration_seconds_bucket", **labels, le="0.0001") == 2.0
    assert sample("workqueue_work_duration_seconds_bucket", **labels, le="0.01") == 3.0


@contextmanager
def prometheus_client_calls() -> Iterator[list[str]]:
    """Every Python function of prometheus_client entered meanwhile, on this thread."""
    entered: list[str] = []

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call" and "prometheus_client" in frame.f_code.co_filename:
            entered.append(frame.f_code.co_name)

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        yield entered
    finally:
        sys.setprofile(previous)


def test_the_worker_loop_reports_each_key_without_calling_prometheus_client() -> None:
    keys = [Request("default", f"k{i}") for i in range(20)]

    async def main(clock: VirtualClock) -> list[str]:
        done = asyncio.Event()
        tried: set[Request] = set()
        succeeded: set[Request] = set()

        async def reconcile(request: Request) -> Result:
            first = request not in tried
            tried.add(request)
            await clock.sleep(0.02)
            if first and request in keys[:5]:
                raise Conflict("the object has been modified")  # five keys fail once and are retried
            succeeded.add(request)
            if len(succeeded) == len(keys):
                done.set()
            return Result()

        controller = Controller("tally-loop", FuncReconciler(reconcile), workers=3, clock=clock)
        with prometheus_client_calls() as entered:
            for key in keys:
                controller.enqueue(key)
            task = asyncio.create_task(controller.run())
            async with asyncio.timeout(3600.0):
                await done.wait()
            await clock.sleep(1.0)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        return entered

    assert run_virtual(main) == []
    queue = {"name": "tally-loop", "controller": "tally-loop"}
    assert sample("workqueue_adds_total", **queue) == 25.0
    assert sample("workqueue_retries_total", **queue) == 5.0
    assert sample("workqueue_work_duration_seconds_count", **queue) == 25.0
    assert sample("controller_runtime_reconcile_total", controller="tally-loop", result="success") == 20.0
    assert sample("controller_runtime_reconcile_total", controller="tally-loop", result="error") == 5.0
    assert sample("controller_runtime_reconcile_errors_total", controller="tally-loop") == 5.0
    assert sample("controller_runtime_reconcile_time_seconds_count", controller="tally-loop") == 25.0
    assert sample("controller_runtime_reconcile_time_seconds_bucket", controller="tally-loop",
                  le="0.025") == 25.0
    assert sample("fleetkeeper_reconcile_duration_seconds_sum", controller="tally-loop") == pytest.approx(0.5)
