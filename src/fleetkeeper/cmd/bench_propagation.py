"""``fleetkeeper bench propagation``: how fast templates become healthy workloads in the members.

The benchmark builds the real control plane (:class:`~fleetkeeper.cmd.app.ControlPlane`
with the propagation controllers and the scheduler) over a store URL (sqlite by
default), ``clusters`` simulated Push members (pods start at once, nodes big enough
for every pod) and one PropagationPolicy that duplicates every Deployment of the
``bench`` namespace to all clusters. It creates ``templates`` one-replica Deployments
up front, starts the plane, and measures the wall time until every binding reports
``templates × clusters`` Works applied and Healthy in ``status.aggregatedStatus``.

Completion is read from the plane's own shared binding cache, so measuring costs no
extra decoding. Figures depend on the machine: quote them with it.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from fleetkeeper import errors
from fleetkeeper.api.builtin import Deployment
from fleetkeeper.api.cluster import Cluster, ClusterStatus
from fleetkeeper.api.meta import Unstructured
from fleetkeeper.api.policy import PropagationPolicy
from fleetkeeper.api.work import ResourceBinding
from fleetkeeper.clock import Clock
from fleetkeeper.cmd.app import ControlPlane, load_setups
from fleetkeeper.members.interface import Member
from fleetkeeper.members.simulated import SimulatedFleet
from fleetkeeper.options import Options
from fleetkeeper.runtime.informer import Informer
from fleetkeeper.store import open_store

#: the controllers of the propagation pipeline, in start order (the scheduler comes with the plane)
PIPELINE = tuple(f"fleetkeeper.controllers.{name}" for name in (
    "customizations", "policy_ids", "detector", "dependencies", "binding", "execution", "work_status",
    "binding_status"))
NAMESPACE = "bench"
POLL_SECONDS = 0.2


class _Fleet:
    """The simulated fleet as a MemberPool."""

    def __init__(self, fleet: SimulatedFleet) -> None:
        self.fleet = fleet

    def member(self, cluster_name: str, api_endpoint: str | None = None) -> Member:
        if cluster_name not in self.fleet:
            raise errors.MemberUnreachable(f"no simulated cluster {cluster_name!r}")
        return self.fleet[cluster_name]


def _deployment(index: int) -> Unstructured:
    name = f"web-{index:05d}"
    return Deployment.from_dict({
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": {"app": name}},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"containers": [{"name": "web", "image": "nginx:1.25",
                                                       "resources": {"requests": {"cpu": "10m"}}}]}}},
    })


def _policy(clusters: list[str]) -> PropagationPolicy:
    return PropagationPolicy.from_dict({
        "metadata": {"name": "everything", "namespace": NAMESPACE},
        "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment"}],
                 "placement": {"clusterAffinity": {"clusterNames": clusters}}},
    })


async def _register(plane: ControlPlane, fleet: SimulatedFleet, name: str) -> None:
    member = fleet[name]
    created = await plane.client.create(Cluster.from_dict({
        "metadata": {"name": name}, "spec": {"syncMode": "Push", "apiEndpoint": f"simulated://{name}"}}))
    summary = await member.summary()
    created.status = ClusterStatus.from_dict({
        "kubernetesVersion": summary.kubernetes_version, "apiEnablements": summary.api_enablements,
        "conditions": [{"type": "Ready", "status": "True", "reason": "ClusterReady",
                        "message": "cluster is healthy and ready to accept workloads",
                        "lastTransitionTime": "2026-01-01T00:00:00Z"}]})
    await plane.client.update_status(created)


def _done(binding: ResourceBinding, clusters: int) -> bool:
    items = binding.status.aggregated_status or []
    return len(items) == clusters and all(i.applied and i.health == "Healthy" for i in items)


async def _wait_done(bindings: Informer[ResourceBinding], plane: asyncio.Task[None], *, templates: int,
                     clusters: int, deadline: float) -> int:
    """Poll the plane's binding cache until ``templates`` bindings are done; how many are."""
    finished: set[str] = set()
    seen: dict[str, str | None] = {}
    while time.perf_counter() < deadline and len(finished) < templates:
        await asyncio.sleep(POLL_SECONDS)
        if plane.done():
            plane.result()
        for key in bindings.keys():  # noqa: SIM118 - an informer, not a dict
            found = bindings.get(key) if key not in finished else None
            if found is not None and seen.get(key) != found.metadata.resource_version:
                seen[key] = found.metadata.resource_version
                if _done(found, clusters):
                    finished.add(key)
    return len(finished)


async def bench_propagation(*, templates: int = 1000, clusters: int = 10, store_url: str,
                            clock: Clock, limit: float = 600.0) -> dict[str, object]:
    """Propagate ``templates`` Deployments to ``clusters`` members; time until all are Healthy
    (giving up after ``limit`` seconds: ``completed_templates`` then says how far it got)."""
    store = open_store(store_url, clock=clock)
    fleet = SimulatedFleet(clock)
    names = [f"member-{i:02d}" for i in range(clusters)]
    for name in names:
        fleet.add(name, nodes=2, pod_startup=0.0,
                  node_resources={"cpu": "1000", "memory": "4000Gi", "pods": str(templates + 10)})
    plane = ControlPlane(store=store, clock=clock, members=_Fleet(fleet), options=Options(leader_elect=False),
                         setups=load_setups(PIPELINE))
    setup_started = time.perf_counter()
    for name in names:
        await _register(plane, fleet, name)
    await plane.client.create(_policy(names))
    for index in range(templates):
        await plane.client.create(_deployment(index))
    setup_seconds = time.perf_counter() - setup_started
    bindings = plane.manager.informers.informer_for(ResourceBinding)
    started, cpu_started = time.perf_counter(), time.process_time()
    task = asyncio.get_running_loop().create_task(plane.run())
    try:
        done = await _wait_done(bindings, task, templates=templates, clusters=clusters,
                                deadline=started + limit)
        seconds = time.perf_counter() - started
        cpu_seconds = time.process_time() - cpu_started
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await store.close()
    works = done * clusters
    result: dict[str, Any] = {
        "benchmark": "propagation", "store": store_url.partition("://")[0], "templates": templates,
        "clusters": clusters, "works": works, "completed_templates": done, "seconds": round(seconds, 3),
        "works_per_second": round(works / seconds, 1) if seconds > 0 else 0.0,
        "setup_seconds": round(setup_seconds, 3), "cpu_seconds": round(cpu_seconds, 3),
    }
    return result


__all__ = ["PIPELINE", "bench_propagation"]
