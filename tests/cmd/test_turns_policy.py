"""Which controllers of the full control plane go first, wait their turn, or never wait."""

from __future__ import annotations

from fleetkeeper.clock import VirtualClock
from fleetkeeper.cmd.app import ControlPlane
from fleetkeeper.members.simulated import SimulatedFleet
from fleetkeeper.options import Options
from fleetkeeper.runtime.turns import DISPATCH as DISPATCH_TIER
from fleetkeeper.runtime.turns import OTHERS
from fleetkeeper.store import open_store

#: the failover's decisions: evictions and scheduling
CRITICAL = {"taint-manager", "taint-manager-eviction", "scheduler"}
#: carrying the decisions to the members: right after them
DISPATCH = {"binding-controller", "execution-controller"}
#: detection and traffic: never behind a rescheduling
EXEMPT = {"cluster-status-controller", "cluster-controller", "cluster-taint-policy-controller",
          "remedy-controller", "multiclusteringress-controller"}


def test_evictions_and_scheduling_go_first_and_detection_never_waits() -> None:
    clock = VirtualClock()
    store = open_store("memory://", clock=clock)
    plane = ControlPlane(store=store, clock=clock, members=SimulatedFleet(clock),
                         options=Options(leader_elect=False))
    controllers = {c.name: c for c in plane.manager.controllers()}
    assert {name for name, c in controllers.items() if c.critical} == CRITICAL
    exempt = {name for name, c in controllers.items() if not c.critical and not c.wait_turn}
    assert exempt == EXEMPT
    assert {name for name, c in controllers.items() if c.tier == DISPATCH_TIER} == DISPATCH
    waiting = {name for name, c in controllers.items() if c.wait_turn}
    assert DISPATCH | {"work-status-controller", "binding-status-controller", "graceful-eviction-controller",
                       "scheduler-cluster-fanout"} <= waiting
    assert all(c.tier == OTHERS for c in controllers.values() if c.name not in CRITICAL | DISPATCH)
    assert all(c.turns is plane.manager.turns for c in controllers.values())
