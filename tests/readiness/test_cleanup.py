"""A plane with failover readiness off removes the FailoverReady conditions a plane with it on wrote."""

from __future__ import annotations

import asyncio

from fleetkeeper.api.scheme import GroupKind
from fleetkeeper.clock import VirtualClock
from fleetkeeper.cmd.app import ControlPlane, run_for
from fleetkeeper.members.simulated import SimulatedFleet
from fleetkeeper.options import Options
from fleetkeeper.readiness.cleanup import NAME
from fleetkeeper.store import open_store

GK = GroupKind("work.karmada.io", "ResourceBinding")


def binding(name: str, *conditions: str) -> dict[str, object]:
    return {"apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name,
                                  "namespace": "default"}},
            "status": {"conditions": [
                {"type": kind, "status": "True", "reason": "SurvivesClusterLoss", "message": "keeps all",
                 "lastTransitionTime": "2026-01-01T00:00:00Z"} for kind in conditions]}}


def run(readiness: bool) -> dict[str, list[str]]:
    """The condition types of two bindings after a plane ran over them for five seconds."""
    async def main() -> dict[str, list[str]]:
        clock = VirtualClock()
        store = open_store("memory://", clock=clock)
        for obj in (binding("was-assessed", "Scheduled", "FailoverReady"), binding("never", "Scheduled")):
            await store.create(obj)
        plane = ControlPlane(store=store, clock=clock, members=SimulatedFleet(clock),
                             options=Options(leader_elect=False, failover_readiness=readiness))
        await run_for(plane, 5.0)
        types = {}
        for name in ("was-assessed", "never"):
            got = await store.get(GK, "default", name)
            types[name] = [c["type"] for c in got["status"]["conditions"]]
        await store.close()
        return types

    return asyncio.run(main())


def test_readiness_off_removes_the_condition_and_keeps_the_others() -> None:
    types = run(readiness=False)
    assert "FailoverReady" not in types["was-assessed"] and "Scheduled" in types["was-assessed"]
    assert "Scheduled" in types["never"]


def test_readiness_on_keeps_the_condition() -> None:
    types = run(readiness=True)
    assert "FailoverReady" in types["was-assessed"]


def test_readiness_on_runs_no_sweeper() -> None:
    from fleetkeeper.cmd.app import SPECS

    [spec] = [s for s in SPECS if s.name == NAME]
    assert spec.enabled is not None and spec.enabled(Options(failover_readiness=False))
    assert not spec.enabled(Options(failover_readiness=True))
