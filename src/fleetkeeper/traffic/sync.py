"""Keeping a provider's routes in step with the control plane.

One controller with one key: any change of a MultiClusterIngress, a ResourceBinding or
a Service template enqueues ``routes``; the reconcile recomputes the whole
:class:`~fleetkeeper.traffic.routes.RouteTable` from the informer caches and hands it
to the provider when it differs from the table last applied. Recomputing everything is
cheap (a table is a few routes per MCI) and leaves no event-ordering case to get
wrong; the queue coalesces bursts of changes into one reconcile. A provider that fails
raises, and the controller retries with backoff — the table is re-derived, never
replayed.

The traffic command runs this against a remote control plane (REST client); tests run
it over a local client. It needs read access to MCIs, bindings and Services only.
"""

from __future__ import annotations

import structlog

from fleetkeeper.api.builtin import BUILTIN
from fleetkeeper.api.meta import Resource
from fleetkeeper.api.networking import MultiClusterIngress
from fleetkeeper.api.work import ResourceBinding
from fleetkeeper.runtime.handler import FuncHandler
from fleetkeeper.runtime.informer import Informer
from fleetkeeper.runtime.manager import Manager
from fleetkeeper.runtime.reconcile import Request, Result
from fleetkeeper.traffic import routes
from fleetkeeper.traffic.provider import Provider

NAME = "traffic-routes"
KEY = Request("", "routes")
SERVICE = BUILTIN["Service"]
_log = structlog.get_logger("fleetkeeper.traffic")


class RouteSync:
    """Recomputes the route table and applies it to the provider on change."""

    def __init__(self, provider: Provider, mcis: Informer[MultiClusterIngress],
                 bindings: Informer[ResourceBinding], services: Informer[Resource]) -> None:
        self._provider = provider
        self._mcis = mcis
        self._bindings = bindings
        self._services = services
        #: the table the provider routes by now
        self.applied: routes.RouteTable | None = None

    def desired(self) -> routes.RouteTable:
        bindings = {b.key: b for b in self._bindings.list()}
        services = {s.key: s for s in self._services.list()}
        return routes.compute(self._mcis.list(), bindings, services)

    async def reconcile(self, request: Request) -> Result:
        table = self.desired()
        if table != self.applied:
            await self._provider.apply(table)
            self.applied = table
            _log.info("routes applied", routes=len(table.routes),
                      backends=sum(len(r.serving) for r in table.routes),
                      blocked=sorted({b.cluster for r in table.routes for b in r.backends if b.blocked}))
        return Result()


def setup(mgr: Manager, provider: Provider) -> RouteSync:
    """Feed ``provider`` from the manager's client; the provider itself runs with the manager."""
    mcis = mgr.informers.informer_for(MultiClusterIngress)
    bindings = mgr.informers.informer_for(ResourceBinding)
    services: Informer[Resource] = mgr.informers.informer_for(SERVICE)
    sync = RouteSync(provider, mcis, bindings, services)
    # traffic follows remedies at once, whatever the failover pipeline is doing (see runtime.turns)
    controller = mgr.controller(NAME, sync, leader_elected=False, wait_turn=False)
    handler: FuncHandler[Resource] = FuncHandler(lambda old, new: controller.enqueue(KEY))
    for informer in (mcis, bindings, services):
        informer.add_handler(handler)
    controller.enqueue(KEY)
    mgr.add(provider)
    return sync


__all__ = ["KEY", "NAME", "RouteSync", "setup"]
