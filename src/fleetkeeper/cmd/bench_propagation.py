"""``fleetkeeper bench propagation``: how fast templates become healthy workloads in the members.

The benchmark builds the real control plane (:class:`~fleetkeeper.cmd.app.ControlPlane`
with the propagation controllers and the scheduler) over a store URL (sqlite by
default), ``clusters`` simulated Push members (pods start at once, nodes big enough
for every pod) and one PropagationPolicy that duplicates every Deployment of the
``bench`` namespace to all clusters. It creates ``templates`` one-replica Deployments
up front, starts the plane, and measures the wall time until every binding reports
``templates × clusters`` Works applied and Healthy in ``status.aggregatedStatus``.

Completion is noted by a handler on the plane's own shared binding cache, at the moment
the last binding reports it, so measuring costs no extra decoding and the wait reads a
counter (:mod:`~fleetkeeper.cmd.benchkit`). Figures depend on the machine: quote them
with it.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from fleetkeeper.api.policy import PropagationPolicy
from fleetkeeper.api.work import ResourceBinding
from fleetkeeper.clock import Clock
from fleetkeeper.cmd import benchkit
from fleetkeeper.cmd.app import ControlPlane
from fleetkeeper.controllers import (
    binding,
    binding_status,
    customizations,
    dependencies,
    detector,
    execution,
    policy_ids,
    work_status,
)
from fleetkeeper.options import Options
from fleetkeeper.runtime.spec import ControllerSpec
from fleetkeeper.scheduler import controller as scheduler
from fleetkeeper.store import open_store

#: the controllers of the propagation pipeline and the scheduler, in start order
PIPELINE: tuple[ControllerSpec, ...] = (
    customizations.SPEC, policy_ids.SPEC, detector.SPEC, dependencies.SPEC, binding.SPEC, execution.SPEC,
    work_status.SPEC, binding_status.SPEC, scheduler.SPEC)
NAMESPACE = "bench"


def _policy(clusters: list[str]) -> PropagationPolicy:
    return PropagationPolicy.from_dict({
        "metadata": {"name": "everything", "namespace": NAMESPACE},
        "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment"}],
                 "placement": {"clusterAffinity": {"clusterNames": clusters}}},
    })


async def bench_propagation(*, templates: int = 1000, clusters: int = 10, store_url: str,
                            clock: Clock, limit: float = 600.0,
                            progress: benchkit.Progress = benchkit.SILENT,
                            measure: benchkit.Measure = benchkit.UNMEASURED) -> dict[str, object]:
    """Propagate ``templates`` Deployments to ``clusters`` members; time until all are Healthy
    (giving up after ``limit`` seconds: ``completed_templates`` then says how far it got;
    ``measure`` wraps the timed part)."""
    store = open_store(store_url, clock=clock)
    names = [f"member-{i:02d}" for i in range(clusters)]
    members = benchkit.fleet(clock, names, pods=templates)
    plane = ControlPlane(store=store, clock=clock, members=members, options=Options(leader_elect=False),
                         specs=PIPELINE)
    setup_started = time.perf_counter()
    progress.phase(f"setup: {clusters} simulated clusters, {templates:,} Deployments")
    for name in names:
        await benchkit.register_ready(plane, members, name)
    await plane.client.create(_policy(names))
    for index in range(templates):
        await plane.client.create(benchkit.deployment(NAMESPACE, f"web-{index:05d}", replicas=1))
    setup_seconds = time.perf_counter() - setup_started
    done = benchkit.Completion(plane.manager.informers.informer_for(ResourceBinding),
                               lambda binding: benchkit.healthy(binding, clusters))
    started, cpu_started = time.perf_counter(), time.process_time()
    task = asyncio.get_running_loop().create_task(plane.run())
    try:
        with measure():
            progress.phase(f"propagating to {clusters} clusters each")
            complete = await benchkit.wait_until(
                lambda: done.count() >= templates, task, deadline=started + limit,
                report=progress.counting("templates applied and Healthy everywhere",
                                         lambda: len(done.finished), templates))
            # the moment the last binding got there (the poll that notices comes up to POLL_SECONDS later)
            seconds = ((done.last_at if complete and done.last_at is not None else time.perf_counter())
                       - started)
            cpu_seconds = time.process_time() - cpu_started
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await store.close()
    works = len(done.finished) * clusters
    result: dict[str, Any] = {
        "benchmark": "propagation", "store": store_url.partition("://")[0], "templates": templates,
        "clusters": clusters, "works": works, "completed_templates": len(done.finished),
        "seconds": round(seconds, 3), "works_per_second": round(works / seconds, 1) if seconds > 0 else 0.0,
        "setup_seconds": round(setup_seconds, 3), "cpu_seconds": round(cpu_seconds, 3),
    }
    return result


__all__ = ["PIPELINE", "bench_propagation"]
