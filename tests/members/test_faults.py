"""Fault injection: down, black hole, unhealthy, crash loops, flags — as docs/scenario-format.md says."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from fleetkeeper import errors
from fleetkeeper.clock import VirtualClock
from fleetkeeper.members.simulated import ApiState, SimulatedCluster

from .helpers import on_cluster, ref, status, workload

WEB = workload("Deployment", "web", replicas=2)


def test_down_refuses_at_once_and_up_restores() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> None:
        await cluster.apply(WEB)
        cluster.down()
        with pytest.raises(errors.MemberUnreachable, match="connection refused"):
            await cluster.probe("/readyz")
        assert clock.monotonic() == 0
        cluster.up()
        assert await cluster.probe("/readyz") == 200
        assert (await status(cluster, WEB))["observedGeneration"] == 1

    on_cluster(main)


def test_the_cluster_keeps_running_while_its_api_is_down() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> None:
        await cluster.apply(WEB)
        cluster.down()
        await clock.sleep(5)
        cluster.up()
        assert (await status(cluster, WEB))["readyReplicas"] == 2

    on_cluster(main)


def test_a_black_hole_times_out_the_callers_bound_on_the_virtual_clock() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> float:
        cluster.blackhole()
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(cluster.probe("/readyz"), timeout=5)
        return clock.monotonic()

    assert on_cluster(main) == 5


@pytest.mark.parametrize("call_timeout", [30.0, 7.5],
                         ids=["by default after 30 seconds", "after call_timeout"])
def test_a_black_hole_raises_member_timeout_after_call_timeout(call_timeout: float) -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> float:
        cluster.blackhole()
        with pytest.raises(errors.MemberTimeout):
            await cluster.get(ref(WEB))
        return clock.monotonic()

    options: dict[str, Any] = {} if call_timeout == 30.0 else {"call_timeout": call_timeout}
    assert on_cluster(main, **options) == call_timeout


def test_without_call_timeout_a_black_hole_waits_for_the_callers_bound() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> float:
        cluster.blackhole()
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(cluster.summary(), timeout=3600)
        return clock.monotonic()

    assert on_cluster(main, call_timeout=None) == 3600


def test_a_call_lost_in_the_black_hole_stays_lost_when_the_cluster_comes_back() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> None:
        cluster.blackhole()
        lost = asyncio.ensure_future(cluster.probe("/readyz"))
        await clock.sleep(1)
        cluster.up()
        assert await cluster.probe("/readyz") == 200
        with pytest.raises(errors.MemberTimeout):
            await lost

    on_cluster(main, call_timeout=10)


def test_unhealthy_answers_the_api_but_fails_the_health_endpoints() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> list[int]:
        cluster.unhealthy()
        await cluster.apply(WEB)
        assert cluster.state is ApiState.UNHEALTHY
        codes = [await cluster.probe(path) for path in ("/readyz", "/healthz", "/nope")]
        cluster.up()
        return [*codes, await cluster.probe("/readyz")]

    assert on_cluster(main) == [500, 500, 404, 200]


def _pod_states(pods: list[dict[str, Any]]) -> list[tuple[bool, int, str]]:
    out = []
    for item in pods:
        container = item["status"]["containerStatuses"][0]
        out.append((container["ready"], container["restartCount"], next(iter(container["state"]))))
    return out


def test_a_crashed_workloads_pods_crash_loop_with_growing_restart_counts() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> None:
        cluster.crash_workload("apps/v1", "Deployment", "default", "web")
        await cluster.apply(WEB)
        restarts = []
        for second in (2, 12, 32, 72):
            await clock.sleep_until(second)
            states = _pod_states(await cluster.list("v1", "Pod"))
            assert {(ready, state) for ready, _, state in states} == {(False, "waiting")}
            restarts.append(states[0][1])
        assert restarts == [1, 2, 3, 4]
        web = await status(cluster, WEB)
        assert "readyReplicas" not in web and web["unavailableReplicas"] == 2
        crashed = (await cluster.list("v1", "Pod"))[0]["status"]["containerStatuses"][0]["state"]["waiting"]
        assert crashed["reason"] == "CrashLoopBackOff"

        cluster.heal_workload("apps/v1", "Deployment", "default", "web")
        await clock.sleep(2)
        assert (await status(cluster, WEB))["readyReplicas"] == 2
        assert {s[:2] for s in _pod_states(await cluster.list("v1", "Pod"))} == {(True, 4)}

    on_cluster(main)


def test_crashing_a_running_workload_makes_its_pods_unready_at_once() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> None:
        await cluster.apply(WEB)
        await clock.sleep(3)
        cluster.crash_workload("apps/v1", "Deployment", "default", "web")
        assert "readyReplicas" not in await status(cluster, WEB)
        assert {s[:2] for s in _pod_states(await cluster.list("v1", "Pod"))} == {(False, 1)}

    on_cluster(main)


def test_a_crash_hits_only_the_named_workload() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> None:
        other = workload("Deployment", "other", replicas=1)
        await cluster.apply(WEB)
        await cluster.apply(other)
        cluster.crash_workload("apps/v1", "Deployment", "default", "web")
        await clock.sleep(3)
        assert (await status(cluster, other))["readyReplicas"] == 1
        assert "readyReplicas" not in await status(cluster, WEB)

    on_cluster(main)


@pytest.mark.parametrize("down, up, flag", [
    ("dns_down", "dns_up", "dns_ok"), ("agent_down", "agent_up", "agent_ok"),
], ids=["dns can fail and recover", "the agent can stop and start"])
def test_flags_others_read(down: str, up: str, flag: str) -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> list[bool]:
        seen = [getattr(cluster, flag)]
        getattr(cluster, down)()
        seen.append(getattr(cluster, flag))
        assert await cluster.probe("/readyz") == 200  # the API is not affected
        getattr(cluster, up)()
        return [*seen, getattr(cluster, flag)]

    assert on_cluster(main) == [True, False, True]


def test_peek_reads_the_live_object_even_while_the_cluster_is_down() -> None:
    from fleetkeeper.clock import VirtualClock
    from fleetkeeper.members.interface import ObjectRef
    from fleetkeeper.members.simulated import SimulatedCluster

    clock = VirtualClock()

    async def main() -> tuple[object, object]:
        cluster = SimulatedCluster("m1", clock=clock, pod_startup=1.0)
        await cluster.apply({"apiVersion": "v1", "kind": "ConfigMap",
                             "metadata": {"name": "cfg", "namespace": "default"}, "data": {"k": "v"}})
        cluster.down()
        ref = ObjectRef("v1", "ConfigMap", "default", "cfg")
        missing = ObjectRef("v1", "ConfigMap", "default", "nope")
        return cluster.peek(ref), cluster.peek(missing)

    found, missing = clock.run(main())
    assert isinstance(found, dict) and found["data"] == {"k": "v"}
    assert missing is None
