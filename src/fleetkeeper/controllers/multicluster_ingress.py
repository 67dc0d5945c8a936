"""The multicluster-ingress controller: where an MCI's backends run, and which to block.

One reconcile per MultiClusterIngress writes the two status fields the Remedy proposal
gives it, computed by :mod:`~fleetkeeper.controllers.multicluster_ingress_rules`:

* ``status.serviceLocations`` — for every backend Service, the clusters its
  ResourceBinding places it on (what multicluster-cloud-provider's service-locations
  controller maintains);
* ``status.trafficBlockClusters`` — the clusters among those whose
  ``status.remedyActions`` hold ``TrafficControl`` (set by the remedy controller).

Both are written together through ``/status``, only on change, conflict-safe; the
``loadBalancer`` field belongs to whoever runs the load balancer and is kept. A traffic
provider (:mod:`fleetkeeper.traffic`) watches the result and takes the blocked
clusters' backends out of rotation.

**What wakes an MCI.** Any change of the MCI itself; a Service binding created,
deleted or re-placed (its MCIs in the same namespace, found through an index of backend
Service names); a cluster whose ``TrafficControl`` action appears or disappears (the
MCIs that have a backend there, found through an index of service locations).

Every cluster that becomes blocked or unblocked is a timeline entry on the MCI
(``traffic to member1 blocked (TrafficControl)``), the last link of the chain
detector → remedy → traffic.
"""

from __future__ import annotations

from collections.abc import Iterable

from fleetkeeper import errors
from fleetkeeper.api import constants
from fleetkeeper.api import timeline as tl
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.networking import MultiClusterIngress
from fleetkeeper.api.work import ResourceBinding
from fleetkeeper.controllers import multicluster_ingress_rules as rules
from fleetkeeper.controllers import writes
from fleetkeeper.runtime.context import Context
from fleetkeeper.runtime.informer import Informer
from fleetkeeper.runtime.reconcile import Request, Result
from fleetkeeper.runtime.spec import ControllerSpec, Deps, Runs, Tier, Watch, concurrent_syncs

NAME = "multiclusteringress-controller"
#: MCI index: ``<namespace>/<service>`` for each backend Service
BY_SERVICE = "backend-service"
#: MCI index: each cluster named in ``status.serviceLocations``
BY_LOCATION = "location-cluster"


class IngressReconciler:
    """Keeps one MCI's ``serviceLocations`` and ``trafficBlockClusters`` current."""

    def __init__(self, ctx: Context, mcis: Informer[MultiClusterIngress],
                 bindings: Informer[ResourceBinding], clusters: Informer[Cluster]) -> None:
        self._ctx = ctx
        self._mcis = mcis
        self._bindings = bindings
        self._clusters = clusters
        self._recorder = ctx.recorder(NAME)

    async def reconcile(self, request: Request) -> Result:
        mci = self._mcis.get(str(request))
        if mci is None or mci.metadata.deletion_timestamp is not None:
            return Result()

        def change(current: MultiClusterIngress) -> MultiClusterIngress | None:
            bindings = self._service_bindings(current)
            locations = rules.service_locations(current, bindings)
            blocked = rules.traffic_block_clusters(locations, self._clusters.list())
            status = rules.desired_status(current.status, locations, blocked)
            if status == current.status:
                return None
            return current.model_copy(update={"status": status})

        before = mci.status.traffic_block_clusters
        try:
            written = await writes.write(self._ctx.client, mci, change, subresource="status")
        except errors.NotFound:
            return Result()
        if written is not None:
            await self._record(written, before)
        return Result()

    def _service_bindings(self, mci: MultiClusterIngress) -> dict[str, ResourceBinding]:
        out: dict[str, ResourceBinding] = {}
        for service in rules.backend_services(mci.spec):
            name = rules.service_binding_name(service)
            binding = self._bindings.get(f"{mci.namespace}/{name}")
            if binding is not None:
                out[name] = binding
        return out

    async def _record(self, mci: MultiClusterIngress, before: list[str] | None) -> None:
        blocked, restored = rules.block_changes(before, mci.status.traffic_block_clusters)
        for cluster in blocked:
            await self._recorder.timeline(mci, tl.TRAFFIC, f"traffic to {cluster} blocked (TrafficControl)",
                                          reason=constants.REMEDY_ACTION_TRAFFIC_CONTROL)
        for cluster in restored:
            await self._recorder.timeline(mci, tl.TRAFFIC, f"traffic to {cluster} restored")


def _backend_keys(mci: MultiClusterIngress) -> list[str]:
    return [f"{mci.namespace}/{service}" for service in rules.backend_services(mci.spec)]


def _location_clusters(mci: MultiClusterIngress) -> list[str]:
    return sorted({name for loc in mci.status.service_locations or () for name in loc.clusters or ()})


def _is_service_binding(binding: ResourceBinding) -> bool:
    resource = binding.spec.resource
    return resource.api_version == "v1" and resource.kind == rules.SERVICE_KIND


def _binding_wakes(old: ResourceBinding | None, new: ResourceBinding | None) -> bool:
    either = new if new is not None else old
    if either is None or not _is_service_binding(either):
        return False
    if old is None or new is None:
        return True
    return rules.binding_clusters(old) != rules.binding_clusters(new)


def _cluster_wakes(old: Cluster | None, new: Cluster | None) -> bool:
    if old is None or new is None:
        return True
    return rules.traffic_controlled(old) != rules.traffic_controlled(new)


def _new(deps: Deps) -> IngressReconciler:
    mcis = deps.informers.informer_for(MultiClusterIngress)
    bindings = deps.informers.informer_for(ResourceBinding)
    clusters = deps.informers.informer_for(Cluster)
    mcis.add_indexer(BY_SERVICE, _backend_keys)
    mcis.add_indexer(BY_LOCATION, _location_clusters)

    def mcis_of_binding(binding: ResourceBinding) -> Iterable[Request]:
        key = f"{binding.namespace}/{binding.spec.resource.name}"
        return [Request.for_object(mci) for mci in mcis.by_index(BY_SERVICE, key)]

    def mcis_of_cluster(cluster: Cluster) -> Iterable[Request]:
        return [Request.for_object(mci) for mci in mcis.by_index(BY_LOCATION, cluster.name)]

    deps.keys.watch(bindings, mcis_of_binding, predicate=_binding_wakes)
    deps.keys.watch(clusters, mcis_of_cluster, predicate=_cluster_wakes)
    return IngressReconciler(deps.ctx, mcis, bindings, clusters)


#: maintains MCI service locations and traffic blocks (control plane only; exempt from turns:
#: the traffic path never waits behind a rescheduling)
SPEC = ControllerSpec(NAME, reconciler=_new, kind=MultiClusterIngress, tier=Tier.EXEMPT,
                      workers=concurrent_syncs, runs=Runs.PLANE, watches=(Watch(MultiClusterIngress),))


__all__ = ["BY_LOCATION", "BY_SERVICE", "NAME", "SPEC", "IngressReconciler"]
