"""``fleetkeeper bench failover``: how fast a fleet's workloads leave a cluster that went down.

The benchmark builds the whole control plane (:class:`~fleetkeeper.cmd.app.ControlPlane`
with every controller and the scheduler — not the add-ons that play the members' DNS
and node agents, which are part of the simulated world) over a store URL (sqlite by
default) and ``clusters`` simulated Push members, on real time. It propagates ``bindings``
three-replica Deployments, each Divided over three clusters by static equal weights:
``member-000``, which every workload shares, and two others that vary by group (one
PropagationPolicy per group). Cluster status is probed every two seconds with a
one-second failure threshold, so detection takes seconds, not the default minute —
detection is reported but not what is measured.

Once every binding reports its three Works applied and Healthy and the plane has settled
(the Events and timeline entries the setup deferred are written, no controller that takes
turns has work, the failover-readiness controller, when on, has assessed every domain it
was asked to, the collector runs again: ``settle_seconds``), ``member-000`` goes down, so
the failure meets a fleet at rest and the setup's tail stays out of what is measured. The
clock starts when the plane's own Cluster cache first shows the NoExecute taint the default
ClusterTaintPolicy puts on it, and the benchmark reports:

* ``first_rescheduled_ms`` / ``all_rescheduled_seconds`` — until the first / every
  binding is *rescheduled*: ``member-000`` gone from ``spec.clusters`` and the three
  replicas placed on the remaining clusters (the taint-manager's eviction alone, which
  only removes the cluster, is reported as ``first_evicted_ms`` / ``all_evicted_seconds``);
* ``all_applied_seconds`` — until the members hold the new replica counts of every
  rescheduled binding, as the plane's own watches of the members report them.

Moments are taken from the injected clock's monotonic time as the plane's informers and
member watches deliver them (handlers on the shared caches: observing costs no extra
decoding and polls nothing).
Every wait is bounded by ``limit``: the counts (``rescheduled``, ``applied``) then say
how far it got. Figures depend on the machine: quote them with it.
"""

from __future__ import annotations

import asyncio
import gc
import time
from typing import Any

from fleetkeeper.api import constants
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.conditions import is_condition_true
from fleetkeeper.api.policy import PropagationPolicy
from fleetkeeper.api.work import ResourceBinding
from fleetkeeper.clock import Clock
from fleetkeeper.cmd import benchkit
from fleetkeeper.cmd import detector as member_addons
from fleetkeeper.cmd.app import SPECS, ControlPlane
from fleetkeeper.members.simulated import SimulatedFleet
from fleetkeeper.options import Options
from fleetkeeper.readiness import controller as readiness_controller
from fleetkeeper.runtime.handler import FuncHandler
from fleetkeeper.runtime.informer import Informer
from fleetkeeper.runtime.member_objects import MemberObjects
from fleetkeeper.store import open_store

NAMESPACE = "failover"
FAILED = "member-000"
GROUP_LABEL = "bench.fleetkeeper.io/group"
REPLICAS = 3
#: most groups (pairs of partner clusters) used, whatever the number of clusters
MAX_GROUPS = 99
#: longest the plane is given to settle after the setup (it then fails anyway)
SETTLE_LIMIT = 120.0
#: every control-plane controller and the scheduler (the simulated members' add-ons left out)
PLANE = tuple(spec for spec in SPECS if spec is not member_addons.SPEC)


def _options(*, readiness: bool = False) -> Options:
    return Options(leader_elect=False, cluster_status_update_frequency=2.0, cluster_success_threshold=0.0,
                   cluster_failure_threshold=1.0, cluster_probe_timeout=1.0, failover_readiness=readiness)


def _groups(clusters: int) -> int:
    return min(MAX_GROUPS, clusters - 1)


def _placement(group: int, names: list[str]) -> list[str]:
    """``member-000`` and two partners that vary by group."""
    others = names[1:]
    return [FAILED, others[group % len(others)], others[(group + 1) % len(others)]]


def _policy(group: int, names: list[str]) -> PropagationPolicy:
    targets = _placement(group, names)
    return PropagationPolicy.from_dict({
        "metadata": {"name": f"group-{group:02d}", "namespace": NAMESPACE},
        "spec": {
            "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment",
                                   "labelSelector": {"matchLabels": {GROUP_LABEL: str(group)}}}],
            "placement": {
                "clusterAffinity": {"clusterNames": targets},
                "replicaScheduling": {
                    "replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted",
                    "weightPreference": {"staticWeightList": [
                        {"targetCluster": {"clusterNames": [name]}, "weight": 1} for name in targets]}}},
        },
    })


class _Probe:
    """What the benchmark sees of the failover, from handlers on the plane's shared caches.

    Moments come from handlers the plane's informers call, and the replica counts the
    members hold from the plane's own member-object caches (what work-status reads), so
    observing adds no decoding and no polling of ten thousand objects."""

    def __init__(self, clock: Clock, clusters: Informer[Cluster], bindings: Informer[ResourceBinding],
                 members: MemberObjects) -> None:
        self._clock = clock
        self._members = members
        self.armed = False
        self.tainted_at: float | None = None
        self.seen_after_added: float | None = None
        self.evicted: dict[str, float] = {}
        self.rescheduled: dict[str, float] = {}
        self.applied: dict[str, float] = {}
        #: (cluster, Deployment name) → (binding key, replicas it must hold) not held yet
        self._waiting: dict[tuple[str, str], tuple[str, int]] = {}
        #: binding key → how many of its clusters still wait
        self._open: dict[str, int] = {}
        clusters.add_handler(FuncHandler(self._cluster))
        bindings.add_handler(FuncHandler(self._binding))
        members.subscribe(self._member)

    def _cluster(self, old: Cluster | None, new: Cluster | None) -> None:
        if not self.armed or self.tainted_at is not None or new is None or new.name != FAILED:
            return
        taint = next((t for t in new.spec.taints or () if t.effect == "NoExecute"), None)
        if taint is not None:
            self.tainted_at = self._clock.monotonic()
            if taint.time_added is not None:
                self.seen_after_added = (self._clock.now() - taint.time_added).total_seconds()

    def _binding(self, old: ResourceBinding | None, new: ResourceBinding | None) -> None:
        if not self.armed or new is None or new.key in self.rescheduled:
            return  # a rescheduled binding's later changes are not looked at
        targets = {t.name: t.replicas for t in new.spec.clusters or ()}
        if FAILED in targets:
            return
        now = self._clock.monotonic()
        self.evicted.setdefault(new.key, now)
        if sum(targets.values()) != new.spec.replicas:
            return
        self.rescheduled[new.key] = now
        name = new.spec.resource.name
        for cluster, replicas in targets.items():
            held = self._members.ensure(cluster, None, "apps/v1", "Deployment").get(NAMESPACE, name)
            if not _holds(held, replicas):
                self._waiting[(cluster, name)] = (new.key, replicas)
                self._open[new.key] = self._open.get(new.key, 0) + 1
        if not self._open.get(new.key):
            self.applied[new.key] = now

    def _member(self, cluster: str, obj: dict[str, Any], deleted: bool) -> None:
        wait = self._waiting.get((cluster, str(obj.get("metadata", {}).get("name"))))
        if wait is None or deleted or not _holds(obj, wait[1]):
            return
        del self._waiting[(cluster, obj["metadata"]["name"])]
        key = wait[0]
        self._open[key] -= 1
        if not self._open[key]:
            self.applied[key] = self._clock.monotonic()


def _holds(obj: dict[str, Any] | None, replicas: int) -> bool:
    return obj is not None and (obj.get("spec") or {}).get("replicas") == replicas


def _clusters_ready(clusters: Informer[Cluster], count: int) -> bool:
    items = clusters.list()
    return len(items) == count and all(
        is_condition_true(c.status.conditions, constants.COND_READY) and not c.spec.taints for c in items)


async def _populate(plane: ControlPlane, names: list[str], bindings: int, task: asyncio.Task[None], *,
                    deadline: float, progress: benchkit.Progress) -> int:
    """Register the clusters, create the workloads, wait until all are Healthy; how many are."""
    progress.phase(f"setup: registering {len(names)} simulated clusters")
    for name in names:
        await plane.client.create(benchkit.cluster(name))
    clusters = plane.manager.informers.informer_for(Cluster)
    await benchkit.wait_until(lambda: _clusters_ready(clusters, len(names)), task, deadline=deadline,
                              report=progress.counting("setup: clusters Ready", lambda: sum(
                                  is_condition_true(c.status.conditions, constants.COND_READY)
                                  for c in clusters.list()), len(names)))
    groups = _groups(len(names))
    progress.phase(f"setup: creating {bindings:,} Divided workloads ({REPLICAS} replicas each)")
    for group in range(groups):
        await plane.client.create(_policy(group, names))
    for index in range(bindings):
        labels = {GROUP_LABEL: str(index % groups)}
        await plane.client.create(benchkit.deployment(NAMESPACE, f"app-{index:05d}", replicas=REPLICAS,
                                                      labels=labels))
    done = benchkit.Completion(plane.manager.informers.informer_for(ResourceBinding),
                               lambda binding: benchkit.healthy(binding, REPLICAS))
    try:
        await benchkit.wait_until(lambda: done.count() >= bindings, task, deadline=deadline,
                                  report=progress.counting("setup: workloads Healthy",
                                                           lambda: len(done.finished), bindings))
    finally:
        done.close()
    return len(done.finished)


async def _settle(plane: ControlPlane, task: asyncio.Task[None], *, deadline: float,
                  progress: benchkit.Progress) -> float:
    """Wait until the setup's deferred records are written, no controller that takes turns
    has work, failover readiness has assessed the fleet and the collector runs again (at most
    :data:`SETTLE_LIMIT`); how long it took."""
    progress.phase("setup: settling (deferred records written, controllers idle)")
    started = time.perf_counter()
    flushed = asyncio.ensure_future(plane.context.recorder("bench").flush())
    turns = plane.manager.turns
    readiness = [c for c in plane.manager.controllers() if c.name == readiness_controller.NAME]

    def settled() -> bool:
        assessed = all(not c.busy and not c.queue.parked for c in readiness)
        return flushed.done() and turns.quiet and assessed and gc.isenabled()

    try:
        await benchkit.wait_until(settled, task, deadline=min(deadline, started + SETTLE_LIMIT))
    finally:
        flushed.cancel()
    return time.perf_counter() - started


async def _fail_over(probe: _Probe, members: SimulatedFleet, bindings: int, task: asyncio.Task[None], *,
                     clock: Clock, deadline: float, progress: benchkit.Progress) -> float:
    """Take ``member-000`` down and wait for the three milestones; when it went down."""
    probe.armed = True
    down_at = clock.monotonic()
    progress.phase(f"{FAILED} goes down")
    members[FAILED].down()
    await benchkit.wait_until(lambda: probe.tainted_at is not None, task, deadline=deadline,
                              report=progress.counting(f"{FAILED} tainted NoExecute",
                                                       lambda: int(probe.tainted_at is not None), 1))
    await benchkit.wait_until(lambda: len(probe.rescheduled) >= bindings, task, deadline=deadline,
                              report=progress.counting("rescheduled", lambda: len(probe.rescheduled),
                                                       bindings))
    await benchkit.wait_until(lambda: len(probe.applied) >= bindings, task, deadline=deadline,
                              report=progress.counting("applied", lambda: len(probe.applied), bindings))
    return down_at


def _after(start: float | None, moments: dict[str, float], count: int, *, first: bool) -> float | None:
    """Seconds from ``start`` to the first moment, or to the last when all ``count`` happened."""
    if start is None or not moments or (not first and len(moments) < count):
        return None
    return (min(moments.values()) if first else max(moments.values())) - start


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 1)


def _s(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds, 3)


async def bench_failover(*, bindings: int = 10_000, clusters: int = 100, store_url: str, clock: Clock,
                         limit: float = 900.0, progress: benchkit.Progress = benchkit.SILENT,
                         measure: benchkit.Measure = benchkit.UNMEASURED,
                         readiness: bool = False) -> dict[str, object]:
    """Fail ``member-000`` under ``bindings`` Divided workloads over ``clusters`` clusters; time the move
    (``measure`` wraps the failover itself, from taking the cluster down to the last replacement;
    ``readiness``: with the failover-readiness controller running too)."""
    if clusters < 3:
        raise ValueError("the failover benchmark needs at least three clusters")
    store = open_store(store_url, clock=clock)
    names = [f"member-{i:03d}" for i in range(clusters)]
    members = benchkit.fleet(clock, names, pods=bindings * REPLICAS)
    plane = ControlPlane(store=store, clock=clock, members=members, options=_options(readiness=readiness),
                         specs=PLANE)
    informers = plane.manager.informers
    probe = _Probe(clock, informers.informer_for(Cluster), informers.informer_for(ResourceBinding),
                   plane.context.member_objects)
    started = time.perf_counter()
    task = asyncio.get_running_loop().create_task(plane.run())
    try:
        ready = await _populate(plane, names, bindings, task, deadline=started + limit, progress=progress)
        setup_seconds = time.perf_counter() - started
        settle_seconds = await _settle(plane, task, deadline=started + limit, progress=progress)
        with measure():
            cpu_started = time.process_time()
            down_at = await _fail_over(probe, members, bindings, task, clock=clock,
                                       deadline=time.perf_counter() + limit, progress=progress)
            cpu_seconds = time.process_time() - cpu_started
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await store.close()
    t0 = probe.tainted_at
    result: dict[str, Any] = {
        "benchmark": "failover", "store": store_url.partition("://")[0], "bindings": bindings,
        "clusters": clusters, "healthy_before": ready, "evicted": len(probe.evicted),
        "rescheduled": len(probe.rescheduled), "applied": len(probe.applied),
        "detection_seconds": _s(None if t0 is None else t0 - down_at),
        "taint_seen_after_added_ms": _ms(probe.seen_after_added),
        "first_evicted_ms": _ms(_after(t0, probe.evicted, bindings, first=True)),
        "all_evicted_seconds": _s(_after(t0, probe.evicted, bindings, first=False)),
        "first_rescheduled_ms": _ms(_after(t0, probe.rescheduled, bindings, first=True)),
        "all_rescheduled_seconds": _s(_after(t0, probe.rescheduled, bindings, first=False)),
        "all_applied_seconds": _s(_after(t0, probe.applied, bindings, first=False)),
        "setup_seconds": round(setup_seconds, 3), "settle_seconds": round(settle_seconds, 3),
        "cpu_seconds": round(cpu_seconds, 3),
    }
    return result


__all__ = ["FAILED", "PLANE", "bench_failover"]
