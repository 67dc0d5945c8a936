"""The load balancers of a simulated member: every LoadBalancer Service as real HTTP.

A cloud gives each ``type: LoadBalancer`` Service an address and writes it to
``status.loadBalancer.ingress``; Karmada reflects that status into the binding's
``aggregatedStatus``, which is how a multi-cluster load balancer learns where a Service
answers in each cluster. :class:`ServiceEndpoints` is that cloud for one simulated
member, on loopback: for every port of every LoadBalancer Service it listens on
``127.0.0.1:<ephemeral port>`` and answers any HTTP request with ``200`` and the
cluster's name (body ``member1\\n``, header ``X-Fleetkeeper-Cluster: member1``), so a
client can tell which cluster served it. It then publishes the address:

    status.loadBalancer.ingress: [{ip: 127.0.0.1, ports: [{port: 41873, protocol: TCP}, …]}]

One listener per Service port, listed **in the order of** ``spec.ports``. Kubernetes
would list the Service ports themselves there, reachable on the ingress address; many
members share one loopback address here, so each gets its own ephemeral port and the
published port is the one to connect to (the traffic providers map a Service port to
the entry at the same index).

The endpoints follow the Service objects (a store listener wakes :meth:`run` on every
Service change): new Services get listeners, removed ones lose them, a changed port
list is served anew. They keep answering whatever the member's API does — the data
plane is not the API server — which is what lets a test see *traffic* move away from a
cluster that is still serving. Real sockets: for real time (``fleetkeeper up``) only.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from fleetkeeper.members.simulated.cluster import SimulatedCluster
from fleetkeeper.members.simulated.objects import Change, GroupKind, Obj, ObjectKey

SERVICE = GroupKind("", "Service")
CLUSTER_HEADER = "X-Fleetkeeper-Cluster"
#: the longest request head an endpoint reads
MAX_HEAD = 64 * 1024


class ServiceEndpoints:
    """Serves one member's LoadBalancer Services on loopback (a runnable)."""

    def __init__(self, cluster: SimulatedCluster, *, host: str = "127.0.0.1") -> None:
        self.cluster = cluster
        self.name = f"service-endpoints-{cluster.name}"
        self._host = host
        self._servers: dict[ObjectKey, tuple[tuple[Any, ...], list[asyncio.Server]]] = {}
        self._wake = asyncio.Event()
        #: requests answered (for observers and tests)
        self.served = 0

    async def run(self) -> None:
        """Serve until cancelled, following the Service objects."""
        listeners = self.cluster.engine.store.listeners
        listeners.append(self._on_change)
        try:
            while True:
                self._wake.clear()
                await self.sync()
                await self._wake.wait()
        finally:
            listeners.remove(self._on_change)
            for key in list(self._servers):
                await self._close(key)

    def _on_change(self, change: Change) -> None:
        if change.key.group_kind == SERVICE:
            self._wake.set()

    async def sync(self) -> None:
        """Make the listeners and the published addresses match the Services."""
        wanted = {ObjectKey.of(svc): svc for svc in self.cluster.engine.store.items(SERVICE)
                  if (svc.get("spec") or {}).get("type") == "LoadBalancer"}
        for key in [k for k in self._servers if k not in wanted]:
            await self._close(key)
        for key, svc in wanted.items():
            ports = tuple((p.get("port"), p.get("name")) for p in (svc.get("spec") or {}).get("ports") or ())
            if key in self._servers and self._servers[key][0] != ports:
                await self._close(key)
            if key not in self._servers:
                self._servers[key] = (ports, [await asyncio.start_server(self._serve, self._host, 0)
                                              for _ in ports])
            self._publish(key, svc, self._servers[key][1])

    def _publish(self, key: ObjectKey, svc: Obj, servers: list[asyncio.Server]) -> None:
        ports = [{"port": server.sockets[0].getsockname()[1], "protocol": "TCP"} for server in servers]
        ingress = [{"ip": self._host, "ports": ports}] if ports else []
        status = dict(svc.get("status") or {})
        if (status.get("loadBalancer") or {}).get("ingress") == ingress:
            return
        status["loadBalancer"] = {"ingress": ingress}
        self.cluster.engine.store.replace(key, status=status)

    async def _close(self, key: ObjectKey) -> None:
        _, servers = self._servers.pop(key)
        for server in servers:
            server.close()
            await server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Answer HTTP/1.1 requests on one connection (keep-alive) with the cluster's name."""
        body = f"{self.cluster.name}\n".encode()
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                if len(head) > MAX_HEAD:
                    break
                headers = _headers(head)
                length = int(headers.get("content-length", "0") or 0)
                if length:
                    await reader.readexactly(length)
                close = headers.get("connection", "").lower() == "close"
                writer.write(_response(self.cluster.name, body, close=close))
                await writer.drain()
                self.served += 1
                if close:
                    break
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, ValueError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()


def _response(cluster: str, body: bytes, *, close: bool) -> bytes:
    head = (f"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\n"
            f"{CLUSTER_HEADER}: {cluster}\r\n" + ("Connection: close\r\n" if close else "") + "\r\n")
    return head.encode() + body


def _headers(head: bytes) -> dict[str, str]:
    lines = head.decode("latin-1").split("\r\n")[1:]
    out: dict[str, str] = {}
    for line in lines:
        name, sep, value = line.partition(":")
        if sep:
            out[name.strip().lower()] = value.strip()
    return out


__all__ = ["CLUSTER_HEADER", "SERVICE", "ServiceEndpoints"]
