"""``fleetkeeper bench scheduler``: how fast the scheduling core decides, on this machine.

A synthetic fleet — ``clusters`` member clusters in a handful of regions, with labels,
zones, capacity summaries and a few tainted clusters — and ``bindings`` Deployments
claimed by a few dozen policies of every kind: static weights, dynamic weights,
aggregated, duplicated, and spread constraints by cluster and by region. One binding
in ten is a scale of an existing schedule (so previous assignments are exercised),
the rest are first schedules. Everything is generated from ``seed``, so runs compare.

The bindings go one by one through :class:`~fleetkeeper.scheduler.core.Scheduler` —
the same core the controller runs — over one snapshot, with no store and no I/O. The
clock read here is ``time.perf_counter`` and nothing else: this function measures the
machine, which is the one place wall time is the point.

Returns ``bindings``, ``clusters``, ``seconds`` (snapshot plus all bindings),
``per_second``, ``p50_ms``, ``p99_ms``, ``max_ms``, ``snapshot_ms`` and ``outcomes``
(scheduled / unschedulable / failed counts).
"""

from __future__ import annotations

import gc
import random
import time
from typing import Any

from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.constants import PP_PERMANENT_ID_LABEL
from fleetkeeper.api.work import ResourceBinding
from fleetkeeper.clock import VIRTUAL_EPOCH
from fleetkeeper.scheduler.core import Scheduler
from fleetkeeper.scheduler.errors import ScheduleError
from fleetkeeper.scheduler.framework import FitError
from fleetkeeper.scheduler.snapshot import SnapshotBuilder

REGIONS = ("us-east", "us-west", "eu-central", "ap-south", "sa-east")
APPS = [{"groupVersion": "apps/v1", "resources": [{"name": "deployments", "kind": "Deployment"}]}]
DYNAMIC = {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted",
           "weightPreference": {"dynamicWeight": "AvailableReplicas"}}
AGGREGATED = {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}
REQUESTS = [None, {"cpu": "100m", "memory": "128Mi"}, {"cpu": "250m", "memory": "256Mi"},
            {"cpu": "500m", "memory": "1Gi"}, {"cpu": "1", "memory": "2Gi"}]


def fleet(n: int, rng: random.Random) -> list[Cluster]:
    """``n`` member clusters: regions, zones, labels, capacity, a few taints."""
    clusters = []
    for i in range(n):
        region = REGIONS[i % len(REGIONS)]
        spec: dict[str, Any] = {"syncMode": "Push", "provider": ("aws", "gcp", "azure")[i % 3],
                                "region": region,
                                "zones": [f"{region}-{'abc'[i % 3]}"]}
        if rng.random() < 0.05:
            spec["taints"] = [{"key": "cluster.karmada.io/unschedulable", "effect": "NoSchedule"}]
        cpu, pods = rng.choice((16, 32, 64, 128)), rng.choice((110, 250, 500, 1000))
        summary = {"allocatable": {"pods": str(pods), "cpu": str(cpu), "memory": f"{cpu * 4}Gi"},
                   "allocated": {"pods": str(rng.randrange(pods // 2)), "cpu": str(rng.randrange(cpu // 2)),
                                 "memory": f"{rng.randrange(cpu)}Gi"}}
        clusters.append(Cluster.from_dict({
            "metadata": {"name": f"member{i:04d}", "resourceVersion": "1",
                         "labels": {"env": ("prod", "staging")[i % 2], "tier": str(i % 4)}},
            "spec": spec, "status": {"apiEnablements": APPS, "resourceSummary": summary},
        }))
    return clusters


def placements(clusters: list[Cluster], rng: random.Random, count: int = 40) -> list[dict[str, Any]]:
    """A pool of policies of every kind the scheduler supports."""
    names = [c.name for c in clusters]
    pool: list[dict[str, Any]] = []
    for i in range(count):
        kind = i % 5
        region = REGIONS[i % len(REGIONS)]
        if kind == 0:  # static weights over a few named clusters
            chosen = rng.sample(names, min(len(names), rng.randint(2, 4)))
            pool.append({"clusterAffinity": {"clusterNames": chosen}, "replicaScheduling": {
                "replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted",
                "weightPreference": {"staticWeightList": [
                    {"targetCluster": {"clusterNames": [n]}, "weight": rng.randint(1, 3)} for n in chosen]}}})
        elif kind == 1:  # dynamic weights over a labelled slice, tolerating the unschedulable taint
            pool.append({"clusterAffinity": {"labelSelector": {"matchLabels": {"env": "prod"}}},
                         "clusterTolerations": [{"key": "cluster.karmada.io/unschedulable",
                                                 "operator": "Exists"}],
                         "replicaScheduling": DYNAMIC})
        elif kind == 2:  # duplicated over one region, at most three clusters
            pool.append({"clusterAffinity": {"fieldSelector": {"matchExpressions": [
                {"key": "region", "operator": "In", "values": [region]}]}},
                "spreadConstraints": [{"spreadByField": "cluster", "minGroups": 1, "maxGroups": 3}],
                "replicaScheduling": {"replicaSchedulingType": "Duplicated"}})
        elif kind == 3:  # dynamic weights spread over two regions
            pool.append({"spreadConstraints": [
                {"spreadByField": "region", "minGroups": 2, "maxGroups": 2},
                {"spreadByField": "cluster", "minGroups": 2, "maxGroups": 4}], "replicaScheduling": DYNAMIC})
        else:  # aggregated into as few clusters as possible, spread by cluster
            pool.append({"clusterAffinity": {"labelSelector": {"matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["0", "1"]}]}},
                "spreadConstraints": [{"spreadByField": "cluster", "minGroups": 1, "maxGroups": 5}],
                "replicaScheduling": AGGREGATED})
    return pool


def workload(i: int, pool: list[dict[str, Any]], names: list[str], rng: random.Random) -> ResourceBinding:
    """One binding of the mix; every tenth carries a previous schedule (a scale)."""
    placement = rng.choice(pool)
    replicas = rng.randint(1, 20)
    spec: dict[str, Any] = {
        "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default", "name": f"app{i}",
                     "uid": f"{rng.getrandbits(128):032x}"},
        "replicas": replicas, "placement": placement,
    }
    request = rng.choice(REQUESTS)
    if request is not None:
        spec["replicaRequirements"] = {"resourceRequest": request}
    if i % 10 == 0:
        previous = rng.sample(names, 2)
        spec["clusters"] = [{"name": previous[0], "replicas": max(1, replicas // 2)},
                            {"name": previous[1], "replicas": 1}]
    return ResourceBinding.from_dict({
        "metadata": {"name": f"app{i}-deployment", "namespace": "default",
                     "labels": {PP_PERMANENT_ID_LABEL: "x"}},
        "spec": spec,
    })


def bench_scheduler(*, bindings: int = 10_000, clusters: int = 100, seed: int = 0) -> dict[str, object]:
    """Schedule ``bindings`` synthetic bindings over ``clusters`` clusters; figures as a dict."""
    rng = random.Random(seed)
    members = fleet(clusters, rng)
    pool = placements(members, rng)
    names = [c.name for c in members]
    work = [workload(i, pool, names, rng) for i in range(bindings)]
    # The input is built before the clock starts; freeze it so the collector does not walk
    # ten thousand bindings on every collection (a long-lived controller would do the same
    # with its warm caches). Unfrozen again at the end.
    gc.collect()
    gc.freeze()
    try:
        return _measure(members, work, bindings=bindings, clusters=clusters, seed=seed)
    finally:
        gc.unfreeze()


def _measure(members: list[Cluster], work: list[ResourceBinding], *, bindings: int, clusters: int,
             seed: int) -> dict[str, object]:
    scheduler = Scheduler()
    now = VIRTUAL_EPOCH
    outcomes = {"scheduled": 0, "unschedulable": 0, "failed": 0}
    latencies: list[float] = []
    started = time.perf_counter()
    snapshot = SnapshotBuilder().build(members)
    snapshot_seconds = time.perf_counter() - started
    for rb in work:
        t0 = time.perf_counter()
        try:
            scheduler.schedule(rb.spec, rb.status, snapshot, now)
            outcomes["scheduled"] += 1
        except FitError:
            outcomes["unschedulable"] += 1
        except ScheduleError:
            outcomes["failed"] += 1
        latencies.append(time.perf_counter() - t0)
    seconds = time.perf_counter() - started
    latencies.sort()
    return {
        "benchmark": "scheduler",
        "bindings": bindings,
        "clusters": clusters,
        "seconds": round(seconds, 4),
        "per_second": round(bindings / seconds, 1) if seconds else None,
        "p50_ms": round(_percentile(latencies, 0.50) * 1000, 4),
        "p99_ms": round(_percentile(latencies, 0.99) * 1000, 4),
        "max_ms": round((latencies[-1] if latencies else 0.0) * 1000, 4),
        "snapshot_ms": round(snapshot_seconds * 1000, 3),
        "outcomes": outcomes,
        "seed": seed,
    }


def _percentile(ordered: list[float], q: float) -> float:
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


__all__ = ["bench_scheduler", "fleet", "placements", "workload"]
