"""Assembling a control plane: the one place that picks backends and builds the graph.

:class:`ControlPlane` puts together, over one Store: the local client (through the
admission chain), a :class:`~fleetkeeper.runtime.manager.Manager` with its shared
informers, every controller's ``setup(mgr, ctx)`` in :data:`CONTROLLERS` order, and
the scheduler. ``fleetkeeper up``, ``fleetkeeper simulate``, the demo, the benchmarks
and the integration tests all build it here, so they run the same graph.

A Pull agent is the same assembly with ``Scope(agent_cluster=NAME)`` and the agent's
subset of controllers (:data:`AGENT_CONTROLLERS`).

Running a plane also tunes CPython's cyclic garbage collector for the process
(:func:`tune_gc`): a control plane keeps every object of its informers and member caches
alive, and with the default thresholds (a young collection every 700 allocations, a
full one as soon as the old generation grew by a quarter) each full collection walks
that whole cache — measured at about a third of the CPU of the propagation benchmark.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from fleetkeeper.api import admission
from fleetkeeper.client.interface import Client
from fleetkeeper.client.local import LocalClient
from fleetkeeper.clock import Clock
from fleetkeeper.interpreter import Interpreter
from fleetkeeper.members.interface import MemberPool
from fleetkeeper.options import Options
from fleetkeeper.runtime import recorder
from fleetkeeper.runtime.context import Context, Scope
from fleetkeeper.runtime.leaderelection import LeaderElectionConfig, LeaderElector
from fleetkeeper.runtime.manager import Manager
from fleetkeeper.scheduler import controller as scheduler_controller
from fleetkeeper.store.interface import StoreProtocol

Setup = Callable[[Manager, Context], None]

#: Modules of the control plane, in start order (each has ``setup(mgr, ctx)``).
CONTROLLERS: tuple[str, ...] = (
    # first: the kinds CRDs define are known before any other controller looks at a template
    "fleetkeeper.controllers.crds",
    "fleetkeeper.controllers.customizations",
    "fleetkeeper.controllers.policy_ids",
    "fleetkeeper.controllers.detector",
    "fleetkeeper.controllers.dependencies",
    "fleetkeeper.controllers.binding",
    "fleetkeeper.controllers.execution",
    "fleetkeeper.controllers.work_status",
    "fleetkeeper.controllers.binding_status",
    "fleetkeeper.controllers.cluster",
    "fleetkeeper.controllers.cluster_status",
    "fleetkeeper.controllers.default_policy",
    "fleetkeeper.controllers.taint_policy",
    "fleetkeeper.controllers.taint_manager",
    "fleetkeeper.controllers.graceful_eviction",
    "fleetkeeper.controllers.application_failover",
    "fleetkeeper.controllers.workload_rebalancer",
    "fleetkeeper.controllers.remedy",
    "fleetkeeper.controllers.multicluster_ingress",
    "fleetkeeper.controllers.fleet_metrics",
    "fleetkeeper.controllers.namespaces",
    # simulated members only: their DNS, the per-node service-name-resolution detectors
    # (like Karmada's example DaemonSet) and their Services' HTTP endpoints
    "fleetkeeper.cmd.detector",
)
#: Modules a Pull agent runs for its own cluster (Karmada's agent: status, lease, Works).
AGENT_CONTROLLERS: tuple[str, ...] = (
    "fleetkeeper.controllers.cluster_status",
    "fleetkeeper.agent.lease",
    "fleetkeeper.controllers.execution",
    "fleetkeeper.controllers.work_status",
)


#: scheduler workers. Scheduling is on the failover's critical path and goes first anyway
#: (:mod:`~fleetkeeper.runtime.turns`); in one event loop every busy worker adds its reconcile to
#: each loop turn, so a few keep turns short — each hop of a decision (write → informer →
#: queue → worker) waits one turn — without costing throughput (measured with ``fleetkeeper
#: bench failover``: 10,000 bindings rescheduled in the same time with 8 workers as with 32,
#: the first one in 56 ms instead of 120–280 ms; with 5 workers and 2 for evictions, 2,000
#: bindings in the same time again, the first in 18–40 ms instead of 39–47 ms). The floor is
#: ``concurrent_syncs`` (5 by default): a scheduler talking to a remote API server waits on
#: the network, and more workers then overlap the waits.
SCHEDULER_WORKERS = 4
#: collector thresholds of a control-plane process (see :func:`tune_gc`)
GC_THRESHOLDS = (50_000, 20, 10)


def tune_gc() -> None:
    """Collect young objects every 50,000 allocations instead of 700, and the old generation
    twenty times less often: reconcilers allocate in bursts that mostly die young, while
    the caches they fill live for the whole process and would otherwise be walked again
    and again. Never lowers thresholds a caller raised on purpose."""
    current = gc.get_threshold()
    gc.set_threshold(*(max(have, want) for have, want in zip(current, GC_THRESHOLDS, strict=True)))


def load_setups(names: Sequence[str]) -> list[Setup]:
    """``setup`` functions of the named modules."""
    return [importlib.import_module(name).setup for name in names]


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
    setups: Sequence[Setup] | None = None
    with_scheduler: bool = True
    identity: str = "fleetkeeper"

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
        self.context = Context(client=self.client, clock=self.clock, options=self.options,
                               members=self.members, interpreter=self.interpreter, scope=self.scope)
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
        self.manager = Manager(self.client, clock=self.clock, elector=elector)
        # Events and timeline entries are written once the failover's decisions are made
        recorder.defer_while(self.client, self.manager.turns)
        names = AGENT_CONTROLLERS if self.scope.is_agent else CONTROLLERS
        setups = list(self.setups) if self.setups is not None else load_setups(names)
        for setup in setups:
            setup(self.manager, self.context)
        if self.with_scheduler and not self.scope.is_agent:
            self._setup_scheduler()

    def _setup_scheduler(self) -> None:
        controller = scheduler_controller.new_controller(
            self.client, self.manager.informers, clock=self.clock,
            scheduler_name=self.options.scheduler_name,
            workers=max(SCHEDULER_WORKERS, self.options.concurrent_syncs),
        )
        self.manager.add(controller)

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
    "AGENT_CONTROLLERS", "CONTROLLERS", "GC_THRESHOLDS", "SCHEDULER_WORKERS", "ControlPlane", "Setup",
    "load_setups", "run_for",
    "tune_gc",
]
