"""Route sync on virtual time, over the real store: the provider's table follows the MCIs,
the bindings' published addresses and the traffic blocks."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from fleetkeeper.api.admission import admit
from fleetkeeper.api.builtin import BUILTIN
from fleetkeeper.api.networking import MultiClusterIngress, ServiceLocation
from fleetkeeper.api.work import ResourceBinding
from fleetkeeper.client.local import LocalClient
from fleetkeeper.clock import VirtualClock
from fleetkeeper.runtime.manager import Manager
from fleetkeeper.store import open_store
from fleetkeeper.traffic import sync
from fleetkeeper.traffic.builtin import BuiltinProxy
from fleetkeeper.traffic.routes import Backend

ADDRESSES = {"member1": 7001, "member2": 7002}


def mci() -> MultiClusterIngress:
    return MultiClusterIngress.from_dict({"metadata": {"name": "web", "namespace": "default"}, "spec": {
        "defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}}})


def binding() -> ResourceBinding:
    status = [{"clusterName": c, "status": {"loadBalancer": {"ingress": [{"ip": "127.0.0.1",
                                                                          "ports": [{"port": p}]}]}}}
              for c, p in ADDRESSES.items()]
    return ResourceBinding.from_dict({
        "metadata": {"name": "web-service", "namespace": "default"},
        "spec": {"resource": {"apiVersion": "v1", "kind": "Service", "namespace": "default", "name": "web"},
                 "clusters": [{"name": c} for c in ADDRESSES]},
        "status": {"aggregatedStatus": status}})


def test_the_table_follows_the_control_plane() -> None:
    clock = VirtualClock()

    async def main() -> None:
        store = open_store("memory://", clock=clock)
        client = LocalClient(store, admission=admit, clock=clock)
        manager = Manager(client, clock=clock)
        routes = sync.setup(manager, BuiltinProxy("127.0.0.1", 0))
        task = asyncio.get_running_loop().create_task(manager.run())
        try:
            await clock.settle()
            assert routes.applied is not None and routes.applied.routes == ()
            await client.create(BUILTIN["Service"].from_dict({
                "metadata": {"name": "web", "namespace": "default"},
                "spec": {"type": "LoadBalancer", "ports": [{"port": 80}]}}))
            await client.create(binding())
            created = await client.create(mci())
            await clock.settle()
            assert routes.applied.routes[0].backends == ()  # no serviceLocations yet

            async def set_status(**status: Any) -> None:
                current = await client.get(MultiClusterIngress, "web", "default")
                await client.update_status(current.model_copy(update={
                    "status": current.status.model_copy(update=status)}))
                await clock.settle()

            await set_status(service_locations=[ServiceLocation(name="web", clusters=list(ADDRESSES))])
            assert routes.applied.routes[0].backends == (Backend("member1", "127.0.0.1", 7001),
                                                         Backend("member2", "127.0.0.1", 7002))
            await set_status(traffic_block_clusters=["member1"])
            assert [b.cluster for b in routes.applied.routes[0].serving] == ["member2"]
            await client.delete(MultiClusterIngress, created.name, "default")
            await clock.settle()
            assert routes.applied.routes == ()
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            await store.close()

    clock.run(main())
