"""What the pipeline benchmarks share: a fleet, its registration, workloads, and waiting.

``fleetkeeper bench propagation`` and ``fleetkeeper bench failover`` both build the real
control plane over a store URL with simulated Push members (pods start at once, nodes
big enough for every pod), create Deployments, and wait — on the plane's own shared
informer caches, so measuring costs no extra decoding — until every binding reports
its Works applied and Healthy. The helpers here are those steps; each benchmark
module adds what it measures.

The waiting loops are bounded by a deadline (``time.perf_counter``, the benchmark's
own wall clock) and report how far they got instead of hanging. While they wait, a
:class:`Progress` prints what is being waited for and how far it got (stderr; the JSON
result alone goes to stdout).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from contextlib import AbstractContextManager

from fleetkeeper.api.builtin import Deployment
from fleetkeeper.api.cluster import Cluster, ClusterStatus
from fleetkeeper.api.meta import Unstructured
from fleetkeeper.api.work import ResourceBinding
from fleetkeeper.clock import Clock
from fleetkeeper.cmd.app import ControlPlane
from fleetkeeper.members.simulated import SimulatedFleet
from fleetkeeper.runtime.handler import FuncHandler
from fleetkeeper.runtime.informer import Informer

#: how often the waiting loops look at the caches
POLL_SECONDS = 0.1
#: how often a count being waited for is printed
PROGRESS_SECONDS = 5.0

Report = Callable[[bool], None]


class Progress:
    """Progress lines of a long benchmark: each phase, then counts while waiting (see the module notes)."""

    def __init__(self, write: Callable[[str], None] | None) -> None:
        self._write = write
        self._started = time.perf_counter()

    def _line(self, text: str) -> None:
        if self._write is not None:
            self._write(f"[{time.perf_counter() - self._started:7.1f}s] {text}")

    def phase(self, text: str) -> None:
        self._line(text)

    def counting(self, label: str, count: Callable[[], int], total: int) -> Report:
        """A report for :func:`wait_until`: ``label n/total`` now and then, and once at the end."""
        last = [time.perf_counter()]

        def report(done: bool) -> None:
            now = time.perf_counter()
            if done or now - last[0] >= PROGRESS_SECONDS:
                last[0] = now
                self._line(f"{label}: {count():,}/{total:,}")

        return report


#: progress that prints nothing
SILENT = Progress(None)

#: what wraps a benchmark's measured phase (``fleetkeeper bench … --profile`` profiles it)
Measure = Callable[[], AbstractContextManager[object]]
#: the default: nothing around it
UNMEASURED: Measure = contextlib.nullcontext


def fleet(clock: Clock, names: list[str], *, pods: int) -> SimulatedFleet:
    """Simulated clusters whose two nodes hold ``pods`` pods each (CPU and memory to spare)."""
    members = SimulatedFleet(clock)
    for name in names:
        members.add(name, nodes=2, pod_startup=0.0,
                    node_resources={"cpu": "100000", "memory": "100000Gi", "pods": str(pods + 10)})
    return members


def cluster(name: str) -> Cluster:
    """A Push cluster reached at ``simulated://<name>``."""
    return Cluster.from_dict({"metadata": {"name": name},
                              "spec": {"syncMode": "Push", "apiEndpoint": f"simulated://{name}"}})


async def register_ready(plane: ControlPlane, members: SimulatedFleet, name: str) -> None:
    """Register a cluster and report it Ready at once (for planes without cluster-status)."""
    created = await plane.client.create(cluster(name))
    summary = await members[name].summary()
    created.status = ClusterStatus.from_dict({
        "kubernetesVersion": summary.kubernetes_version, "apiEnablements": summary.api_enablements,
        "conditions": [{"type": "Ready", "status": "True", "reason": "ClusterReady",
                        "message": "cluster is healthy and ready to accept workloads",
                        "lastTransitionTime": "2026-01-01T00:00:00Z"}]})
    await plane.client.update_status(created)


def deployment(namespace: str, name: str, *, replicas: int,
               labels: dict[str, str] | None = None) -> Unstructured:
    """A small nginx Deployment labelled ``app=<name>`` (plus ``labels``)."""
    return Deployment.from_dict({
        "metadata": {"name": name, "namespace": namespace, "labels": {"app": name, **(labels or {})}},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"containers": [{"name": "web", "image": "nginx:1.25",
                                                       "resources": {"requests": {"cpu": "10m"}}}]}}},
    })


def healthy(binding: ResourceBinding, works: int) -> bool:
    """``works`` Works, every one applied and Healthy, in ``status.aggregatedStatus``."""
    items = binding.status.aggregated_status or []
    return len(items) == works and all(i.applied and i.health == "Healthy" for i in items)


async def wait_until(check: Callable[[], bool], plane: asyncio.Task[None], *, deadline: float,
                     report: Report | None = None) -> bool:
    """Poll ``check`` until it holds (True) or the deadline passes (False); a crashed plane raises.
    ``report`` (:meth:`Progress.counting`) hears of every poll and of the end."""
    while not check():
        if time.perf_counter() >= deadline:
            if report is not None:
                report(True)
            return False
        if plane.done():
            plane.result()
        if report is not None:
            report(False)
        await asyncio.sleep(POLL_SECONDS)
    if report is not None:
        report(True)
    return True


class Completion:
    """Bindings of the plane's cache that satisfy ``done``, noted as their changes arrive (a
    handler on the shared cache: nothing is decoded again, nothing walks the cache), and the
    moment (``time.perf_counter``) the latest of them got there."""

    def __init__(self, bindings: Informer[ResourceBinding], done: Callable[[ResourceBinding], bool]) -> None:
        self._done = done
        self.finished: set[str] = set()
        self.last_at: float | None = None
        self._bindings = bindings
        self._handler: FuncHandler[ResourceBinding] = FuncHandler(self._note)
        bindings.add_handler(self._handler)  # what is cached already is replayed

    def close(self) -> None:
        """Stop noting changes (a setup's wait, once over, costs nothing in the measured phase)."""
        self._bindings.remove_handler(self._handler)

    def _note(self, old: ResourceBinding | None, new: ResourceBinding | None) -> None:
        """A finished binding is not looked at again."""
        if new is not None and new.key not in self.finished and self._done(new):
            self.finished.add(new.key)
            self.last_at = time.perf_counter()

    def count(self) -> int:
        """How many bindings are done now."""
        return len(self.finished)


__all__ = ["POLL_SECONDS", "PROGRESS_SECONDS", "SILENT", "UNMEASURED", "Completion", "Measure", "Progress",
           "Report", "cluster", "deployment", "fleet", "healthy", "register_ready", "wait_until"]
