"""The service-name-resolution detector on virtual time: simulated members with their
cluster DNS answered in-process, the real store behind the control-plane client.

Covers the detection and threshold timing end to end, the node-level aggregation (no
write while a node's verdict is missing or stale), leader failover between detector
instances without double writes, the DaemonSet following the nodes, and the Kubernetes
API flavour of node verdicts (real Node conditions).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import pytest

from fleetkeeper import errors
from fleetkeeper.agent import detector as agent
from fleetkeeper.agent import detector_rules as rules
from fleetkeeper.agent.detector_member import VERDICT_ANNOTATION, ApiNodes, MemberLeases, MemberNodes
from fleetkeeper.api import conditions
from fleetkeeper.api import timeline as tl
from fleetkeeper.api.admission import admit
from fleetkeeper.api.builtin import BUILTIN
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.coordination import Lease, LeaseSpec
from fleetkeeper.api.meta import Condition, ObjectMeta
from fleetkeeper.client.local import LocalClient
from fleetkeeper.clock import VirtualClock
from fleetkeeper.members.interface import ObjectRef
from fleetkeeper.members.simulated import SimulatedCluster
from fleetkeeper.members.simulated.dns import ClusterDNS
from fleetkeeper.store import open_store

CONFIG = agent.DetectorConfig(cluster="member1", detect_period=5, success_threshold=30, failure_threshold=30,
                              stale_threshold=60, aggregate_period=1)


@dataclass
class World:
    clock: VirtualClock
    karmada: LocalClient
    member: SimulatedCluster
    tasks: dict[str, asyncio.Task[None]] = field(default_factory=dict)

    def resolver(self) -> agent.ServiceNameResolver:
        return agent.ServiceNameResolver(ClusterDNS(self.member).ask)

    def detector(self, node: str, config: agent.DetectorConfig = CONFIG) -> agent.Detector:
        return agent.Detector(config.for_host(node), resolver=self.resolver(), nodes=MemberNodes(self.member),
                              leases=MemberLeases(self.member, node), karmada=self.karmada, clock=self.clock)

    def daemons(self) -> agent.NodeDaemons:
        return agent.NodeDaemons(CONFIG, member=self.member, resolver=self.resolver(), karmada=self.karmada,
                                 clock=self.clock)

    def start(self, name: str, runnable: agent.Detector | agent.NodeDaemons) -> None:
        self.tasks[name] = asyncio.get_running_loop().create_task(runnable.run())

    async def stop(self, name: str) -> None:
        task = self.tasks.pop(name)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    async def at(self, t: float) -> None:
        await self.clock.sleep_until(t)
        await self.clock.settle()

    async def condition(self) -> Condition | None:
        cluster = await self.karmada.get(Cluster, "member1")
        return conditions.get_condition(cluster.status.conditions, rules.CONDITION)

    async def status(self) -> str | None:
        found = await self.condition()
        return found.status if found else None


def run(body: Callable[[World], Awaitable[None]], *, nodes: int = 3) -> None:
    clock = VirtualClock()

    async def main() -> None:
        store = open_store("memory://", clock=clock)
        karmada = LocalClient(store, admission=admit, clock=clock)
        member1 = Cluster.from_dict({"metadata": {"name": "member1"}, "spec": {"syncMode": "Push"}})
        await karmada.create(member1)
        world = World(clock, karmada, SimulatedCluster("member1", clock=clock, nodes=nodes))
        try:
            await body(world)
        finally:
            for name in list(world.tasks):
                await world.stop(name)
            await store.close()

    clock.run(main())


def test_dns_down_turns_the_condition_false_after_the_failure_threshold_and_back() -> None:
    async def body(world: World) -> None:
        daemons = world.daemons()
        world.start("daemons", daemons)
        await world.at(2)
        assert sorted(daemons.detectors) == ["member1-node-000", "member1-node-001", "member1-node-002"]
        assert await world.status() == "True"
        world.member.dns_down()  # between detections at 0 and 5: first seen failing at 5
        await world.at(34)
        assert await world.status() == "True"  # 29 s of failures: inside the threshold
        node = world.member.peek(ObjectRef("v1", "Node", "", "member1-node-001"))
        assert node is not None
        stored = rules.NodeVerdict.from_wire(node["metadata"]["annotations"][VERDICT_ANNOTATION])
        assert stored is not None and stored.status == "True"
        await world.at(36)
        found = await world.condition()
        assert found is not None
        assert (found.status, found.reason) == ("False", "ServiceDomainNameResolutionFailed")
        world.member.dns_up()  # first seen resolving at 40
        await world.at(69)
        assert await world.status() == "False"
        await world.at(71)
        assert await world.status() == "True"
        entries = [e.message for e in (await world.karmada.list(tl.TimelineEntry)).items]
        assert sorted(entries) == [
            "ServiceDomainNameResolutionReady=False (ServiceDomainNameResolutionFailed)",
            "ServiceDomainNameResolutionReady=True (ServiceDomainNameResolutionReady)"]

    run(body)


def test_nothing_is_written_while_a_ready_node_has_no_fresh_verdict() -> None:
    async def body(world: World) -> None:
        world.start("a", world.detector("member1-node-000"))
        world.start("b", world.detector("member1-node-001"))
        await world.at(20)
        assert await world.status() is None  # node-002 never reported: Unknown
        world.start("c", world.detector("member1-node-002"))
        await world.at(22)
        assert await world.status() == "True"
        await world.stop("c")  # its verdict goes stale 60 s after its last detection (t=20)
        world.member.dns_down()
        await world.at(79)
        assert await world.status() == "True"  # a and b fail since 25, c still counts: not all failing
        await world.at(200)
        assert await world.status() == "True"  # c is stale from 80 on: nothing may be written

    run(body)


def test_leader_failover_between_two_detectors_without_double_writes() -> None:
    async def body(world: World) -> None:
        config = agent.DetectorConfig(cluster="member1", detect_period=5, success_threshold=10,
                                      failure_threshold=10, aggregate_period=1)
        first, second = world.detector("member1-node-000", config), world.detector("member1-node-001", config)
        world.start("first", first)
        world.start("second", second)
        await world.at(3)
        assert first.elector is not None and second.elector is not None
        assert (first.elector.is_leader, second.elector.is_leader) == (True, False)
        world.member.dns_down()
        await world.at(30)
        assert await world.status() == "False"
        await world.stop("first")  # releases the lease on its way out
        handover = world.clock.elapsed()
        world.member.dns_up()
        await world.at(60)
        assert second.elector.is_leader
        assert await world.status() == "True"
        lease = await MemberLeases(world.member, "x").get(Lease, CONFIG.lease_name, "kube-system")
        assert lease.spec.holder_identity == "member1-node-001"
        writes = sorted([*first.writes, *second.writes], key=lambda w: w.at)
        assert [(w.identity, w.condition.status) for w in writes] == [
            ("member1-node-000", "True"), ("member1-node-000", "False"), ("member1-node-001", "True")]
        assert all((w.at - world.clock.epoch).total_seconds() < handover for w in first.writes)

    run(body, nodes=2)


def test_the_daemonset_follows_the_nodes() -> None:
    async def body(world: World) -> None:
        daemons = world.daemons()
        world.start("daemons", daemons)
        await world.at(1)
        assert sorted(daemons.detectors) == ["member1-node-000"]
        world.member.set_nodes(2)
        await world.at(6)
        assert sorted(daemons.detectors) == ["member1-node-000", "member1-node-001"]
        world.member.set_nodes(1)
        await world.at(30)
        assert sorted(daemons.detectors) == ["member1-node-000"]
        assert world.member.peek(ObjectRef("v1", "Node", "", "member1-node-001")) is None  # never re-created

    run(body, nodes=1)


def test_over_a_kubernetes_api_the_verdict_is_a_node_condition() -> None:
    node_kind = BUILTIN["Node"]

    async def body(world: World) -> None:
        store = open_store("memory://", clock=world.clock)
        member_api = LocalClient(store, admission=admit, clock=world.clock)
        for name, ready in (("n1", "True"), ("n2", "False")):
            await member_api.create(node_kind.from_dict({
                "metadata": {"name": name}, "status": {"conditions": [{"type": "Ready", "status": ready}]}}))
        detector = agent.Detector(CONFIG.for_host("n1"), resolver=world.resolver(),
                                  nodes=ApiNodes(member_api), leases=member_api, karmada=world.karmada,
                                  clock=world.clock)
        world.start("n1", detector)
        try:
            await world.at(1)
            node = (await member_api.get(node_kind, "n1")).to_dict()
            mine = [c for c in node["status"]["conditions"] if c["type"] == rules.CONDITION]
            assert len(mine) == 1 and mine[0]["status"] == "True"
            assert [c["type"] for c in node["status"]["conditions"]] == ["Ready", rules.CONDITION]
            lease = await member_api.get(Lease, CONFIG.lease_name, "kube-system")
            assert lease.spec.holder_identity == "n1"
            assert await world.status() == "True"  # n2 is NotReady: it does not vote
        finally:
            await world.stop("n1")
            await store.close()

    run(body, nodes=1)


def test_member_leases_are_compare_and_swap() -> None:
    async def body(world: World) -> None:
        def lease(holder: str) -> Lease:
            return Lease(metadata=ObjectMeta(name="l", namespace="kube-system"),
                         spec=LeaseSpec(holder_identity=holder, lease_duration_seconds=15))

        first, second = MemberLeases(world.member, "a"), MemberLeases(world.member, "b")
        created = await first.create(lease("a"))
        with pytest.raises(errors.Conflict):
            await second.create(lease("b"))  # both saw it absent: the later one loses
        taken = await second.update(created.model_copy(update={"spec": lease("b").spec}))
        assert taken.spec.holder_identity == "b"
        with pytest.raises(errors.Conflict):
            await first.update(created)  # a stale resourceVersion
        assert (await first.get(Lease, "l", "kube-system")).spec.holder_identity == "b"

    run(body, nodes=1)
