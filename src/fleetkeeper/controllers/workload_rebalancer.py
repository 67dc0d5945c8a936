"""The workload-rebalancer controller: a WorkloadRebalancer → its workloads scheduled afresh.

A failover never moves a workload back to a cluster that recovered. A
:class:`~fleetkeeper.api.apps.WorkloadRebalancer` asks for it: for each workload it lists,
the binding (the ResourceBinding ``lower(name-kind)`` in the workload's namespace, or the
ClusterResourceBinding of a cluster-scoped one) gets ``spec.rescheduleTriggeredAt`` set to
the rebalancer's creation time, and the scheduler schedules it afresh (``Fresh``), as if
new. Each request is a timeline entry on the binding.

``status.observedWorkloads`` says ``Successful`` per workload, or ``Failed`` with
``ReferencedBindingNotFound`` when it has no binding; any other error is retried every
:data:`RETRY_SECONDS`. Decisions in
:mod:`~fleetkeeper.controllers.workload_rebalancer_rules`. The controller wakes on a
rebalancer's creation and on changes of its spec (a workload added is rebalanced too).
"""

from __future__ import annotations

import contextlib
from enum import Enum

from fleetkeeper import errors
from fleetkeeper.api import constants
from fleetkeeper.api import timeline as tl
from fleetkeeper.api.apps import (
    REASON_NOT_FOUND,
    ObjectReference,
    WorkloadRebalancer,
    WorkloadRebalancerStatus,
)
from fleetkeeper.api.work import Binding
from fleetkeeper.controllers import workload_rebalancer_rules as rules
from fleetkeeper.controllers.writes import write
from fleetkeeper.runtime.bindings import BindingInformers
from fleetkeeper.runtime.cache import InformerFactory
from fleetkeeper.runtime.context import Context
from fleetkeeper.runtime.handler import generation_changed
from fleetkeeper.runtime.informer import Informer
from fleetkeeper.runtime.reconcile import Request, Result
from fleetkeeper.runtime.spec import ControllerSpec, Deps, Runs, Watch

CONTROLLER_NAME = "workload-rebalancer"
#: the reason of a binding's RescheduleRequested timeline entry: a WorkloadRebalancer asked
REASON_REQUESTED = "WorkloadRebalancer"
#: how soon a workload whose binding could not be written is tried again
RETRY_SECONDS = 5.0


class Triggered(Enum):
    """How asking one workload's binding to reschedule went."""

    DONE = "done"  # asked (or asked already)
    MISSING = "missing"  # the workload has no binding
    RETRY = "retry"  # the write failed; the rebalancer comes back later


class WorkloadRebalancerController:
    """Reconciles one WorkloadRebalancer (see the module notes)."""

    def __init__(self, ctx: Context, informers: InformerFactory) -> None:
        self._ctx = ctx
        self._recorder = ctx.recorder(CONTROLLER_NAME)
        self.rebalancers: Informer[WorkloadRebalancer] = informers.informer_for(WorkloadRebalancer)
        self._bindings = BindingInformers(informers)

    async def reconcile(self, request: Request) -> Result:
        rebalancer = self.rebalancers.get(request.name)
        if rebalancer is None:
            return Result()
        now = self._ctx.clock.now()
        status = rebalancer.status
        observed = rules.observed_workloads(rebalancer.spec.workloads, status.observed_workloads or [])
        retries = 0
        for index, item in enumerate(observed):
            if item.result is not None:
                continue
            outcome = await self._trigger(rebalancer, item.workload)
            if outcome is Triggered.RETRY:
                retries += 1
            else:
                done = outcome is Triggered.DONE
                observed[index] = item.model_copy(update={"result": "Successful" if done else "Failed",
                                                          "reason": None if done else REASON_NOT_FOUND})
        desired = status.model_copy(update={"observed_workloads": observed,
                                            "observed_generation": rebalancer.metadata.generation})
        if desired != status:
            if not retries:
                desired = desired.model_copy(update={"finish_time": now})
            rebalancer = await self._write_status(rebalancer, desired) or rebalancer
        if retries:
            return Result(requeue_after=RETRY_SECONDS)
        left = rules.time_left(rebalancer.status.finish_time, rebalancer.spec.ttl_seconds_after_finished, now)
        if left is None:
            return Result()
        if left > 0:
            return Result(requeue_after=left)
        with contextlib.suppress(errors.NotFound):
            await self._ctx.client.delete(WorkloadRebalancer, rebalancer.name)
        return Result()

    async def _trigger(self, rebalancer: WorkloadRebalancer, workload: ObjectReference) -> Triggered:
        """Ask the workload's binding to reschedule."""
        binding = self._binding(workload)
        if binding is None:
            return Triggered.MISSING
        created = rebalancer.metadata.creation_timestamp

        def change(current: Binding) -> Binding | None:
            if not rules.needs_trigger(created, current.spec.reschedule_triggered_at):
                return None
            return current.model_copy(update={
                "spec": current.spec.model_copy(update={"reschedule_triggered_at": created})})

        try:
            written = await write(self._ctx.client, binding, change)
        except errors.NotFound:
            return Triggered.MISSING
        except errors.ApiError:
            return Triggered.RETRY
        if written is not None:
            await self._recorder.timeline(
                written, tl.RESCHEDULE_REQUESTED,
                f"rescheduling requested by WorkloadRebalancer {rebalancer.name}", reason=REASON_REQUESTED)
        return Triggered.DONE

    def _binding(self, workload: ObjectReference) -> Binding | None:
        return self._bindings.get(Request(workload.namespace or "",
                                          constants.binding_name(workload.kind, workload.name)))

    async def _write_status(self, rebalancer: WorkloadRebalancer,
                            desired: WorkloadRebalancerStatus) -> WorkloadRebalancer | None:
        def change(current: WorkloadRebalancer) -> WorkloadRebalancer | None:
            return current.model_copy(update={"status": desired})

        with contextlib.suppress(errors.NotFound):
            return await write(self._ctx.client, rebalancer, change, subresource="status")
        return None


def _new(deps: Deps) -> WorkloadRebalancerController:
    return WorkloadRebalancerController(deps.ctx, deps.informers)


#: WorkloadRebalancers (control plane only)
SPEC = ControllerSpec(CONTROLLER_NAME, reconciler=_new, kind=WorkloadRebalancer, runs=Runs.PLANE,
                      watches=(Watch(WorkloadRebalancer, predicate=generation_changed),))


__all__ = ["CONTROLLER_NAME", "REASON_REQUESTED", "RETRY_SECONDS", "SPEC", "WorkloadRebalancerController"]
