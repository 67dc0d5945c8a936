"""Services on a simulated member: kube-apiserver's defaults and cluster IPs from the service range."""

from __future__ import annotations

from typing import Any

import pytest

from fleetkeeper import errors
from fleetkeeper.clock import VirtualClock
from fleetkeeper.members.interface import ObjectRef
from fleetkeeper.members.simulated import SimulatedCluster
from fleetkeeper.members.simulated.services import ServiceRange

from .helpers import on_cluster


def service(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"app": name}, "ports": [{"port": 80}], **spec}}


def ref(name: str) -> ObjectRef:
    return ObjectRef("v1", "Service", "default", name)


def test_a_service_is_stored_with_kube_apiservers_defaults_and_a_cluster_ip() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> dict[str, Any]:
        ports = [{"name": "http", "port": 80}, {"port": 53, "protocol": "UDP", "targetPort": "dns"}]
        await cluster.apply(service("web", ports=ports))
        got = await cluster.get(ref("web"))
        assert got is not None
        return dict(got["spec"])

    spec = on_cluster(main)
    assert spec == {
        "selector": {"app": "web"}, "type": "ClusterIP", "sessionAffinity": "None",
        "ports": [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": 80},
                  {"port": 53, "protocol": "UDP", "targetPort": "dns"}],
        "internalTrafficPolicy": "Cluster", "clusterIP": "10.96.1.0", "clusterIPs": ["10.96.1.0"],
        "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack"}
    assert on_cluster(main) == spec  # same applies, same addresses


def test_types_headless_and_external_name_services_get_their_own_defaults() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> dict[str, dict[str, Any]]:
        await cluster.apply(service("lb", type="LoadBalancer", sessionAffinity="ClientIP"))
        await cluster.apply(service("headless", clusterIP="None"))
        await cluster.apply(service("ext", type="ExternalName", externalName="example.com"))
        headless = service("peers", clusterIP="None")
        del headless["spec"]["selector"]
        await cluster.apply(headless)
        names = ("lb", "headless", "ext", "peers")
        return {name: (await cluster.get(ref(name)) or {})["spec"] for name in names}

    specs = on_cluster(main)
    lb = specs["lb"]
    assert (lb["externalTrafficPolicy"], lb["allocateLoadBalancerNodePorts"], lb["clusterIP"]) == (
        "Cluster", True, "10.96.1.0")
    assert lb["sessionAffinityConfig"] == {"clientIP": {"timeoutSeconds": 10800}}
    assert (specs["headless"]["clusterIPs"], specs["headless"]["ipFamilyPolicy"]) == (["None"], "SingleStack")
    assert specs["peers"]["ipFamilyPolicy"] == "RequireDualStack"
    ext = specs["ext"]
    assert ext["type"] == "ExternalName" and ext["sessionAffinity"] == "None"
    assert not {"clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy", "internalTrafficPolicy"} & set(ext)


def test_cluster_ips_are_unique_kept_on_update_released_on_delete_and_bounded_by_the_range() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for name in ("a", "b", "c"):
            found[name] = (await cluster.apply(service(name)))["spec"]["clusterIP"]
        updated = await cluster.apply(service("a", ports=[{"port": 8080}]))
        found["a-updated"] = updated["spec"]["clusterIP"]
        with pytest.raises(errors.Invalid) as changed:
            await cluster.apply(service("a", clusterIP="10.96.0.6"))
        found["changed"] = changed.value.message
        with pytest.raises(errors.Invalid) as taken:
            await cluster.apply(service("d", clusterIP=found["b"]))
        found["taken"] = taken.value.message
        with pytest.raises(errors.Invalid) as outside:
            await cluster.apply(service("d", clusterIP="10.0.0.9"))
        found["outside"] = outside.value.message
        found["d"] = (await cluster.apply(service("d", clusterIP="10.96.0.6")))["spec"]["clusterIP"]
        found["e"] = (await cluster.apply(service("e")))["spec"]["clusterIP"]
        with pytest.raises(errors.InternalError) as full:
            await cluster.apply(service("f"))
        found["full"] = full.value.message
        assert await cluster.get(ref("f")) is None
        await cluster.delete(ref("b"))
        found["f"] = (await cluster.apply(service("f")))["spec"]["clusterIP"]
        return found

    found = on_cluster(main, service_cidr="10.96.0.0/29")  # .2 … .6 (.1 is the kubernetes Service's)
    assert [found[name] for name in ("a", "b", "c", "a-updated", "d", "e", "f")] == [
        "10.96.0.2", "10.96.0.3", "10.96.0.4", "10.96.0.2", "10.96.0.6", "10.96.0.5", "10.96.0.3"]
    assert 'spec.clusterIPs[0]: Invalid value: "10.96.0.6": may not change once set' in found["changed"]
    assert "failed to allocate IP 10.96.0.3: provided IP is already allocated" in found["taken"]
    assert ("failed to allocate IP 10.0.0.9: the provided IP (10.0.0.9) is not in the valid range. "
            "The range of valid IPs is 10.96.0.0/29") in found["outside"]
    assert found["full"] == "Internal error occurred: failed to allocate a serviceIP: range is full"


def test_a_service_becoming_external_name_gives_its_address_back() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> tuple[dict[str, Any], str]:
        await cluster.apply(service("a"))
        ext = await cluster.apply(service("a", type="ExternalName", externalName="example.com"))
        with pytest.raises(errors.Invalid) as refused:
            await cluster.apply(service("x", type="ExternalName", externalName="x.io", clusterIP="10.9.0.5"))
        again = (await cluster.apply(service("b")))["spec"]["clusterIP"]
        return {"ext": ext["spec"], "refused": refused.value.message}, again

    found, again = on_cluster(main, service_cidr="10.96.0.0/30")  # one address: .2
    assert "clusterIP" not in found["ext"] and again == "10.96.0.2"
    assert "spec.clusterIPs: Forbidden: may not be set for ExternalName services" in found["refused"]


def test_the_range_hands_out_the_upper_part_first_and_never_the_first_address() -> None:
    addresses = ServiceRange("10.96.0.0/24")  # the lowest 16 are kept for addresses asked for
    taken = [addresses.take() for _ in range(253)]
    assert taken[:2] == ["10.96.0.16", "10.96.0.17"] and taken[238:240] == ["10.96.0.254", "10.96.0.2"]
    assert "10.96.0.1" not in taken and "10.96.0.255" not in taken and addresses.free == 0
    assert addresses.claim("10.96.0.1") == "provided IP is already allocated"


def test_null_and_empty_fields_are_defaulted_and_bad_values_refused_in_bounded_messages() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> dict[str, Any]:
        found: dict[str, Any] = {}
        nulls = await cluster.apply(service("a", type=None, sessionAffinity="", ipFamilies=[]))
        found["nulls"] = nulls["spec"]
        for name, spec in (("type", {"type": "Magic"}), ("address", {"clusterIP": "x" * 5000}),
                           ("changed", {"clusterIP": "1" * 5000})):
            with pytest.raises(errors.Invalid) as refused:
                await cluster.apply(service("a" if name == "changed" else name, **spec))
            found[name] = refused.value.message
        return found

    found = on_cluster(main)
    nulls = found["nulls"]
    assert (nulls["type"], nulls["sessionAffinity"], nulls["ipFamilies"]) == ("ClusterIP", "None", ["IPv4"])
    assert 'spec.type: Unsupported value: "Magic": supported values: "ClusterIP", "Ext' in found["type"]
    assert "must be a valid IP address" in found["address"] and "may not change once set" in found["changed"]
    assert max(len(found[name]) for name in ("type", "address", "changed")) < 400
