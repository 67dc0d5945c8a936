"""Shared helpers for member tests: a simulated cluster on a fresh VirtualClock."""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine, Iterator, MutableMapping
from contextlib import contextmanager
from typing import Any, TypeVar

import structlog.testing

from fleetkeeper.clock import VirtualClock
from fleetkeeper.members.interface import ObjectRef
from fleetkeeper.members.simulated import SimulatedCluster

T = TypeVar("T")


def on_cluster(main: Callable[[SimulatedCluster, VirtualClock], Coroutine[Any, Any, T]], **options: Any) -> T:
    """Run ``main(cluster, clock)`` to completion with a fresh cluster on a fresh virtual clock."""
    clock = VirtualClock()

    async def wrapper() -> T:
        cluster = SimulatedCluster("member1", clock=clock, **options)
        try:
            return await main(cluster, clock)
        finally:
            await cluster.close()

    return clock.run(wrapper())


def workload(kind: str, name: str, *, replicas: int | None = 1, image: str = "app:v1", cpu: str | None = None,
             priority: int | None = None, namespace: str = "default", **spec: Any) -> dict[str, Any]:
    """A workload manifest (Deployment, StatefulSet, DaemonSet, Job, ReplicaSet) of one container."""
    container: dict[str, Any] = {"name": "main", "image": image}
    if cpu is not None:
        container["resources"] = {"requests": {"cpu": cpu}}
    pod_spec: dict[str, Any] = {"containers": [container]}
    if priority is not None:
        pod_spec["priority"] = priority
    if kind == "Job":
        pod_spec["restartPolicy"] = spec.pop("restart_policy", "Never")
    body: dict[str, Any] = {"template": {"metadata": {"labels": {"app": name}}, "spec": pod_spec}, **spec}
    if kind != "Job":
        body["selector"] = {"matchLabels": {"app": name}}
    if replicas is not None and kind not in ("DaemonSet", "Job"):
        body["replicas"] = replicas
    api_version = "batch/v1" if kind == "Job" else "apps/v1"
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": name, "namespace": namespace},
            "spec": body}


def pod(name: str, *, cpu: str | None = None, priority: int | None = None, **spec: Any) -> dict[str, Any]:
    """A bare Pod manifest in ``default``."""
    container: dict[str, Any] = {"name": "main", "image": "app:v1"}
    if cpu is not None:
        container["resources"] = {"requests": {"cpu": cpu}}
    pod_spec: dict[str, Any] = {"containers": [container], **spec}
    if priority is not None:
        pod_spec["priority"] = priority
    meta = {"name": name, "namespace": "default"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": pod_spec}


def ref(manifest: dict[str, Any]) -> ObjectRef:
    meta = manifest["metadata"]
    return ObjectRef(manifest["apiVersion"], manifest["kind"], meta.get("namespace", ""), meta["name"])


async def status(cluster: SimulatedCluster, manifest: dict[str, Any]) -> dict[str, Any]:
    """The live status of the object ``manifest`` names."""
    live = await cluster.get(ref(manifest))
    assert live is not None, f"{manifest['kind']} {manifest['metadata']['name']} does not exist"
    result: dict[str, Any] = live.get("status") or {}
    return result


async def pods_by_node(cluster: SimulatedCluster) -> dict[str, list[str]]:
    """Pod names per node name ("" for Pending pods)."""
    out: dict[str, list[str]] = {}
    for item in await cluster.list("v1", "Pod"):
        out.setdefault(item["spec"].get("nodeName", ""), []).append(item["metadata"]["name"])
    return out


@contextmanager
def every_log() -> Iterator[list[MutableMapping[str, Any]]]:
    """What is logged at any level meanwhile (whatever level an earlier test configured)."""
    before = structlog.get_config()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.DEBUG),
                        cache_logger_on_first_use=False)
    try:
        with structlog.testing.capture_logs() as logs:
            yield logs
    finally:
        structlog.configure(**before)
