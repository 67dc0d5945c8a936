"""Installing a declared controller: where it runs, its tier, its queue handed to its reconciler."""

from __future__ import annotations

import asyncio

import pytest

from fleetkeeper.api.core import Namespace
from fleetkeeper.api.meta import ObjectMeta
from fleetkeeper.client.local import LocalClient
from fleetkeeper.clock import VirtualClock
from fleetkeeper.interpreter import Interpreter
from fleetkeeper.members.simulated import SimulatedFleet
from fleetkeeper.options import Options
from fleetkeeper.runtime.context import Context, Scope
from fleetkeeper.runtime.manager import Manager
from fleetkeeper.runtime.member_objects import MemberObjects
from fleetkeeper.runtime.reconcile import Request, Result
from fleetkeeper.runtime.recorder import Sink
from fleetkeeper.runtime.spec import ControllerSpec, Deps, Runs, Tier, Watch, install
from fleetkeeper.runtime.turns import CRITICAL, DISPATCH, OTHERS
from fleetkeeper.store import open_store

from .helpers import run_virtual


def plane(clock: VirtualClock, scope: Scope | None = None) -> tuple[Manager, Context]:
    """A manager and the context of a plane (of an agent with ``scope``) over an empty store."""
    client = LocalClient(open_store("memory://", clock=clock), clock=clock)
    fleet = SimulatedFleet(clock)
    ctx = Context(client=client, clock=clock, options=Options(leader_elect=False), members=fleet,
                  interpreter=Interpreter(clock=clock), sink=Sink(client),
                  member_objects=MemberObjects(fleet, clock=clock, timeout=1.0), scope=scope or Scope())
    return Manager(client, clock=clock), ctx


class Seen:
    """A reconciler that notes its keys and, on ``wake``, enqueues one of its own."""

    def __init__(self, deps: Deps) -> None:
        self.keys = deps.keys
        self.seen: list[str] = []

    def wake(self) -> None:
        self.keys.enqueue(Request("", "woken"))

    async def reconcile(self, request: Request) -> Result:
        self.seen.append(str(request))
        return Result()


@pytest.mark.parametrize(("runs", "agent", "installed"), [
    (Runs.PLANE, False, True), (Runs.PLANE, True, False), (Runs.AGENT, True, True),
    (Runs.AGENT, False, False), (Runs.BOTH, True, True),
], ids=["plane on the plane", "plane-only not in an agent", "agent-only in an agent",
        "agent-only not on the plane", "both in an agent"])
def test_a_spec_is_installed_where_it_runs(runs: Runs, agent: bool, installed: bool) -> None:
    clock = VirtualClock()
    manager, ctx = plane(clock, Scope(agent_cluster="member1") if agent else Scope())
    install(ControllerSpec("seen", reconciler=Seen, runs=runs), manager, ctx)
    assert [c.name for c in manager.controllers()] == (["seen"] if installed else [])


def test_a_spec_the_options_turn_off_is_not_installed() -> None:
    manager, ctx = plane(VirtualClock())
    spec = ControllerSpec("seen", reconciler=Seen, enabled=lambda options: options.leader_elect)
    install(spec, manager, ctx)
    assert manager.controllers() == []


@pytest.mark.parametrize(("tier", "flags"), [
    (Tier.CRITICAL, (CRITICAL, False)), (Tier.DISPATCH, (DISPATCH, True)), (Tier.OTHERS, (OTHERS, True)),
    (Tier.EXEMPT, (OTHERS, False)),
], ids=["critical goes first", "dispatch waits for it", "others wait for both", "exempt never waits"])
def test_the_tier_makes_the_controllers_turn(tier: Tier, flags: tuple[int, bool]) -> None:
    manager, ctx = plane(VirtualClock())
    install(ControllerSpec("seen", reconciler=Seen, tier=tier, workers=lambda options: 3), manager, ctx)
    [controller] = manager.controllers()
    assert (controller.tier, controller.wait_turn, controller.workers) == (*flags, 3)


def test_the_watches_and_the_reconciler_fill_the_one_queue() -> None:
    async def main(clock: VirtualClock) -> list[str]:
        manager, ctx = plane(clock)
        made: list[Seen] = []

        def new(deps: Deps) -> Seen:
            made.append(Seen(deps))
            return made[0]

        install(ControllerSpec("seen", reconciler=new, watches=(Watch(Namespace),)), manager, ctx)
        task = asyncio.create_task(manager.run())
        await ctx.client.create(Namespace(metadata=ObjectMeta(name="team-a")))
        await clock.sleep(1)
        made[0].wake()
        await clock.sleep(1)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return made[0].seen

    assert run_virtual(main) == ["team-a", "woken"]
