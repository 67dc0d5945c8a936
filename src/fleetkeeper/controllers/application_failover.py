"""The application-failover controller: a workload Unhealthy in a cluster past its toleration leaves it.

One reconciler for ResourceBindings and ClusterResourceBindings (the key's namespace
tells them apart; only the task's producer differs). Decisions are in
:mod:`~fleetkeeper.controllers.application_failover_rules`; this module reads, writes
and records.

**What wakes a binding.** Any change of a binding that has (or had) application
failover configured — status changes included, since that is where health arrives —
and the requeue at the next toleration deadline, so an eviction happens at the instant
the toleration runs out, not at the next unrelated event.

**Reconcile.** Read the binding; if application failover cannot apply to it, forget its
clocks (see below for the configuration that can never fire). Otherwise advance every
target cluster's unhealthy clock to now and, in one write with optimistic concurrency
(recomputed from the fresh object on a conflict): keep the clocks in fleetkeeper's
annotation on the binding, and for each cluster whose toleration ran out remove it from
``spec.clusters``, append its graceful-eviction task (reason ``ApplicationFailure``)
and its ``spec.evictionHistory`` record. The graceful-eviction controller then ends
the task (when the replacement is Healthy, at the grace period, or — ``Never`` — when a
person sets ``suppressDeletion: false``), exactly as for cluster failover; the
scheduler keeps the cluster out while the task exists and, through the history, for
``blockPredecessorSeconds``.

**Timeline.** Each step is an entry on the binding: Unhealthy in a cluster (with when
failover will happen), the clock paused by an Unknown health, reset by Healthy, held by
``preConditions``, the eviction, and until when the cluster is blocked. A failed write
is an ``EvictWorkloadFromClusterFailed`` Warning on the binding and its template, and a
retry; so is state that cannot be extracted for preservation.

**A configuration that can never fire.** Application failover acts on the health the
interpreter reports; for a kind without a health rule (``batch/v1`` Job without a
customization, most custom kinds) every copy counts as Healthy, so nothing would ever
move. Admission cannot see the interpreter (``api`` is below it), and the detector
copying the policy faithfully keeps the binding an exact image of the policy, so the
warning is given here, where the interpreter is at hand and the binding is known: a
Warning Event ``ApplicationFailoverIneffective`` on the binding, its template and its
policy, and a timeline entry — once per binding (the recorder's memory, forgotten with
the binding).
"""

from __future__ import annotations

import contextlib
from datetime import datetime

import structlog

from fleetkeeper import errors
from fleetkeeper.api import constants
from fleetkeeper.api import timeline as tl
from fleetkeeper.api.meta import ObjectMeta, Resource, Unstructured
from fleetkeeper.api.policy import ClusterPropagationPolicy, PropagationPolicy
from fleetkeeper.api.work import Binding, ResourceBinding, template_stub
from fleetkeeper.controllers import application_failover_rules as rules
from fleetkeeper.controllers import bindings as b
from fleetkeeper.controllers.writes import write
from fleetkeeper.runtime.bindings import BindingInformers, watch_bindings
from fleetkeeper.runtime.context import Context
from fleetkeeper.runtime.reconcile import Request, Result
from fleetkeeper.runtime.spec import ControllerSpec, Deps, Runs, concurrent_syncs

NAME = "application-failover-controller"
EVENT_INEFFECTIVE = "ApplicationFailoverIneffective"
#: the recorder's topic of the state-preservation failures holding a binding's evictions (told
#: once each while they last: the failures told, by cluster)
PRESERVATION = "StatePreservationFailed"

_log = structlog.get_logger("fleetkeeper.application_failover")


class StatePreservationFailed(errors.FleetkeeperError):
    """State to preserve could not be extracted from the failed copy; the eviction is retried."""


def producer_of(binding: Binding) -> str:
    """The task producer Karmada names after the controller instance of the binding kind."""
    if b.is_cluster_scoped(binding):
        return constants.PRODUCER_CRB_APPLICATION_FAILOVER
    return constants.PRODUCER_RB_APPLICATION_FAILOVER


def has_application_failover(old: Binding | None, new: Binding | None) -> bool:
    """Watch predicate: the binding has, or had, ``failover.application``."""
    return any(x is not None and x.spec.failover is not None and x.spec.failover.application is not None
               for x in (old, new))


def _stub(api_version: str, kind: str, name: str, namespace: str | None, uid: str | None = None) -> Resource:
    meta = ObjectMeta(name=name, namespace=namespace, uid=uid)
    return Unstructured.for_kind(api_version, kind)(metadata=meta)


def _policy(binding: Binding) -> Resource | None:
    annotations = binding.annotations()
    name = annotations.get(constants.PP_NAME_ANNOTATION)
    if name:
        namespace = annotations.get(constants.PP_NAMESPACE_ANNOTATION)
        return _stub(PropagationPolicy.API_VERSION, PropagationPolicy.KIND, name, namespace)
    if annotations.get(constants.CPP_NAME_ANNOTATION):
        return _stub(ClusterPropagationPolicy.API_VERSION, ClusterPropagationPolicy.KIND,
                     annotations[constants.CPP_NAME_ANNOTATION], None)
    return None


class ApplicationFailover:
    """Reconciles the application failover of one binding of either kind."""

    def __init__(self, ctx: Context, bindings: BindingInformers) -> None:
        self._ctx = ctx
        self._bindings = bindings
        self._recorder = ctx.recorder(NAME)
        bindings.add_handler(self._recorder.forgetting())

    async def reconcile(self, request: Request) -> Result:
        binding = self._bindings.get(request)
        if binding is None or binding.metadata.deletion_timestamp is not None:
            return Result()
        resource = binding.spec.resource
        healthy_rule = self._ctx.interpreter.has_health_rule(resource.api_version, resource.kind)
        why = rules.ineligible(binding.spec, has_health_rule=healthy_rule,
                               namespaced=not b.is_cluster_scoped(binding))
        if why is not None:
            if not healthy_rule and binding.spec.failover is not None \
                    and binding.spec.failover.application is not None:
                await self._warn_ineffective(binding, why)
            await self._forget(binding)
            return Result()
        now = self._ctx.clock.now()
        plans: list[rules.Plan] = []
        producer = producer_of(binding)

        def change(current: Binding) -> Binding | None:
            plan = rules.decide(current.spec, current.status, current.annotations(), now)
            plans.append(plan)
            spec = rules.apply_plan(current.spec, plan, producer=producer, now=now)
            annotations = rules.annotations_with(current.annotations(), plan.observations)
            if spec == current.spec and annotations == current.annotations():
                return None
            meta = current.metadata.model_copy(update={"annotations": annotations or None})
            return current.model_copy(update={"metadata": meta, "spec": spec})

        try:
            written = await write(self._ctx.client, binding, change)
        except errors.NotFound:
            return Result()
        except errors.ApiError:
            for cluster in plans[-1].evict if plans else ():
                await self._failed(binding, f"Evict from cluster {cluster} failed.")
            raise
        plan = plans[-1]
        await self._record(written or binding, plan, now)
        await self._tell_failures(binding, plan.failed)
        if plan.failed:
            for cluster, reason in plan.failed.items():
                await self._failed(binding, f"Evict from cluster {cluster} failed: {reason}")
            raise StatePreservationFailed(f"binding {request}: state preservation failed for "
                                          f"{', '.join(sorted(plan.failed))}; retrying")
        return Result(requeue_after=plan.requeue_after)

    # ---------------------------------------------------------------- writes
    async def _forget(self, binding: Binding) -> None:
        """Drop the clocks of a binding application failover no longer watches."""
        if rules.OBSERVATIONS_ANNOTATION not in binding.annotations():
            return

        def change(current: Binding) -> Binding | None:
            annotations = rules.annotations_with(current.annotations(), {})
            if annotations == current.annotations():
                return None
            meta = current.metadata.model_copy(update={"annotations": annotations or None})
            return current.model_copy(update={"metadata": meta})

        with contextlib.suppress(errors.NotFound):
            await write(self._ctx.client, binding, change)

    # ---------------------------------------------------------------- recording
    async def _record(self, binding: Binding, plan: rules.Plan, now: datetime) -> None:
        for note in plan.notes:
            await self._recorder.timeline(binding, tl.WORKLOAD_HEALTH, note.message,
                                          reason=note.kind.capitalize())
        app = binding.spec.failover.application if binding.spec.failover is not None else None
        if app is None:
            return
        reason = constants.EVICTION_REASON_APPLICATION_FAILURE
        for cluster in plan.evict:
            text = rules.eviction_message(cluster, app.purge_mode, plan.unhealthy.get(cluster, 0.0))
            _log.info("evicting workload from cluster", binding=binding.key, cluster=cluster, reason=reason)
            await self._recorder.timeline(binding, tl.EVICTION_STARTED, text, reason=reason)
            await self._recorder.timeline(binding, tl.EVICTION_STARTED,
                                          rules.blocked_message(cluster, now, app.block_seconds()),
                                          reason="BlockPredecessor")

    async def _tell_failures(self, binding: Binding, failed: dict[str, str]) -> None:
        """Put a state-preservation failure that holds an eviction on the timeline, once while it
        lasts (the reconcile is retried with backoff, and each retry fails the same way)."""
        said = self._recorder.said(binding, PRESERVATION)
        told: dict[str, str] = dict(said) if isinstance(said, tuple) else {}
        for cluster, reason in failed.items():
            if told.get(cluster) != reason:
                await self._recorder.timeline(
                    binding, tl.EVICTION_BLOCKED,
                    f"eviction from {cluster} waits: state preservation failed: {reason}",
                    reason=PRESERVATION)
        if failed:
            self._recorder.first(binding, PRESERVATION, tuple(failed.items()))
        else:
            self._recorder.clear(binding, PRESERVATION)

    async def _failed(self, binding: Binding, message: str) -> None:
        for obj in (binding, template_stub(binding)):
            await self._recorder.event(obj, "Warning", constants.EVENT_EVICT_WORKLOAD_FAILED, message)

    async def _warn_ineffective(self, binding: Binding, why: str) -> None:
        resource = binding.spec.resource
        if not self._recorder.first(binding, (EVENT_INEFFECTIVE, resource.api_version, resource.kind)):
            return
        _log.warning("application failover can never fire", binding=binding.key, kind=resource.kind)
        policy = _policy(binding)
        for obj in (binding, template_stub(binding), *([policy] if policy is not None else [])):
            await self._recorder.event(obj, "Warning", EVENT_INEFFECTIVE, why)
        await self._recorder.timeline(binding, tl.EVICTION_BLOCKED, why, reason=EVENT_INEFFECTIVE)


def _new(deps: Deps) -> ApplicationFailover:
    return ApplicationFailover(deps.ctx, BindingInformers(deps.informers))


#: application failover (control plane only)
SPEC = ControllerSpec(
    NAME, reconciler=_new, kind=ResourceBinding, workers=concurrent_syncs, runs=Runs.PLANE,
    watches=watch_bindings(predicate=has_application_failover),
)


__all__ = [
    "EVENT_INEFFECTIVE", "NAME", "SPEC", "ApplicationFailover", "StatePreservationFailed",
    "has_application_failover", "producer_of",
]
