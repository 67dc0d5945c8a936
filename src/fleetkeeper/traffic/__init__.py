"""Traffic providers: load balancers in front of the fleet that follow MultiClusterIngress.

The traffic loop ends here: the multicluster-ingress controller writes where an MCI's
backends run (``serviceLocations``) and which clusters must not get traffic
(``trafficBlockClusters``); :mod:`~fleetkeeper.traffic.sync` watches those and the
Service bindings, computes a :class:`~fleetkeeper.traffic.routes.RouteTable`, and hands
it to a :class:`~fleetkeeper.traffic.provider.Provider`:

* :mod:`~fleetkeeper.traffic.builtin` — a small L7 reverse proxy (asyncio) that routes
  each request by host and path to a backend that is not blocked;
* :mod:`~fleetkeeper.traffic.haproxy` — drives an HAProxy the user runs, through its
  runtime API: blocked backends go to maintenance and come back ready without a reload.

``fleetkeeper traffic`` runs a provider against a control plane.
"""
