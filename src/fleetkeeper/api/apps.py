"""WorkloadRebalancer (``apps.karmada.io/v1alpha1``, cluster-scoped): schedule workloads afresh.

A failover moves workloads away from a failed cluster and — by design — never moves
them back when it recovers. A WorkloadRebalancer is how an operator asks for that: each
workload it lists gets its binding's ``spec.rescheduleTriggeredAt`` set to the
rebalancer's creation time, which makes the scheduler schedule it afresh, as if new
(``Fresh``), so the placement the policy prefers is restored. ``status.observedWorkloads``
says, per workload, ``Successful`` or ``Failed`` (``ReferencedBindingNotFound``);
``finishTime`` is set once every workload has its result, and with
``ttlSecondsAfterFinished`` the rebalancer deletes itself that long after.
"""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar, Literal

from pydantic import Field

from fleetkeeper.api import constants
from fleetkeeper.api.base import Model
from fleetkeeper.api.meta import Resource
from fleetkeeper.api.scheme import register

RebalanceResult = Literal["Successful", "Failed"]
#: why a workload's rebalance failed: it has no binding
REASON_NOT_FOUND = "ReferencedBindingNotFound"


class ObjectReference(Model):
    """A resource template: ``apiVersion``, ``kind``, ``name`` and, when namespaced, ``namespace``."""

    api_version: str
    """API version of the resource template. Required."""
    kind: str
    """Kind of the resource template. Required."""
    name: str
    """Name of the resource template. Required."""
    namespace: str | None = None
    """Namespace of the resource template; empty for a cluster-scoped one."""

    def sort_key(self) -> str:
        return f"{self.api_version} {self.kind} {self.namespace or ''} {self.name}"


class ObservedWorkload(Model):
    workload: ObjectReference
    """The workload this entry is about."""
    result: RebalanceResult | None = None
    """Successful when the workload was asked to be scheduled afresh, Failed when it could not be."""
    reason: str | None = None
    """Why the rebalance failed, for example ReferencedBindingNotFound when the workload has no binding."""


class WorkloadRebalancerSpec(Model):
    workloads: list[ObjectReference] = Field(default_factory=list)
    """The resource templates to schedule afresh. At least one, each with its apiVersion, kind and name."""
    ttl_seconds_after_finished: int | None = None
    """Seconds after every workload has its result until the rebalancer deletes itself. Without it, it is
    kept; must not be negative."""


class WorkloadRebalancerStatus(Model):
    observed_workloads: list[ObservedWorkload] | None = None
    """The result for each workload."""
    observed_generation: int | None = None
    """The rebalancer's generation these results are for."""
    finish_time: datetime | None = None
    """When every workload had its result."""


@register
class WorkloadRebalancer(Resource):
    """Asks for workloads to be scheduled afresh, for example to move them back to a recovered cluster."""

    API_VERSION: ClassVar[str] = constants.APPS_API_VERSION
    KIND: ClassVar[str] = "WorkloadRebalancer"
    PLURAL: ClassVar[str] = "workloadrebalancers"
    NAMESPACED: ClassVar[bool] = False
    CATEGORIES: ClassVar[tuple[str, ...]] = ("karmada-io",)
    HAS_STATUS: ClassVar[bool] = True

    spec: WorkloadRebalancerSpec = Field(default_factory=WorkloadRebalancerSpec)
    """The workloads to schedule afresh."""
    status: WorkloadRebalancerStatus = Field(default_factory=WorkloadRebalancerStatus)
    """The result for each workload and when all were done."""


__all__ = [
    "REASON_NOT_FOUND", "ObjectReference", "ObservedWorkload", "RebalanceResult", "WorkloadRebalancer",
    "WorkloadRebalancerSpec", "WorkloadRebalancerStatus",
]
