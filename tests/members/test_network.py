"""Pod and node addresses of a simulated cluster: ranges per node, pod IPs, nodeInfo."""

from __future__ import annotations

from typing import Any

from fleetkeeper.clock import VirtualClock
from fleetkeeper.members.interface import ObjectRef
from fleetkeeper.members.simulated import SimulatedCluster
from fleetkeeper.members.simulated.network import AddressPool, PodNetwork, block_bits, format_ip

from .helpers import on_cluster, workload

NODE0, NODE1 = "member1-node-000", "member1-node-001"


async def addresses(cluster: SimulatedCluster) -> dict[str, tuple[str, str, str]]:
    """name → (node, podIP, hostIP) of every pod."""
    pods = await cluster.list("v1", "Pod", "default")
    return {p["metadata"]["name"]: (p["spec"].get("nodeName", ""), p["status"].get("podIP", ""),
                                    p["status"].get("hostIP", "")) for p in pods}


def test_pods_get_distinct_addresses_in_their_nodes_range_and_their_nodes_address() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> dict[str, tuple[str, str, str]]:
        await cluster.apply(workload("Deployment", "web", replicas=4, cpu="3"))
        await clock.sleep(5)
        pod = (await cluster.list("v1", "Pod", "default"))[0]
        assert pod["status"]["podIPs"] == [{"ip": pod["status"]["podIP"]}]
        assert pod["status"]["hostIPs"] == [{"ip": pod["status"]["hostIP"]}]
        return await addresses(cluster)

    found = on_cluster(main, nodes=2)
    by_node = sorted(found.values())
    assert by_node == [(NODE0, "10.244.0.2", "172.18.0.2"), (NODE0, "10.244.0.3", "172.18.0.2"),
                       (NODE1, "10.244.1.2", "172.18.0.3"), (NODE1, "10.244.1.3", "172.18.0.3")]
    assert on_cluster(main, nodes=2) == found  # same calls, same addresses


def test_a_pending_pod_has_no_address_and_a_released_address_is_not_given_again_at_once() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> None:
        await cluster.apply(workload("Deployment", "web", replicas=2, cpu="5"))
        pending = [n for n, (node, ip, host) in (await addresses(cluster)).items() if not node]
        assert len(pending) == 1 and (await addresses(cluster))[pending[0]] == ("", "", "")
        await cluster.apply(workload("Deployment", "web", replicas=1, cpu="5"))
        await cluster.apply(workload("Deployment", "web", replicas=2, cpu="1"))  # a new template: new pods
        ips = [ip for _, ip, _ in (await addresses(cluster)).values()]
        assert sorted(ips) == ["10.244.0.3", "10.244.0.4"]  # .2 was given last; the next free ones follow

    on_cluster(main, nodes=1)


def test_an_address_pool_hands_out_the_next_free_address_and_wraps_around() -> None:
    pool = AddressPool(network=(10 << 24), bits=2)  # a /30: only .2 is a pod's
    assert format_ip(pool.take()) == "10.0.0.2" and pool.take() == 0  # full
    pool.give((10 << 24) + 2)
    assert format_ip(pool.take()) == "10.0.0.2"
    pool = AddressPool(network=(10 << 24), bits=8)
    taken = [pool.take() for _ in range(253)]
    assert len(set(taken)) == 253 and pool.take() == 0
    assert format_ip(min(taken)) == "10.0.0.2" and format_ip(max(taken)) == "10.0.0.254"
    pool.give(taken[100])
    assert pool.take() == taken[100]


def test_node_ranges_grow_with_pod_capacity_and_the_lowest_free_range_is_reused() -> None:
    assert [block_bits(pods) for pods in (0, 110, 126, 127, 2010)] == [8, 8, 8, 9, 12]
    network = PodNetwork()
    first = network.join("a", max_pods=2010)
    second = network.join("b", max_pods=2010)
    assert [(format_ip(address), pool.cidr if pool else None) for address, pool in (first, second)] == [
        ("172.18.0.2", "10.244.0.0/20"), ("172.18.0.3", "10.244.16.0/20")]
    network.leave("a")
    address, pool = network.join("c", max_pods=2010)
    assert (format_ip(address), pool.cidr if pool else None) == ("172.18.0.2", "10.244.0.0/20")
    huge = PodNetwork()
    assert [huge.join(str(n), max_pods=200_000)[1] is None for n in range(3)] == [False, True, True]


def test_nodes_read_like_kubernetes_nodes() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> dict[str, Any]:
        node = await cluster.get(ObjectRef("v1", "Node", "", NODE1))
        assert node is not None
        return node

    node = on_cluster(main, nodes=2, kubernetes_version="v1.30.2")
    assert node["spec"] == {"podCIDR": "10.244.1.0/24", "podCIDRs": ["10.244.1.0/24"]}
    assert node["status"]["addresses"] == [{"type": "InternalIP", "address": "172.18.0.3"},
                                           {"type": "Hostname", "address": NODE1}]
    info = node["status"]["nodeInfo"]
    assert (info["kubeletVersion"], info["operatingSystem"], info["architecture"]) == (
        "v1.30.2", "linux", "amd64")
    assert info["osImage"].startswith("Debian") and info["containerRuntimeVersion"].startswith("containerd://")
    assert info["kernelVersion"]
    assert node["metadata"]["labels"]["node-role.kubernetes.io/worker"] == ""


def test_a_node_that_goes_away_frees_its_range_for_the_next_node() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> list[str]:
        cluster.set_nodes(1)
        cluster.set_nodes(2)
        nodes = await cluster.list("v1", "Node")
        return [n["spec"]["podCIDR"] for n in nodes]

    assert on_cluster(main, nodes=3) == ["10.244.0.0/24", "10.244.1.0/24"]
