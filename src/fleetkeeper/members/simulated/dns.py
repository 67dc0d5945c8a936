"""The cluster DNS of a simulated member (its CoreDNS): real DNS messages, dnslib codec.

:class:`ClusterDNS` answers DNS queries the way a cluster's DNS would for the names a
workload resolves: ``kubernetes.default.svc.cluster.local`` (the API Service,
``10.96.0.1``) and ``<service>.<namespace>.svc.cluster.local`` for every Service of the
member (its ``spec.clusterIP``, or a stable address derived from its name when the
simulated API allocated none). Other names get NXDOMAIN. While the member's DNS is
down (the ``dnsDown`` scenario action, ``SimulatedCluster.dns_ok`` false) every query
gets SERVFAIL — a DNS that answers, but cannot resolve — so a resolver learns of the
outage at once instead of after its timeout.

Two ways to ask it, one answering rule (:meth:`ClusterDNS.respond`):

* :class:`DNSServer` — a UDP server on loopback (asyncio datagrams, no threads;
  messages decoded and encoded with dnslib), for real time: ``fleetkeeper up`` starts
  one per member and the detectors resolve through it with dnspython over a socket;
* :meth:`ClusterDNS.ask` — the same answer as a function call, for virtual time. A
  socket there would make the run depend on when the kernel delivers a datagram (the
  virtual clock jumps ahead whenever nothing is ready, so a reply a microsecond late
  would arrive seconds of virtual time later), and encoding messages for every
  detection of every simulated node would make a ten-minute story cost seconds.
"""

from __future__ import annotations

import asyncio
import ipaddress
import zlib
from typing import cast

from dnslib import QTYPE, RCODE, RR, A, DNSError, DNSRecord

from fleetkeeper.members.simulated.cluster import SimulatedCluster
from fleetkeeper.members.simulated.objects import ObjectKey

CLUSTER_DOMAIN = "cluster.local"
KUBERNETES_SERVICE_IP = "10.96.0.1"
#: Service addresses invented for Services without a clusterIP come from this range
_SERVICE_RANGE = ipaddress.ip_network("10.96.0.0/12")


class ClusterDNS:
    """Answers DNS queries for one simulated member (see the module notes)."""

    def __init__(self, cluster: SimulatedCluster, *, ttl: int = 5) -> None:
        self.cluster = cluster
        self.ttl = ttl
        #: queries answered (for observers and tests)
        self.queries = 0

    def answer(self, query: bytes) -> bytes:
        """The response to one query message; ``b""`` for a message that is not a query."""
        try:
            request = DNSRecord.parse(query)
        except (DNSError, ValueError, IndexError):
            return b""
        self.queries += 1
        reply = request.reply()
        for question in request.questions:
            rcode, address = self.respond(str(question.qname))
            reply.header.rcode = getattr(RCODE, rcode)
            if address is not None and question.qtype in (QTYPE.A, QTYPE.ANY):
                reply.add_answer(RR(question.qname, QTYPE.A, rdata=A(address), ttl=self.ttl))
        return bytes(reply.pack())

    def respond(self, name: str) -> tuple[str, str | None]:
        """The response code and the address for one A question — what :meth:`answer` encodes."""
        if not self.cluster.dns_ok:
            return "SERVFAIL", None
        address = self.lookup(name)
        return ("NOERROR", address) if address is not None else ("NXDOMAIN", None)

    async def ask(self, name: str) -> tuple[str, bool]:
        """One question in-process, for virtual time: (response code, whether an A record came)."""
        self.queries += 1
        rcode, address = self.respond(name)
        return rcode, address is not None

    def lookup(self, name: str) -> str | None:
        """The address of a cluster name (``a.b.svc.cluster.local`` with or without the dot)."""
        labels = name.lower().rstrip(".").split(".")
        if labels[-2:] != CLUSTER_DOMAIN.split(".") or len(labels) != 5 or labels[2] != "svc":
            return None
        service, namespace = labels[0], labels[1]
        if (service, namespace) == ("kubernetes", "default"):
            return KUBERNETES_SERVICE_IP
        obj = self.cluster.engine.store.get(ObjectKey("", "Service", namespace, service))
        if obj is None:
            return None
        cluster_ip = (obj.get("spec") or {}).get("clusterIP")
        if cluster_ip and cluster_ip != "None":
            return str(cluster_ip)
        offset = 2 + zlib.crc32(f"{namespace}/{service}".encode()) % (_SERVICE_RANGE.num_addresses - 4)
        return str(_SERVICE_RANGE.network_address + offset)


class _Protocol(asyncio.DatagramProtocol):
    def __init__(self, dns: ClusterDNS) -> None:
        self._dns = dns
        self._transport: asyncio.DatagramTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.DatagramTransport, transport)

    def datagram_received(self, data: bytes, addr: tuple[str | int, ...]) -> None:
        response = self._dns.answer(data)
        if response and self._transport is not None:
            self._transport.sendto(response, addr)


class DNSServer:
    """A UDP DNS server on loopback for one simulated member (a runnable)."""

    def __init__(self, dns: ClusterDNS, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.dns = dns
        self.name = f"dns-{dns.cluster.name}"
        self._host = host
        self._port = port
        self._transport: asyncio.DatagramTransport | None = None

    @property
    def address(self) -> tuple[str, int]:
        """Where the server listens (after :meth:`start`)."""
        if self._transport is None:
            raise RuntimeError(f"the DNS server of {self.dns.cluster.name!r} is not started")
        host, port = self._transport.get_extra_info("sockname")[:2]
        return str(host), int(port)

    async def start(self) -> tuple[str, int]:
        """Bind and serve; returns the address."""
        if self._transport is None:
            loop = asyncio.get_running_loop()
            self._transport, _ = await loop.create_datagram_endpoint(
                lambda: _Protocol(self.dns), local_addr=(self._host, self._port))
        return self.address

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()
            self._transport = None

    async def run(self) -> None:
        """Serve until cancelled."""
        await self.start()
        try:
            await asyncio.Event().wait()
        finally:
            self.close()


__all__ = ["CLUSTER_DOMAIN", "KUBERNETES_SERVICE_IP", "ClusterDNS", "DNSServer"]
