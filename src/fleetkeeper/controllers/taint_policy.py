"""The ClusterTaintPolicy controller: taints from conditions, one reconcile per cluster.

A reconcile reads the cluster and every ClusterTaintPolicy from the shared caches,
lets :func:`~fleetkeeper.controllers.taint_policy_rules.apply_policies` compute the
taint list the policies call for, and writes only when it differs — with optimistic
concurrency, re-reading and recomputing on a conflict (the cluster controller writes
the same list for its system taints).

**What wakes a cluster**: its creation, a change of its status conditions,
and the creation or spec change of a policy — which wakes every cluster the policy
targets. Deleting a policy wakes nobody: the taints it added stay, as in Karmada.

Each write is a ``TaintClusterSucceed`` Event with Karmada's message and one timeline
entry per taint, naming the policy and the condition that decided it
(``taint cluster.karmada.io/not-ready:NoExecute added by ClusterTaintPolicy
fleetkeeper-default-not-ready (Ready=False)``).
"""

from __future__ import annotations

from fleetkeeper import errors
from fleetkeeper.api import conditions, constants
from fleetkeeper.api import timeline as tl
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.taintpolicy import ClusterTaintPolicy
from fleetkeeper.controllers import taint_policy_rules as rules
from fleetkeeper.controllers.writes import Step, write_planned
from fleetkeeper.runtime.context import Context
from fleetkeeper.runtime.handler import Enqueuer
from fleetkeeper.runtime.informer import Informer
from fleetkeeper.runtime.reconcile import Request, Result
from fleetkeeper.runtime.spec import ControllerSpec, Deps, Runs, Tier, Watch, concurrent_syncs

NAME = "cluster-taint-policy-controller"
WRITE_ATTEMPTS = 5


class TaintPolicyReconciler:
    """Applies every ClusterTaintPolicy to one cluster."""

    def __init__(self, ctx: Context, clusters: Informer[Cluster],
                 policies: Informer[ClusterTaintPolicy]) -> None:
        self._ctx = ctx
        self._clusters = clusters
        self._policies = policies
        self._recorder = ctx.recorder(NAME)

    async def reconcile(self, request: Request) -> Result:
        cached = self._clusters.get(request.name)
        if cached is None:
            return Result()
        try:
            written = await write_planned(self._ctx.client, cached, self._plan, attempts=WRITE_ATTEMPTS,
                                          missing="none", on_error=self._failed)
        except errors.NotFound:
            return Result()
        if written is not None and written.stored is not None:
            await self._record(written.stored, written.plan)
        return Result()

    def _plan(self, current: Cluster) -> Step[Cluster, rules.Outcome] | None:
        """The cluster with the taints the policies call for; None when it already has them."""
        if current.metadata.deletion_timestamp is not None:
            return None
        outcome = rules.apply_policies(current, self._policies.list(), self._ctx.clock.now())
        if outcome.taints == list(current.spec.taints or ()):
            return None
        desired = current.deep_copy()
        desired.spec.taints = outcome.taints or None
        return Step(desired, outcome)

    async def _failed(self, current: Cluster, outcome: rules.Outcome, exc: errors.ApiError) -> None:
        if not isinstance(exc, errors.NotFound):
            await self._recorder.event(current, "Warning", constants.EVENT_TAINT_CLUSTER_FAILED,
                                       f"Update Cluster({current.name}) with taints failed: {exc}")

    async def _record(self, cluster: Cluster, outcome: rules.Outcome) -> None:
        message = rules.taints_message(cluster.spec.taints)
        await self._recorder.event(cluster, "Normal", constants.EVENT_TAINT_CLUSTER_SUCCEED,
                                   f"Update Cluster({cluster.name}) with taints({message}) succeed")
        ready = conditions.get_condition(cluster.status.conditions, constants.COND_READY)
        why = f"Ready={ready.status}" if ready is not None else "no Ready condition"
        for change in outcome.changes:
            taint = change.taint
            text = f"{taint.key}{f'={taint.value}' if taint.value else ''}:{taint.effect}"
            action = tl.TAINT_ADDED if change.action == "added" else tl.TAINT_REMOVED
            message = f"taint {text} {change.action} by ClusterTaintPolicy {change.policy} ({why})"
            await self._recorder.timeline(cluster, action, message, reason=change.policy)


def _conditions_changed(old: Cluster | None, new: Cluster | None) -> bool:
    if new is None:
        return False
    return old is None or old.status.conditions != new.status.conditions


class PolicyEvents:
    """A policy created or changed wakes every cluster it targets."""

    def __init__(self, keys: Enqueuer, clusters: Informer[Cluster]) -> None:
        self._keys = keys
        self._clusters = clusters

    def on_add(self, obj: ClusterTaintPolicy) -> None:
        self._fan_out(obj)

    def on_update(self, old: ClusterTaintPolicy, new: ClusterTaintPolicy) -> None:
        if old.spec != new.spec:
            self._fan_out(new)

    def on_delete(self, obj: ClusterTaintPolicy) -> None:
        """Deleting a policy never removes the taints it added."""

    def _fan_out(self, policy: ClusterTaintPolicy) -> None:
        for cluster in self._clusters.list():
            if rules.targets(policy, cluster):
                self._keys.enqueue(Request.for_object(cluster))


def _new(deps: Deps) -> TaintPolicyReconciler:
    clusters = deps.informers.informer_for(Cluster)
    policies = deps.informers.informer_for(ClusterTaintPolicy)
    policies.add_handler(PolicyEvents(deps.keys, clusters))
    return TaintPolicyReconciler(deps.ctx, clusters, policies)


#: taints clusters by conditions (control plane only; exempt from turns: detection never waits)
SPEC = ControllerSpec(NAME, reconciler=_new, kind=Cluster, tier=Tier.EXEMPT, workers=concurrent_syncs,
                      runs=Runs.PLANE, watches=(Watch(Cluster, predicate=_conditions_changed),))


__all__ = ["NAME", "SPEC", "PolicyEvents", "TaintPolicyReconciler"]
