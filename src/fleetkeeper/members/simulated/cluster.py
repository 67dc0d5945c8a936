"""``SimulatedCluster``: a KWOK-like member cluster that implements the Member protocol.

The API side (``apply``, ``get``, ``delete``, ``list``, ``watch``, ``probe``,
``summary``) passes the fault gate of ``faults.py`` and then talks to the cluster model
(``engine.py``). Fault injection is the set of plain methods named after the scenario
actions (``down``, ``blackhole``, ``up``, ``unhealthy``, ``set_nodes``,
``crash_workload``/``heal_workload``, ``dns_down``/``dns_up``, ``agent_down``/``agent_up``);
they act on the model directly, as the world would, and never fail.

Objects returned to callers are copies: nothing a caller does to them reaches the
cluster. ``apply`` auto-creates the namespace of a namespaced object, which keeps
propagation stories short — unless ``create_namespaces=False`` (``fleetkeeper member-sim``,
which stands for a real cluster): then an object of a namespace the cluster does not have
is refused with NotFound ``namespaces "NAME" not found``, as Kubernetes refuses it.
Namespaced kinds applied without a namespace go to ``default``.

Everything here must run inside the event loop of the cluster's clock (timers for pod
startup are scheduled on the running loop).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from functools import partial
from typing import Any

from fleetkeeper import errors
from fleetkeeper.api.selectors import parse_label_selector, requirements_match
from fleetkeeper.clock import Clock
from fleetkeeper.members.interface import FIELD_MANAGER, ClusterSummary, ObjectRef
from fleetkeeper.members.simulated import events, quantity
from fleetkeeper.members.simulated import nodes as node_model
from fleetkeeper.members.simulated.engine import NAMESPACE, POD, Engine
from fleetkeeper.members.simulated.faults import ApiState, fail, refuses
from fleetkeeper.members.simulated.objects import GroupKind, Obj, ObjectKey, clone, group_of
from fleetkeeper.members.simulated.podapply import apply_pod
from fleetkeeper.members.simulated.pods import Pod, render
from fleetkeeper.members.simulated.scheduler import DEFAULT_NODE_RESOURCES
from fleetkeeper.members.simulated.served import ServedResources
from fleetkeeper.members.simulated.services import SERVICE_CIDR
from fleetkeeper.members.simulated.watch import Matcher, WatchStream

HEALTH_PATHS = frozenset({"/readyz", "/healthz", "/livez"})
SYSTEM_NAMESPACES = ("default", "kube-node-lease", "kube-public", "kube-system")
CRD = GroupKind("apiextensions.k8s.io", "CustomResourceDefinition")


def matcher(label_selector: str | None) -> Matcher:
    """A label predicate for a selector string (``errors.BadRequest`` when malformed)."""
    requirements = parse_label_selector(label_selector or "")
    return lambda labels: requirements_match(requirements, labels)


class SimulatedCluster:
    """One simulated member cluster (see the module notes)."""

    def __init__(self, name: str, *, clock: Clock, nodes: int = 3,
                 node_resources: dict[str, str | int | float] | None = None, pod_startup: float = 2.0,
                 kubernetes_version: str = "v1.31.0", labels: dict[str, str] | None = None,
                 call_timeout: float | None = 30.0, job_run: float = 10.0,
                 uid_factory: Callable[[], str] | None = None, create_namespaces: bool = True,
                 service_cidr: str = SERVICE_CIDR) -> None:
        self._name = name
        self.create_namespaces = create_namespaces
        self.clock = clock
        self.kubernetes_version = kubernetes_version
        self.labels: dict[str, str] = dict(labels or {})
        self.call_timeout = call_timeout
        self.node_resources = quantity.milli_list(node_resources or DEFAULT_NODE_RESOURCES)
        self.state = ApiState.UP
        self.dns_ok = True
        self.agent_ok = True
        self.served = ServedResources()
        self.engine = Engine(name, clock, pod_startup=pod_startup, job_run=job_run, uid_factory=uid_factory,
                             service_cidr=service_cidr)
        for namespace in SYSTEM_NAMESPACES:
            self._ensure_namespace(namespace)
        self.set_nodes(nodes)

    @property
    def name(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"SimulatedCluster({self._name!r}, state={self.state.value})"

    # -- Member: objects ------------------------------------------------------------------
    async def apply(self, manifest: dict[str, Any], *, field_manager: str = FIELD_MANAGER,
                    force: bool = True) -> dict[str, Any]:
        await self._gate()
        manifest = self._normalize(clone(manifest))
        key = ObjectKey.of(manifest)
        if key.namespace:
            self.namespace_for(key.namespace)
        if key.group_kind == POD:
            live = apply_pod(self.engine, manifest, manager=field_manager, force=force)
        else:
            live = self.engine.apply(manifest, manager=field_manager, force=force)
        self.observe(manifest["apiVersion"], key, live)
        self.engine.drain()
        return clone(live)

    async def get(self, ref: ObjectRef) -> dict[str, Any] | None:
        await self._gate()
        obj = self._read(self._key(ref))
        if obj is None:
            return None
        return {**clone(obj), "apiVersion": ref.api_version}

    def peek(self, ref: ObjectRef) -> dict[str, Any] | None:
        """The live object whatever the faults (scenario expectations and the demo look inside)."""
        obj = self._read(self._key(ref))
        if obj is None:
            return None
        return {**clone(obj), "apiVersion": ref.api_version}

    async def delete(self, ref: ObjectRef) -> bool:
        await self._gate()
        key = self._key(ref)
        if self._read(key) is None:
            return False
        self.engine.delete_object(key)
        self.engine.drain()
        return True

    async def list(self, api_version: str, kind: str, namespace: str | None = None, *,
                   label_selector: str | None = None) -> list[dict[str, Any]]:
        await self._gate()
        matches = matcher(label_selector)
        gk = GroupKind(group_of(api_version), kind)
        if not namespace or not self.served.namespaced(gk.group, gk.kind, namespace):
            namespace = None  # all namespaces; a cluster-scoped kind ignores the namespace, as the API does
        items = self._items(gk, namespace)
        return [clone(obj) for obj in items if matches(obj["metadata"].get("labels") or {})]

    def watch(self, api_version: str, kind: str, *, label_selector: str | None = None) -> WatchStream:
        gk = GroupKind(group_of(api_version), kind)
        return WatchStream(gk, matcher(label_selector), self._open_watch)

    async def _open_watch(self, stream: WatchStream) -> None:
        await self._gate()
        for obj in self._items(stream.gk, None):
            if stream.matches(obj["metadata"].get("labels") or {}):
                stream.queue("ADDED", ObjectKey.of(obj), obj)
        self.engine.hub.register(stream)

    # -- Member: health and status ----------------------------------------------------------
    async def probe(self, path: str) -> int:
        await self._gate()
        if path.partition("?")[0] not in HEALTH_PATHS:
            return 404
        return 500 if self.state is ApiState.UNHEALTHY else 200

    async def summary(self) -> ClusterSummary:
        await self._gate()
        scheduler = self.engine.scheduler
        base = {"cpu": 0, "memory": 0, "pods": 0}
        return ClusterSummary(
            kubernetes_version=self.kubernetes_version,
            api_enablements=self.served.api_enablements(),
            node_summary={"totalNum": len(scheduler.nodes), "readyNum": len(scheduler.nodes)},
            resource_summary={
                "allocatable": quantity.format_list({**base, **scheduler.allocatable()}),
                "allocating": quantity.format_list({**base, **scheduler.allocating}),
                "allocated": quantity.format_list({**base, **scheduler.allocated()}),
            },
        )

    async def close(self) -> None:
        """End the watches opened on this cluster; the cluster itself keeps running."""
        self.engine.hub.close_all()

    # -- fault injection (the scenario actions) -------------------------------------------
    def down(self) -> None:
        """``clusterDown``: connections are refused."""
        self._set_state(ApiState.DOWN)

    def blackhole(self) -> None:
        """``clusterBlackhole``: requests time out."""
        self._set_state(ApiState.BLACKHOLE)

    def unhealthy(self) -> None:
        """``clusterUnhealthy``: the API answers, health endpoints return 500."""
        self._set_state(ApiState.UNHEALTHY)

    def up(self) -> None:
        """``clusterUp``: undo down, blackhole and unhealthy."""
        self._set_state(ApiState.UP)

    def dns_down(self) -> None:
        self.dns_ok = False

    def dns_up(self) -> None:
        self.dns_ok = True

    def agent_down(self) -> None:
        self.agent_ok = False

    def agent_up(self) -> None:
        self.agent_ok = True

    def set_nodes(self, count: int) -> None:
        """``setNodes``: the cluster now has ``count`` nodes."""
        node_model.set_nodes(self.engine, count, allocatable=self.node_resources,
                             kubelet_version=self.kubernetes_version)
        self.engine.drain()

    def crash_workload(self, api_version: str, kind: str, namespace: str, name: str) -> None:
        """``crashWorkload``: the workload's pods (present and future) crash-loop."""
        self.crash(ObjectKey(group_of(api_version), kind, namespace, name))

    def heal_workload(self, api_version: str, kind: str, namespace: str, name: str) -> None:
        """``healWorkload``: undo ``crash_workload`` (crashed pods restart and get Ready)."""
        self.heal(ObjectKey(group_of(api_version), kind, namespace, name))

    def crash(self, key: ObjectKey) -> None:
        """:meth:`crash_workload` by the workload's key (group, kind, namespace, name)."""
        self.engine.crashed.add(key)
        for pod in self._pods_of(key):
            self.engine.lifecycle.crash(pod)
            self.engine.pod_changed(pod)
        self.engine.drain()

    def heal(self, key: ObjectKey) -> None:
        """:meth:`heal_workload` by the workload's key."""
        self.engine.crashed.discard(key)
        for pod in self._pods_of(key):
            if pod.crashing:
                self.engine.lifecycle.restart(pod)
                self.engine.pod_changed(pod)
        self.engine.drain()

    @property
    def crashed(self) -> frozenset[ObjectKey]:
        """The workloads whose pods crash-loop now."""
        return frozenset(self.engine.crashed)

    @property
    def node_count(self) -> int:
        """How many nodes the cluster has now."""
        return len(self.engine.scheduler.nodes)

    # -- helpers --------------------------------------------------------------------------
    async def _gate(self) -> None:
        if refuses(self.state):
            await fail(self.state, self._name, clock=self.clock, call_timeout=self.call_timeout)

    def _set_state(self, state: ApiState) -> None:
        self.state = state
        if refuses(state):
            self.engine.hub.break_all(partial(fail, state, self._name, clock=self.clock,
                                              call_timeout=self.call_timeout))

    def _normalize(self, manifest: Obj) -> Obj:
        api_version, kind, meta = manifest.get("apiVersion"), manifest.get("kind"), manifest.get("metadata")
        if not isinstance(api_version, str) or not api_version or not isinstance(kind, str) or not kind:
            raise errors.Invalid("apiVersion and kind are required",
                                 causes=[errors.Cause("kind", "Required value", "FieldValueRequired")])
        if not isinstance(meta, dict) or not meta.get("name"):
            raise errors.Invalid(
                f"{kind}: metadata.name is required (server-side apply does not generate names)",
                causes=[errors.Cause("metadata.name", "Required value", "FieldValueRequired")], kind=kind)
        namespace = str(meta.get("namespace") or "")
        if self.served.namespaced(group_of(api_version), kind, namespace):
            meta["namespace"] = namespace or "default"
        else:
            meta.pop("namespace", None)
        return manifest

    def observe(self, api_version: str, key: ObjectKey, live: Obj) -> None:
        """Serve the kind of an object just stored (and what a stored CRD defines)."""
        if key.group_kind == CRD:
            self.served.serve_crd(live)
        self.served.observe(api_version, key.kind, bool(key.namespace))

    def namespace_for(self, namespace: str) -> None:
        """Make sure an object may go into ``namespace``: create it, or refuse as Kubernetes does."""
        if self.create_namespaces:
            self._ensure_namespace(namespace)
        elif self.engine.store.get(ObjectKey("", "Namespace", "", namespace)) is None:
            raise errors.NotFound(f'namespaces "{namespace}" not found', kind="namespaces", name=namespace)

    def _ensure_namespace(self, namespace: str) -> None:
        key = ObjectKey("", "Namespace", "", namespace)
        if self.engine.store.get(key) is None:
            self.engine.store.create({
                "apiVersion": "v1", "kind": "Namespace",
                "metadata": {"name": namespace, "labels": {"kubernetes.io/metadata.name": namespace}},
                "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"},
            })

    def _key(self, ref: ObjectRef) -> ObjectKey:
        group = group_of(ref.api_version)
        namespaced = self.served.namespaced(group, ref.kind, ref.namespace)
        return ObjectKey(group, ref.kind, ref.namespace if namespaced else "", ref.name)

    def read(self, key: ObjectKey) -> Obj | None:
        """The stored (never mutated) state of one object, pods and events rendered; no fault gate."""
        return self._read(key)

    def items(self, gk: GroupKind, namespace: str | None = None) -> builtins.list[Obj]:
        """The stored states of a kind in (namespace, name) order (as :meth:`read`)."""
        return self._items(gk, namespace)

    def _read(self, key: ObjectKey) -> Obj | None:
        if key.group_kind == POD:
            pod = self.engine.pods.get(key.namespace, key.name)
            return None if pod is None else render(pod)
        if key.group_kind == events.EVENT:
            event = self.engine.events.get(key.namespace, key.name)
            if event is not None:
                return events.render(event)
        return self.engine.store.get(key)

    def _items(self, gk: GroupKind, namespace: str | None) -> builtins.list[Obj]:
        if gk == POD:
            return [render(pod) for pod in self.engine.pods.items(namespace)]
        if gk == events.EVENT:  # the cluster's own, and any a client wrote
            written = [(ObjectKey.of(obj), obj) for obj in self.engine.store.items(gk, namespace)]
            own = [(e.key, events.render(e)) for e in self.engine.events.items(namespace)]
            return [obj for _, obj in sorted(written + own, key=lambda pair: pair[0])]
        return list(self.engine.store.items(gk, namespace))

    def _pods_of(self, workload: ObjectKey) -> builtins.list[Pod]:
        if workload.group_kind == POD:
            pod = self.engine.pods.get(workload.namespace, workload.name)
            return [] if pod is None else [pod]
        return [p for p in self.engine.pods.items(workload.namespace) if p.workload == workload]


__all__ = ["CRD", "HEALTH_PATHS", "NAMESPACE", "SimulatedCluster"]
