"""The detector's resolver against a simulated member's real DNS server on loopback.

Real time and real sockets: the dnslib-coded server answers over UDP, the resolver
builds and reads messages with dnspython — the path ``fleetkeeper up`` uses. The same
answers come back in-process (the virtual-time path), byte for byte.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import dns.message
import dns.rcode
import dns.rdatatype
import pytest

from fleetkeeper.agent import detector as agent
from fleetkeeper.clock import SystemClock
from fleetkeeper.members.simulated import SimulatedCluster
from fleetkeeper.members.simulated.dns import KUBERNETES_SERVICE_IP, ClusterDNS, DNSServer


def run(body: Coroutine[Any, Any, None]) -> None:
    asyncio.run(body)


async def lookup_error(resolver: agent.ServiceNameResolver, host: str) -> str | None:
    try:
        await resolver.lookup(host)
    except agent.LookupFailed as exc:
        return str(exc)
    return None


def test_the_member_dns_answers_over_udp_and_breaks_with_dns_down() -> None:
    async def body() -> None:
        member = SimulatedCluster("member1", clock=SystemClock(), nodes=1)
        await member.apply({"apiVersion": "v1", "kind": "Service", "spec": {"ports": [{"port": 80}]},
                            "metadata": {"name": "web", "namespace": "shop"}})
        server = DNSServer(ClusterDNS(member))
        host, port = await server.start()
        try:
            resolver = agent.ServiceNameResolver(agent.over_udp(host, port, timeout=2.0))
            assert await lookup_error(resolver, "kubernetes.default") is None
            assert await lookup_error(resolver, "web.shop") is None
            assert await lookup_error(resolver, "missing.shop") == "lookup missing.shop: no such host"
            member.dns_down()
            assert await lookup_error(resolver, "kubernetes.default") == (
                "lookup kubernetes.default: the cluster DNS answered SERVFAIL")
            member.dns_up()
            assert await lookup_error(resolver, "kubernetes.default") is None
            assert server.dns.queries >= 6
        finally:
            server.close()

    run(body())


def test_the_in_process_answer_is_the_server_answer() -> None:
    async def body() -> None:
        member = SimulatedCluster("member1", clock=SystemClock(), nodes=1)
        dns_ = ClusterDNS(member)
        server = DNSServer(dns_)
        host, port = await server.start()
        try:
            for name in ("kubernetes.default.svc.cluster.local.", "nothing.default.svc.cluster.local."):
                query = dns.message.make_query(name, dns.rdatatype.A)
                over_udp = await agent.udp_exchange(host, port)(query)
                assert over_udp.to_wire() == dns_.answer(query.to_wire())
                rcode, found = await dns_.ask(name)
                assert (rcode, found) == (dns.rcode.to_text(over_udp.rcode()), bool(over_udp.answer))
                assert await agent.over_dns(agent.udp_exchange(host, port))(name) == (rcode, found)
            member.dns_down()
            assert await dns_.ask("kubernetes.default.svc.cluster.local.") == ("SERVFAIL", False)
            answer = await agent.over_udp(host, port)("kubernetes.default.svc.cluster.local.")
            assert answer == ("SERVFAIL", False)
            member.dns_up()
            resolver = agent.ServiceNameResolver(dns_.ask)
            assert await lookup_error(resolver, "kubernetes.default") is None
        finally:
            server.close()

    run(body())


def test_a_server_that_never_answers_is_a_failed_lookup() -> None:
    async def body() -> None:
        silent = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        silent.bind(("127.0.0.1", 0))
        try:
            resolver = agent.ServiceNameResolver(agent.over_udp("127.0.0.1", silent.getsockname()[1],
                                                                timeout=0.2))
            error = await lookup_error(resolver, "kubernetes.default")
            assert error is not None and "timed out" in error
        finally:
            silent.close()

    run(body())


def test_garbage_gets_no_answer() -> None:
    member = SimulatedCluster("member1", clock=SystemClock(), nodes=1)
    assert ClusterDNS(member).answer(b"\x00\x01garbage") == b""


def test_the_host_resolver_configuration_is_read(tmp_path: Path) -> None:
    conf = tmp_path / "resolv.conf"
    conf.write_text("nameserver 127.0.0.1\nsearch kube-system.svc.cluster.local svc.cluster.local\n"
                    "options ndots:3\n")
    resolver = agent.system_resolver(str(conf))
    assert resolver.search == ("kube-system.svc.cluster.local", "svc.cluster.local")
    assert resolver.ndots == 3


@pytest.mark.parametrize("name", ["kubernetes.default.svc.cluster.local",
                                  "KUBERNETES.default.svc.cluster.local."])
def test_names_are_case_insensitive_and_dot_tolerant(name: str) -> None:
    member = SimulatedCluster("member1", clock=SystemClock(), nodes=1)
    assert ClusterDNS(member).lookup(name) == KUBERNETES_SERVICE_IP
