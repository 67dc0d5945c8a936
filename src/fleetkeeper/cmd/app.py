"""Assembling a control plane: the one place that picks backends and builds the graph.

:class:`ControlPlane` puts together, over one Store: the local client (through the
admission chain), a :class:`~fleetkeeper.runtime.manager.Manager` with its shared
informers, the services its controllers share (the sink of their records, the caches of
the members' managed objects: fields of the :class:`~fleetkeeper.runtime.context.Context`),
and every controller :data:`SPECS` declares, in that order. ``fleetkeeper up``,
``fleetkeeper simulate``, the demo, the benchmarks and the integration tests all build it
here, so they run the same graph. Adding a controller is one module with its ``SPEC`` and
one line in :data:`SPECS`.

A Pull agent is the same assembly with ``Scope(agent_cluster=NAME)``: each spec says
whether it runs there (``runs``). One process pauses its collector for all the planes in
it (:class:`~fleetkeeper.runtime.gcpause.Collector`): whoever runs several passes one.

Running a plane also tunes CPython's cyclic garbage collector for the process
(:func:`tune_gc`): a control plane keeps every object of its informers and member caches
alive, and with the default thresholds (a young collection every 700 allocations, a
full one as soon as the old generation grew by a quarter) each full collection walks
that whole cache — measured at about a third of the CPU of the propagation benchmark.
``fleetkeeper apiserver`` also freezes what it holds once serving (:func:`freeze_startup_heap`),
so a full collection no longer walks the modules and the scheme (about 60 ms of event loop).
A process running controllers does not: the collector pauses of
:mod:`~fleetkeeper.runtime.gcpause` end by moving what a pause left alive to the oldest
generation with ``gc.freeze``/``gc.unfreeze``, which they skip when something else is frozen.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections.abc import Sequence
from dataclasses import dataclass, field

from fleetkeeper.agent import lease
from fleetkeeper.api import admission
from fleetkeeper.client.interface import Client
from fleetkeeper.client.local import LocalClient
from fleetkeeper.clock import Clock
from fleetkeeper.cmd import detector as member_addons
from fleetkeeper.controllers import (
    application_failover,
    binding,
    binding_status,
    cluster,
    cluster_status,
    crds,
    customizations,
    default_policy,
    dependencies,
    detector,
    execution,
    fleet_metrics,
    graceful_eviction,
    multicluster_ingress,
    namespace_sync,
    namespaces,
    policy_ids,
    remedy,
    taint_manager,
    taint_policy,
    work_status,
    workload_rebalancer,
)
from fleetkeeper.interpreter import Interpreter
from fleetkeeper.members.interface import MemberPool
from fleetkeeper.options import Options
from fleetkeeper.readiness import cleanup as readiness_cleanup
from fleetkeeper.readiness import controller as readiness
from fleetkeeper.runtime.context import Context, Scope
from fleetkeeper.runtime.gcpause import Collector
from fleetkeeper.runtime.leaderelection import LeaderElectionConfig, LeaderElector
from fleetkeeper.runtime.manager import Manager
from fleetkeeper.runtime.member_objects import MemberObjects
from fleetkeeper.runtime.presence import SERVER_ANNOTATION, STORE_ANNOTATION, Presence, public_url
from fleetkeeper.runtime.recorder import Sink
from fleetkeeper.runtime.spec import ControllerSpec, install
from fleetkeeper.scheduler import controller as scheduler
from fleetkeeper.store.interface import StoreProtocol

#: Every controller, in start order; each spec says where it runs (the control plane, a Pull
#: agent — Karmada's agent runs cluster status, the lease, execution and work status — or both).
SPECS: tuple[ControllerSpec, ...] = (
    # first: the kinds CRDs define are known before any other controller looks at a template
    crds.SPEC,
    customizations.SPEC,
    policy_ids.SPEC,
    detector.SPEC,
    dependencies.SPEC,
    binding.SPEC,
    execution.SPEC,
    work_status.SPEC,
    binding_status.SPEC,
    cluster.SPEC,
    cluster_status.SPEC,
    lease.SPEC,
    default_policy.SPEC,
    taint_policy.SPEC,
    taint_manager.SPEC,
    graceful_eviction.SPEC,
    application_failover.SPEC,
    workload_rebalancer.SPEC,
    remedy.SPEC,
    multicluster_ingress.SPEC,
    fleet_metrics.SPEC,
    namespaces.SPEC,
    namespace_sync.SPEC,
    # simulated members only: their DNS, the per-node service-name-resolution detectors
    # (like Karmada's example DaemonSet) and their Services' HTTP endpoints
    member_addons.SPEC,
    scheduler.SPEC,
    # last, lowest tier: whether each binding survives the loss of any one failure domain
    readiness.SPEC,
    # when readiness is off: the conditions it wrote while it was on are removed, once
    readiness_cleanup.SPEC,
)
#: collector thresholds of a control-plane process (see :func:`tune_gc`)
GC_THRESHOLDS = (50_000, 20, 10)


def tune_gc() -> None:
    """Collect young objects every 50,000 allocations instead of 700, and the old generation
    twenty times less often: reconcilers allocate in bursts that mostly die young, while
    the caches they fill live for the whole process and would otherwise be walked again
    and again. Never lowers thresholds a caller raised on purpose."""
    current = gc.get_threshold()
    gc.set_threshold(*(max(have, want) for have, want in zip(current, GC_THRESHOLDS, strict=True)))


def freeze_startup_heap() -> None:
    """Put what an API server holds once it serves (modules, the scheme, pydantic's validators:
    tens of thousands of objects) out of the collector's reach.
    Each full collection then walks only what was made since, instead of pausing the event
    loop for tens of milliseconds (``/readyz`` waiting with it) whenever requests that build
    many objects trigger one; frozen objects are still freed when unreferenced."""
    gc.collect()
    gc.freeze()


@dataclass
class ControlPlane:
    """Everything that runs against one store, ready to ``run()``."""

    store: StoreProtocol | None
    clock: Clock
    members: MemberPool
    options: Options = field(default_factory=Options)
    #: talk to the control plane through this client instead of a local one over ``store``
    #: (a network Pull agent passes a REST client and no store)
    client_override: Client | None = None
    interpreter: Interpreter | None = None
    scope: Scope = field(default_factory=Scope)
    #: what runs, in start order (those whose ``runs`` includes the scope)
    specs: Sequence[ControllerSpec] = SPECS
    identity: str = "fleetkeeper"
    #: the process's collector, paused while critical work is in flight (one per process)
    collector: Collector = field(default_factory=Collector)

    def __post_init__(self) -> None:
        if self.client_override is not None:
            self.client: Client = self.client_override
        elif self.store is not None:
            self.client = LocalClient(self.store, admission=admission.admit, clock=self.clock,
                                      admission_reads_old=admission.reads_old)
        else:
            raise ValueError("a ControlPlane needs a store or a client")
        if self.interpreter is None:
            self.interpreter = Interpreter(clock=self.clock)
        member_objects = MemberObjects(self.members, clock=self.clock,
                                       timeout=self.options.cluster_probe_timeout)
        self.context = Context(client=self.client, clock=self.clock, options=self.options,
                               members=self.members, interpreter=self.interpreter, sink=Sink(self.client),
                               member_objects=member_objects, scope=self.scope)
        elector = None
        if self.options.leader_elect and not self.scope.is_agent:
            elector = LeaderElector(
                self.client,
                LeaderElectionConfig(
                    "fleetkeeper-controller-manager", self.identity,
                    lease_duration=self.options.leader_elect_lease_duration,
                    renew_deadline=self.options.leader_elect_renew_deadline,
                    retry_period=self.options.leader_elect_retry_period,
                ),
                clock=self.clock,
            )
        self.manager = Manager(self.client, clock=self.clock, elector=elector, collector=self.collector)
        # Events and timeline entries are written once the failover's decisions are made
        self.context.sink.defer_while(self.manager.load)
        self.manager.add(member_objects)
        for spec in self.specs:
            install(spec, self.manager, self.context)

    def announce(self, *, server: str, store: str) -> None:
        """Keep this replica's presence record while it runs (``fleetkeeper status`` lists the
        replicas): its API address and store, next to the lease it competes for. Only a plane
        that elects a leader has one; call before :meth:`run`."""
        elector = self.manager.elector
        if elector is None:
            return
        config = elector.config
        notes = {SERVER_ANNOTATION: server, STORE_ANNOTATION: public_url(store)}
        self.manager.add(Presence(self.client, identity=config.identity, of=config.name,
                                  namespace=config.namespace, duration=config.lease_duration,
                                  clock=self.clock, annotations=notes))

    async def run(self) -> None:
        """Run until cancelled (tuning the process's garbage collector first)."""
        tune_gc()
        await self.manager.run()

    async def wait_started(self) -> None:
        await self.manager.wait_started()


async def run_for(plane: ControlPlane, seconds: float) -> None:
    """Run ``plane`` for ``seconds`` on its clock, then stop it (tests, benchmarks)."""
    task = asyncio.get_running_loop().create_task(plane.run())
    try:
        await plane.clock.sleep(seconds)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


__all__ = [
    "GC_THRESHOLDS", "SPECS", "ControlPlane", "freeze_startup_heap", "run_for", "tune_gc",
]
