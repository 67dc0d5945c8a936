"""The simulated cluster passes the Member conformance suite, and is reached by URL."""

from __future__ import annotations

import pytest

from fleetkeeper import errors
from fleetkeeper.clock import Clock, VirtualClock
from fleetkeeper.members import open_member
from fleetkeeper.members.interface import Member
from fleetkeeper.members.simulated import SimulatedCluster, SimulatedFleet
from fleetkeeper.members.testing import Body, MemberConformance


class TestSimulatedMember(MemberConformance):
    def run(self, body: Body) -> None:
        clock = VirtualClock()

        async def main() -> None:
            member = SimulatedCluster("conformance", clock=clock)
            try:
                await body(member, clock)
            finally:
                await member.close()

        clock.run(main())

    async def take_down(self, member: Member) -> None:
        assert isinstance(member, SimulatedCluster)
        member.down()

    async def bring_up(self, member: Member) -> None:
        assert isinstance(member, SimulatedCluster)
        member.up()


def test_open_member_finds_the_cluster_of_the_fleet_that_shares_the_clock() -> None:
    clock = VirtualClock()

    async def main() -> None:
        fleet = SimulatedFleet.for_clock(clock)
        member1 = fleet.add("member1", nodes=5)
        assert open_member("simulated://member1", clock=clock) is member1
        assert SimulatedFleet.for_clock(clock) is fleet
        assert (await member1.summary()).node_summary == {"totalNum": 5, "readyNum": 5}

    clock.run(main())


def test_open_member_creates_an_unknown_cluster_shaped_by_the_url() -> None:
    clock = VirtualClock()

    async def main() -> None:
        url = "simulated://dev1?nodes=2&podStartup=500ms&kubernetesVersion=v1.30.2"
        member = open_member(url, clock=clock)
        assert isinstance(member, SimulatedCluster)
        summary = await member.summary()
        assert (summary.kubernetes_version, summary.node_summary["totalNum"]) == ("v1.30.2", 2)
        assert member.engine.lifecycle.pod_startup == 0.5
        assert open_member("simulated://dev1?nodes=9", clock=clock) is member

    clock.run(main())


def test_each_clock_has_its_own_fleet() -> None:
    first, second = VirtualClock(), VirtualClock()

    async def make(clock: Clock) -> Member:
        return open_member("simulated://member1", clock=clock)

    assert first.run(make(first)) is not second.run(make(second))


@pytest.mark.parametrize("url", [
    "http://member1", "kube-ish://member1", "simulated://", "simulated://member1?color=blue", "kube://ctx",
], ids=[
    "an http URL is not a member", "an unknown scheme is refused", "a simulated URL must name its cluster",
    "an unknown parameter is refused", "an unknown kube context is refused",
])
def test_bad_member_urls_are_rejected(url: str) -> None:
    clock = VirtualClock()

    async def main() -> None:
        with pytest.raises(ValueError):
            open_member(url, clock=clock)

    clock.run(main())


def test_a_fleet_refuses_a_second_cluster_of_the_same_name_and_lists_in_name_order() -> None:
    clock = VirtualClock()

    async def main() -> None:
        fleet = SimulatedFleet(clock)
        fleet.add("member2")
        fleet.add("member1")
        with pytest.raises(ValueError):
            fleet.add("member1")
        assert [c.name for c in fleet] == ["member1", "member2"] == fleet.names()
        with pytest.raises(KeyError, match="member3"):
            fleet["member3"]

    clock.run(main())


def test_a_cluster_standing_for_a_real_one_refuses_objects_of_a_namespace_it_lacks() -> None:
    clock = VirtualClock()
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "prod"}}

    async def main() -> None:
        strict = SimulatedCluster("strict", clock=clock, create_namespaces=False)
        with pytest.raises(errors.NotFound, match='namespaces "prod" not found') as refused:
            await strict.apply(config_map)
        assert (refused.value.kind, refused.value.name) == ("namespaces", "prod")
        await strict.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "prod"}})
        assert (await strict.apply(config_map))["metadata"]["namespace"] == "prod"
        await strict.apply({**config_map, "metadata": {"name": "d", "namespace": "default"}})  # always there

        lenient = SimulatedCluster("lenient", clock=clock)  # in-process stories: the namespace is made
        assert (await lenient.apply(config_map))["metadata"]["namespace"] == "prod"

    clock.run(main())
