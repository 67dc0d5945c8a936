"""The fleet a what-if reads, from a running control plane (any :class:`Client`).

One list per kind, read once: the clusters with their status, both kinds of binding and
the ClusterTaintPolicies. The circuit breaker's threshold is the plane's option, which
the API does not show: the caller passes the value the plane runs with.
"""

from __future__ import annotations

from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.taintpolicy import ClusterTaintPolicy
from fleetkeeper.api.work import Binding, ClusterResourceBinding, ResourceBinding
from fleetkeeper.client.interface import Client
from fleetkeeper.readiness.whatif import Fleet


async def read_fleet(client: Client, *, threshold: float) -> Fleet:
    """The clusters, bindings and taint policies the plane holds now."""
    clusters = (await client.list(Cluster)).items
    bindings: list[Binding] = [*(await client.list(ResourceBinding)).items]
    bindings += (await client.list(ClusterResourceBinding)).items
    policies = (await client.list(ClusterTaintPolicy)).items
    return Fleet(clusters, bindings, policies, threshold=threshold)


__all__ = ["read_fleet"]
