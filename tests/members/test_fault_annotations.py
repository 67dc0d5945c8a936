"""``fleetkeeper fault``'s member side: the annotations on a Cluster make its simulated member
match them — API state, node count, crashed workloads, DNS — and nothing else.

The command side (annotating through the API server) runs end to end in
``tests/e2e/test_up.py``; bad input in ``tests/traffic/test_commands.py``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
import structlog
from structlog.testing import capture_logs

from fleetkeeper.api.cluster import Cluster
from fleetkeeper.clock import VirtualClock
from fleetkeeper.cmd import fault
from fleetkeeper.members.simulated import ApiState, SimulatedCluster
from fleetkeeper.members.simulated.objects import ObjectKey

from .helpers import on_cluster, status, workload

WEB = workload("Deployment", "web", replicas=2)
WEB_KEY = ObjectKey("apps", "Deployment", "default", "web")


def cluster(annotations: dict[str, str] | None = None) -> Cluster:
    return Cluster.from_dict({"metadata": {"name": "member1", "annotations": annotations or {}},
                              "spec": {"syncMode": "Push", "apiEndpoint": "simulated://member1"}})


def crashed(*names: str) -> str:
    return json.dumps([{"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default", "name": name}
                       for name in names])


@pytest.mark.parametrize("value", ["down", "blackhole", "unhealthy", "up"])
def test_the_api_annotation_sets_the_members_api_state(value: str) -> None:
    async def main(member: SimulatedCluster, clock: VirtualClock) -> None:
        if value == "up":  # "up" must undo something
            member.down()
        fault.apply_faults(cluster({fault.API_ANNOTATION: value}), member)
        assert member.state is ApiState(value)
        # level-triggered: once more changes nothing
        fault.apply_faults(cluster({fault.API_ANNOTATION: value}), member)
        assert member.state is ApiState(value)

    on_cluster(main)


def test_an_absent_annotation_leaves_the_member_alone() -> None:
    """A scenario's own actions are not undone by a Cluster without fault annotations."""
    async def main(member: SimulatedCluster, clock: VirtualClock) -> None:
        await member.apply(WEB)
        member.down()
        member.crash(WEB_KEY)
        member.dns_down()
        member.set_nodes(1)
        fault.apply_faults(cluster({"other": "annotation"}), member)
        assert (member.state, member.crashed, member.dns_ok, member.node_count) == (
            ApiState.DOWN, frozenset({WEB_KEY}), False, 1)

    on_cluster(main)


def test_the_nodes_annotation_sets_the_node_count() -> None:
    async def main(member: SimulatedCluster, clock: VirtualClock) -> list[int]:
        counts = [member.node_count]
        for value in ("1", "4", "4"):
            fault.apply_faults(cluster({fault.NODES_ANNOTATION: value}), member)
            counts.append(member.node_count)
        return counts

    assert on_cluster(main, nodes=3) == [3, 1, 4, 4]


def test_the_crashed_annotation_is_the_set_of_crash_looping_workloads() -> None:
    async def main(member: SimulatedCluster, clock: VirtualClock) -> list[Any]:
        other = workload("Deployment", "other", replicas=1)
        await member.apply(WEB)
        await member.apply(other)
        await clock.sleep(3)
        seen = []
        for value in (crashed("web"), crashed("web", "other"), crashed("other"), "[]"):
            fault.apply_faults(cluster({fault.CRASHED_ANNOTATION: value}), member)
            await clock.sleep(3)
            ready = [(await status(member, w)).get("readyReplicas") for w in (WEB, other)]
            seen.append((sorted(k.name for k in member.crashed), *ready))
        return seen

    assert on_cluster(main) == [(["web"], None, 1), (["other", "web"], None, None), (["other"], 2, None),
                                ([], 2, 1)]


def test_the_dns_annotation_sets_the_members_dns() -> None:
    async def main(member: SimulatedCluster, clock: VirtualClock) -> list[bool]:
        seen = []
        for value in ("down", "down", "up"):
            fault.apply_faults(cluster({fault.DNS_ANNOTATION: value}), member)
            seen.append(member.dns_ok)
        return seen

    assert on_cluster(main) == [False, False, True]


@pytest.fixture
def warnings_logged() -> Iterator[None]:
    """Warnings pass the level filter, whatever an earlier test configured; restored after."""
    saved = structlog.get_config()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    try:
        yield
    finally:
        structlog.configure(**saved)


@pytest.mark.usefixtures("warnings_logged")
@pytest.mark.parametrize(("annotation", "value"), [
    (fault.API_ANNOTATION, "exploded"),
    (fault.NODES_ANNOTATION, "many"),
    (fault.NODES_ANNOTATION, "-1"),
    (fault.NODES_ANNOTATION, str(fault.MAX_NODES + 1)),
    (fault.CRASHED_ANNOTATION, "web"),
    (fault.CRASHED_ANNOTATION, '{"name": "web"}'),
    (fault.CRASHED_ANNOTATION, '[{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}]'),
    (fault.DNS_ANNOTATION, "sideways"),
])
def test_an_unreadable_annotation_is_ignored_and_logged_once(annotation: str, value: str) -> None:
    async def main(member: SimulatedCluster, clock: VirtualClock) -> tuple[Any, ...]:
        before = (member.state, member.node_count, member.crashed, member.dns_ok)
        with capture_logs() as logs:
            for _ in range(2):
                fault.apply_faults(cluster({annotation: value}), member)
        assert (member.state, member.node_count, member.crashed, member.dns_ok) == before
        return tuple((entry["event"], entry["annotation"], entry["value"]) for entry in logs)

    fault._reported.clear()
    assert on_cluster(main) == (("fault annotation ignored", annotation, value),)


def test_parse_workloads_reads_what_the_command_writes() -> None:
    value = crashed("web", "other")
    assert [w.to_dict() for w in fault.parse_workloads(value) or []] == json.loads(value)
    assert fault.parse_workloads("[]") == []
    assert fault.parse_workloads("not json") is None


def test_a_removed_annotation_undoes_what_it_did_and_only_that() -> None:
    """Undoing a drill removes its annotation: the member comes back up, its DNS answers and
    its workloads stop crash-looping; the node count, never undone by a drill, stays."""
    async def main(member: SimulatedCluster, clock: VirtualClock) -> None:
        await member.apply(WEB)
        drilled = {fault.API_ANNOTATION: "down", fault.DNS_ANNOTATION: "down",
                   fault.CRASHED_ANNOTATION: crashed("web"), fault.NODES_ANNOTATION: "1"}
        fault.apply_faults(cluster(drilled), member)
        assert (member.state, member.dns_ok, member.crashed, member.node_count) == (
            ApiState.DOWN, False, frozenset({WEB_KEY}), 1)
        fault.apply_faults(cluster({}), member)
        assert (member.state, member.dns_ok, member.crashed, member.node_count) == (
            ApiState.UP, True, frozenset(), 1)
        member.down()  # not a drill's doing: a Cluster without annotations leaves it alone
        fault.apply_faults(cluster({}), member)
        assert member.state is ApiState.DOWN

    on_cluster(main)
