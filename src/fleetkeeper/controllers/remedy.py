"""The remedy controller: ``Cluster.status.remedyActions`` from the Remedies that fire.

The Cluster is the primary resource: a reconcile reads one cluster and every Remedy
from the shared caches, lets :func:`~fleetkeeper.controllers.remedy_rules.calculate_actions`
compute the actions the firing Remedies ask for, and writes the status only when the
*set* differs — through ``/status`` with optimistic concurrency, re-reading on a conflict
(the cluster-status controller and the detector write conditions on the same status).
The actions disappear by the same rule: when the match ends or the Remedy is deleted,
the recomputed set no longer holds them.

**What wakes a cluster.** Its creation, a change of its conditions (a detector
reporting ``ServiceDomainNameResolutionReady=False``), remedy actions edited by someone
else; and any Remedy created, changed or deleted, which wakes the clusters it names —
every cluster when it has no ``clusterAffinity``.

Every change is one timeline entry on the Cluster naming the Remedies responsible
(``remedy actions [TrafficControl] by Remedy dns-broken``), so the traffic switch that
follows can be traced to its cause. The traffic itself is the multicluster-ingress
controller's business (``TrafficControl`` → ``trafficBlockClusters``).
"""

from __future__ import annotations

from fleetkeeper import errors
from fleetkeeper.api import timeline as tl
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.remedy import Remedy
from fleetkeeper.controllers import remedy_rules as rules
from fleetkeeper.controllers import writes
from fleetkeeper.runtime.context import Context
from fleetkeeper.runtime.handler import Enqueuer, FuncHandler
from fleetkeeper.runtime.informer import Informer
from fleetkeeper.runtime.reconcile import Request, Result
from fleetkeeper.runtime.spec import ControllerSpec, Deps, Runs, Tier, Watch, concurrent_syncs

NAME = "remedy-controller"


class RemedyReconciler:
    """Keeps one cluster's ``status.remedyActions`` equal to what its Remedies ask for."""

    def __init__(self, ctx: Context, clusters: Informer[Cluster], remedies: Informer[Remedy]) -> None:
        self._ctx = ctx
        self._clusters = clusters
        self._remedies = remedies
        self._recorder = ctx.recorder(NAME)

    async def reconcile(self, request: Request) -> Result:
        cluster = self._clusters.get(request.name)
        if cluster is None or cluster.metadata.deletion_timestamp is not None:
            return Result()
        remedies = self._remedies.list()

        def change(current: Cluster) -> Cluster | None:
            actions = rules.calculate_actions(remedies, current)
            if rules.same_actions(actions, current.status.remedy_actions):
                return None
            desired = current.deep_copy()
            desired.status.remedy_actions = actions
            return desired

        try:
            written = await writes.write(self._ctx.client, cluster, change, subresource="status")
        except errors.NotFound:
            return Result()
        if written is not None:
            actions = written.status.remedy_actions
            text = rules.actions_text(actions, rules.firing(remedies, written))
            await self._recorder.timeline(written, tl.REMEDY, text, reason=", ".join(actions or ()))
        return Result()


def _remedy_handler(keys: Enqueuer, clusters: Informer[Cluster]) -> FuncHandler[Remedy]:
    def on_change(old: Remedy | None, new: Remedy | None) -> None:
        if old is not None and new is not None and old.spec == new.spec:
            return
        names = [c.name for c in clusters.list()]
        for name in rules.clusters_of_remedy_change(old, new, names):
            keys.enqueue(Request("", name))

    return FuncHandler(on_change)


def _new(deps: Deps) -> RemedyReconciler:
    clusters = deps.informers.informer_for(Cluster)
    remedies = deps.informers.informer_for(Remedy)
    remedies.add_handler(_remedy_handler(deps.keys, clusters))
    return RemedyReconciler(deps.ctx, clusters, remedies)


#: sets remedy actions on clusters (control plane only; exempt from turns: taking a broken
#: cluster out of traffic never waits)
SPEC = ControllerSpec(NAME, reconciler=_new, kind=Cluster, tier=Tier.EXEMPT, workers=concurrent_syncs,
                      runs=Runs.PLANE, watches=(Watch(Cluster, predicate=rules.cluster_wakes),))


__all__ = ["NAME", "SPEC", "RemedyReconciler"]
