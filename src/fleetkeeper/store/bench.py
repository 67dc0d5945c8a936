"""``fleetkeeper bench store``: write throughput and watch fan-out latency of one store URL.

Phases, each on fresh ResourceBinding-shaped objects (~1 KB of JSON with the fields a
scheduled binding really carries) in a namespace unique to the run:

1. batched creates, then batched updates (``batch`` writes per transaction) → the
   headline ``creates_per_second`` / ``updates_per_second``;
2. single-write creates and updates (one transaction each) → ``*_unbatched``;
3. fan-out latency: ``watchers`` concurrent watchers; one update at a time, and the time
   from the write's acknowledgment to each watcher holding the event
   (``watch_p50_ms``/``watch_p99_ms``/``watch_max_ms``);
4. fan-out under load: batched updates with every watcher attached, timed until all
   watchers have every event (``loaded_updates_per_second``, ``events_delivered_per_second``).

Times come from ``clock.monotonic()``: pass a :class:`~fleetkeeper.clock.SystemClock`
(under a virtual clock no time passes and the rates are reported as ``None``).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from typing import Any

import orjson

from fleetkeeper.api.scheme import GroupKind
from fleetkeeper.clock import Clock
from fleetkeeper.store import DEFAULT_HISTORY, Store, open_store
from fleetkeeper.store.interface import Watch

BINDING = GroupKind("work.karmada.io", "ResourceBinding")


def binding(namespace: str, i: int) -> dict[str, Any]:
    """A ResourceBinding as the scheduler leaves it: placement, two target clusters, status."""
    name = f"web-{i:06d}"
    return {
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ResourceBinding",
        "metadata": {
            "name": f"{name}-deployment",
            "namespace": namespace,
            "labels": {
                "propagationpolicy.karmada.io/permanent-id": f"5f0c2a4e-8d1b-4c3a-9e7f-{i:012d}",
                "app": name,
            },
            "annotations": {
                "propagationpolicy.karmada.io/name": "web-propagation",
                "propagationpolicy.karmada.io/namespace": namespace,
            },
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "name": name,
                    "uid": f"0b6f5d8e-2c1a-4f3b-8a9d-{i:012d}",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
            "finalizers": ["karmada.io/binding-controller"],
        },
        "spec": {
            "resource": {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "namespace": namespace,
                "name": name,
                "uid": f"0b6f5d8e-2c1a-4f3b-8a9d-{i:012d}",
                "resourceVersion": str(1000 + i),
            },
            "replicas": 3,
            "replicaRequirements": {"resourceRequest": {"cpu": "250m", "memory": "256Mi"}},
            "clusters": [{"name": "member1", "replicas": 2}, {"name": "member2", "replicas": 1}],
            "placement": {
                "clusterAffinity": {"clusterNames": ["member1", "member2", "member3"]},
                "clusterTolerations": [
                    {
                        "key": "cluster.karmada.io/not-ready",
                        "operator": "Exists",
                        "effect": "NoExecute",
                        "tolerationSeconds": 300,
                    }
                ],
                "replicaScheduling": {
                    "replicaSchedulingType": "Divided",
                    "replicaDivisionPreference": "Weighted",
                },
            },
            "failover": {
                "application": {
                    "decisionConditions": {"tolerationSeconds": 120},
                    "purgeMode": "Gracefully",
                    "gracePeriodSeconds": 600,
                }
            },
            "conflictResolution": "Abort",
        },
        "status": {
            "schedulerObservedGeneration": 1,
            "conditions": [
                {
                    "type": "Scheduled",
                    "status": "True",
                    "reason": "Success",
                    "message": "Binding has been scheduled successfully.",
                    "lastTransitionTime": "2026-01-01T00:00:00Z",
                }
            ],
        },
    }


def _rate(count: int, seconds: float) -> float | None:
    return round(count / seconds, 1) if seconds > 0 else None


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def _ms(value: float | None) -> float | None:
    return None if value is None else round(value * 1000, 3)


def _desired(namespace: str, i: int, round_: int, revision: int) -> dict[str, Any]:
    """Object ``i`` as a writer wants it in ``round_`` (0: create; later: an update at ``revision``)."""
    obj = binding(namespace, i)
    if round_:
        obj["spec"]["clusters"][0]["replicas"] = 2 + round_
        obj["metadata"]["labels"]["round"] = str(round_)
        obj["metadata"]["resourceVersion"] = str(revision)
    return obj


async def _write(store: Store, namespace: str, revisions: list[int], *, batch: int, round_: int) -> None:
    """Create (round 0) or update objects ``0..len(revisions)-1``, recording their new revisions.

    Objects are built as they are written, never held: a benchmark keeping thousands of
    parsed objects alive would mostly measure Python's garbage collector.
    """

    async def one(i: int) -> None:
        obj = _desired(namespace, i, round_, revisions[i])
        written = await (store.update(obj) if round_ else store.create(obj))
        revisions[i] = int(written["metadata"]["resourceVersion"])

    count = len(revisions)
    if batch <= 1:
        for i in range(count):
            await one(i)
        return
    for start in range(0, count, batch):
        async with store.batch():
            for i in range(start, min(count, start + batch)):
                await one(i)


async def _throughput(store: Store, clock: Clock, namespace: str, objects: int, batch: int) -> dict[str, Any]:
    revisions = [0] * objects
    start = clock.monotonic()
    await _write(store, namespace, revisions, batch=batch, round_=0)
    created = clock.monotonic()
    await _write(store, namespace, revisions, batch=batch, round_=1)
    updated = clock.monotonic()
    return {"creates": _rate(objects, created - start), "updates": _rate(objects, updated - created)}


async def _drain(
    watch: Watch, count: int, stamps: list[tuple[int, float]], clock: Clock, progress: Callable[[int], None]
) -> None:
    seen = 0
    async for event in watch:
        stamps.append((event.revision, clock.monotonic()))
        progress(event.revision)
        seen += 1
        if seen >= count:
            return


class _Arrivals:
    """Counts, per revision, how many watchers hold it; wakes the writer when all do."""

    def __init__(self, watchers: int) -> None:
        self.watchers = watchers
        self.counts: dict[int, int] = {}
        self.wanted = 0
        self.done = asyncio.Event()

    def expect(self, revision: int) -> None:
        self.wanted = revision
        self.done.clear()
        if self.counts.get(revision, 0) >= self.watchers:
            self.done.set()

    def __call__(self, revision: int) -> None:
        count = self.counts[revision] = self.counts.get(revision, 0) + 1
        if revision == self.wanted and count >= self.watchers:
            self.done.set()


async def _fanout(
    store: Store, clock: Clock, namespace: str, revisions: list[int], watchers: int
) -> dict[str, Any]:
    """One write at a time; latency from acknowledgment to each watcher holding the event."""
    arrivals = _Arrivals(watchers)
    stamps: list[tuple[int, float]] = []
    acks: dict[int, float] = {}
    readers = [
        asyncio.create_task(_drain(store.watch(BINDING, namespace), len(revisions), stamps, clock, arrivals))
        for _ in range(watchers)
    ]
    for i, revision in enumerate(revisions):
        written = await store.update(_desired(namespace, i, 2, revision))
        revisions[i] = int(written["metadata"]["resourceVersion"])
        acks[revisions[i]] = clock.monotonic()
        arrivals.expect(revisions[i])
        await arrivals.done.wait()
    await asyncio.gather(*readers)
    latencies = [max(0.0, t - acks[rev]) for rev, t in stamps]
    return {
        "watch_p50_ms": _ms(_percentile(latencies, 0.50)),
        "watch_p99_ms": _ms(_percentile(latencies, 0.99)),
        "watch_max_ms": _ms(max(latencies) if latencies else None),
        "watch_samples": len(latencies),
    }


async def _loaded(
    store: Store, clock: Clock, namespace: str, revisions: list[int], watchers: int, batch: int
) -> dict[str, Any]:
    """Batched updates with every watcher attached, until every watcher has every event."""
    stamps: list[tuple[int, float]] = []
    readers = [
        asyncio.create_task(
            _drain(store.watch(BINDING, namespace), len(revisions), stamps, clock, lambda _rev: None)
        )
        for _ in range(watchers)
    ]
    start = clock.monotonic()
    await _write(store, namespace, revisions, batch=batch, round_=3)
    written = clock.monotonic() - start
    await asyncio.gather(*readers)
    delivered = clock.monotonic() - start
    return {
        "loaded_updates_per_second": _rate(len(revisions), written),
        "events_delivered_per_second": _rate(len(stamps), delivered),
    }


async def bench_store(
    url: str, *, clock: Clock, objects: int = 10_000, watchers: int = 50, batch: int = 100
) -> dict[str, object]:
    """Measure the store at ``url`` (see the module docstring); returns a JSON-ready dict."""
    objects = max(1, objects)
    single = max(1, min(objects, 2_000))
    fan = max(1, min(objects, 1_000))
    store = open_store(url, clock=clock, history=max(DEFAULT_HISTORY, 2 * objects))
    try:
        ns = f"bench-{store.revision}"
        batched = await _throughput(store, clock, f"{ns}-batched", objects, batch)
        unbatched = await _throughput(store, clock, f"{ns}-single", single, 1)
        revisions = [0] * fan
        await _write(store, f"{ns}-watch", revisions, batch=batch, round_=0)
        fanout = await _fanout(store, clock, f"{ns}-watch", revisions, watchers)
        loaded = await _loaded(store, clock, f"{ns}-watch", revisions, watchers, batch)
        return {
            "backend": store.backend.name,
            "url": url,
            "objects": objects,
            "object_bytes": len(orjson.dumps(binding(ns, 0))),
            "batch": batch,
            "watchers": watchers,
            "creates_per_second": batched["creates"],
            "updates_per_second": batched["updates"],
            "creates_per_second_unbatched": unbatched["creates"],
            "updates_per_second_unbatched": unbatched["updates"],
            "unbatched_objects": single,
            "fanout_writes": fan,
            **fanout,
            **loaded,
        }
    finally:
        await store.close()


__all__ = ["bench_store", "binding"]
