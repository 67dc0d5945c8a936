"""Running a scenario in virtual time (docs/scenario-format.md, "Timeline").

The driver owns the world of one run — a :class:`~fleetkeeper.clock.VirtualClock`, a
:class:`~fleetkeeper.members.simulated.SimulatedFleet`, the control plane and one
in-process agent per Pull cluster — and walks the timeline: advance virtual time to
the step's ``at`` (every controller and simulated member runs meanwhile, and time
jumps whenever all of them wait), run the step's actions in order — first thing at
that instant, before any timer due at the same second — let the system
settle (everything idle at that instant; timers due later do not fire), then check the
step's expectations.

The control plane is built by a factory the wiring layer injects (this layer may not
pick backends), so ``fleetkeeper simulate``, the demo and the tests run the very graph
``fleetkeeper up`` runs.
"""

from __future__ import annotations

import asyncio
import random
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from fleetkeeper import errors
from fleetkeeper.api import cluster as cluster_api
from fleetkeeper.api import timeline as tl
from fleetkeeper.api.meta import Resource
from fleetkeeper.api.scheme import SCHEME
from fleetkeeper.client.interface import Client
from fleetkeeper.clock import VirtualClock
from fleetkeeper.members.interface import MemberPool, ObjectRef
from fleetkeeper.members.simulated import SimulatedCluster, SimulatedFleet
from fleetkeeper.options import Options
from fleetkeeper.runtime.context import Scope
from fleetkeeper.simulation import actions, checks, paths
from fleetkeeper.simulation.scenario import Expectation, Scenario, Step


class Plane(Protocol):
    """What the driver needs of a control plane (or an agent)."""

    @property
    def client(self) -> Client: ...

    async def run(self) -> None: ...


class PlaneFactory(Protocol):
    """Builds a control plane (``scope=Scope()``) or a Pull agent over the run's shared state."""

    def __call__(
        self,
        *,
        clock: VirtualClock,
        options: Options,
        members: MemberPool,
        scope: Scope,
        uid_factory: Callable[[], str],
    ) -> Plane: ...


#: Called after each step's expectations (the demo prints distributions with it).
Observer = Callable[["Driver", Step], Awaitable[None]]


@dataclass(frozen=True)
class Failure:
    """One expectation that did not hold."""

    step: str
    at: float
    object: str
    member: str | None
    path: str | None
    check: str
    expected: Any
    actual: Any
    reason: str

    def message(self) -> str:
        if self.check == "do":
            return f"{self.step} at t={self.at:g}s: action {self.object} failed: {self.reason}"
        where = f"{self.object} in member {self.member}" if self.member else self.object
        return (
            f"{self.step} at t={self.at:g}s: {where}, path {self.path or '(whole object)'}: "
            f"expected {self.check} {checks_repr(self.expected)}, got {checks_repr(self.actual)} "
            f"({self.reason})"
        )


def checks_repr(value: Any) -> str:
    import json

    return json.dumps(value, sort_keys=True, default=str)


@dataclass(frozen=True)
class TimelineLine:
    t: float
    subject: str
    action: str
    message: str

    def text(self) -> str:
        return f"t={self.t:.1f}s  {self.subject}  {self.message}"


@dataclass
class Outcome:
    scenario: str
    expectations: int = 0
    failures: list[Failure] = field(default_factory=list)
    timeline: list[TimelineLine] = field(default_factory=list)
    finished_at: float = 0.0

    @property
    def passed(self) -> bool:
        return not self.failures


def seeded_uids(seed: int) -> Callable[[], str]:
    """A deterministic uid source (uuid4-shaped) for one run."""
    rng = random.Random(seed)

    def next_uid() -> str:
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))

    return next_uid


class Driver:
    """One run of one scenario; use :func:`run_scenario`."""

    def __init__(
        self,
        scenario: Scenario,
        clock: VirtualClock,
        factory: PlaneFactory,
        *,
        observers: list[Observer] | None = None,
    ) -> None:
        self.scenario = scenario
        self.observers = list(observers or [])
        self.clock = clock
        self.factory = factory
        self.fleet = SimulatedFleet(clock)
        self.pool: MemberPool = self.fleet
        self.uids = seeded_uids(scenario.seed)
        self.plane: Plane | None = None
        self.agents: dict[str, asyncio.Task[None]] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self.outcome = Outcome(scenario=scenario.name)
        self._scenario_lines: list[TimelineLine] = []

    @property
    def client(self) -> Client:
        assert self.plane is not None
        return self.plane.client

    # ------------------------------------------------------------------ lifecycle
    async def run(self) -> Outcome:
        for c in self.scenario.clusters:
            self.fleet.add(
                c.name, nodes=c.nodes, node_resources=dict(c.node_resources), pod_startup=c.pod_startup
            )
        self.plane = self.factory(
            clock=self.clock,
            options=self.scenario.options,
            members=self.pool,
            scope=Scope(),
            uid_factory=self.uids,
        )
        self._tasks.append(asyncio.get_running_loop().create_task(self.plane.run(), name="control-plane"))
        try:
            await self.clock.settle()
            await actions.join_clusters(self, self.scenario.clusters)
            await self.clock.settle()  # joined = registered and reported, as after `karmadactl join`
            await actions.apply_resources(self.client, self.scenario.resources)
            await self.clock.settle()
            for step in self.scenario.timeline:
                await self._step(step)
            self.outcome.finished_at = self.clock.elapsed()
            self.outcome.timeline = await self._timeline()
        finally:
            await self._stop()
        return self.outcome

    def start_agent(self, name: str) -> None:
        """Run the in-process Pull agent of cluster ``name`` (no-op if running)."""
        if name in self.agents and not self.agents[name].done():
            return
        agent = self.factory(
            clock=self.clock,
            options=self.scenario.options,
            members=self.pool,
            scope=Scope(agent_cluster=name),
            uid_factory=self.uids,
        )
        self.agents[name] = asyncio.get_running_loop().create_task(agent.run(), name=f"agent-{name}")

    async def stop_agent(self, name: str) -> None:
        task = self.agents.pop(name, None)
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def _stop(self) -> None:
        for name in list(self.agents):
            await self.stop_agent(name)
        for task in self._tasks:
            task.cancel()
        results = await asyncio.gather(*self._tasks, return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException) and not isinstance(result, asyncio.CancelledError):
                raise result

    def cluster(self, name: str) -> SimulatedCluster:
        return self.fleet[name]

    def note(self, message: str) -> None:
        """Put a scenario action on the timeline."""
        self._scenario_lines.append(TimelineLine(self.clock.elapsed(), "scenario", tl.SCENARIO, message))

    # ------------------------------------------------------------------ steps
    async def _step(self, step: Step) -> None:
        # the step's actions happen first at their instant: a probe due at the same second
        # already sees the fault (otherwise detection would depend on timer order)
        await self.clock.wake_first_at(step.at)
        self._check_alive()
        for action in step.do:
            try:
                await actions.perform(self, action)
            except actions.ActionFailed as exc:
                self.outcome.failures.append(
                    Failure(step.where, step.at, action.name, None, None, "do", action.arg, None, str(exc))
                )
        await self.clock.settle()
        self._check_alive()
        for expectation in step.expect:
            self.outcome.expectations += 1
            failure = await self._check(step, expectation)
            if failure is not None:
                self.outcome.failures.append(failure)
        for observe in self.observers:
            await observe(self, step)

    def _check_alive(self) -> None:
        for task in self._tasks:
            if task.done() and not task.cancelled() and task.exception() is not None:
                raise RuntimeError("the control plane stopped unexpectedly") from task.exception()

    async def _check(self, step: Step, e: Expectation) -> Failure | None:
        obj = await self._fetch(e)
        what = str(e.ref)
        if obj is None:
            if e.check == "absent" and e.value is True:
                return None
            return Failure(
                step.where,
                step.at,
                what,
                e.member,
                e.path,
                e.check,
                e.value,
                None,
                "the object does not exist",
            )
        found, actual = (True, obj) if e.path is None else paths.resolve(obj, e.path)
        reason = checks.evaluate(e.check, e.value, found=found, actual=actual)
        if reason is None:
            return None
        return Failure(
            step.where, step.at, what, e.member, e.path, e.check, e.value, actual if found else None, reason
        )

    async def _fetch(self, e: Expectation) -> dict[str, Any] | None:
        if e.member is not None:
            ref = ObjectRef(e.ref.api_version, e.ref.kind, e.ref.namespace, e.ref.name)
            return self.fleet[e.member].peek(ref)
        model = SCHEME.model_for(e.ref.api_version, e.ref.kind)
        try:
            found: Resource = await self.client.get(model, e.ref.name, e.ref.namespace)
        except errors.NotFound:
            return None
        return found.to_dict()

    async def _timeline(self) -> list[TimelineLine]:
        entries = (await self.client.list(tl.TimelineEntry)).items
        entries.sort(key=lambda e: (e.time, int(e.metadata.resource_version or 0)))
        epoch = self.clock.epoch
        lines = [
            TimelineLine((e.time - epoch).total_seconds(), subject_text(e.subject), e.action, e.message)
            for e in entries
        ]
        merged = sorted([*self._scenario_lines, *lines], key=lambda line: line.t)
        return merged


_SHORT = {
    "Cluster": "cluster",
    "ResourceBinding": "rb",
    "ClusterResourceBinding": "crb",
    "Work": "work",
    "PropagationPolicy": "pp",
    "ClusterPropagationPolicy": "cpp",
    "MultiClusterIngress": "mci",
    "Remedy": "remedy",
    "ClusterTaintPolicy": "clustertaintpolicy",
}


def subject_text(subject: tl.Subject) -> str:
    """``rb/default/nginx-deployment``, ``cluster/member1``."""
    kind = _SHORT.get(subject.kind, subject.kind.lower())
    return f"{kind}/{subject.namespace}/{subject.name}" if subject.namespace else f"{kind}/{subject.name}"


def run_scenario(
    scenario: Scenario,
    factory: PlaneFactory,
    *,
    clock: VirtualClock | None = None,
    observers: list[Observer] | None = None,
) -> Outcome:
    """Run ``scenario`` to its end on a fresh virtual clock; same input, same outcome.

    Raises ``errors.ScenarioError`` (naming ``spec.clusters[i]`` or ``spec.resources[i]``)
    when the control plane refuses what the file sets up at time 0.
    """
    clock = clock or VirtualClock()
    return clock.run(Driver(scenario, clock, factory, observers=observers).run())


__all__ = [
    "Driver",
    "Failure",
    "Observer",
    "Outcome",
    "Plane",
    "PlaneFactory",
    "TimelineLine",
    "run_scenario",
    "seeded_uids",
    "subject_text",
]
_ = cluster_api
