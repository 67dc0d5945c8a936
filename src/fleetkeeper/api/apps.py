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
    kind: str
    name: str
    namespace: str | None = None

    def sort_key(self) -> str:
        return f"{self.api_version} {self.kind} {self.namespace or ''} {self.name}"


class ObservedWorkload(Model):
    workload: ObjectReference
    result: RebalanceResult | None = None
    reason: str | None = None


class WorkloadRebalancerSpec(Model):
    workloads: list[ObjectReference] = Field(default_factory=list)
    ttl_seconds_after_finished: int | None = None


class WorkloadRebalancerStatus(Model):
    observed_workloads: list[ObservedWorkload] | None = None
    observed_generation: int | None = None
    finish_time: datetime | None = None


@register
class WorkloadRebalancer(Resource):
    API_VERSION: ClassVar[str] = constants.APPS_API_VERSION
    KIND: ClassVar[str] = "WorkloadRebalancer"
    PLURAL: ClassVar[str] = "workloadrebalancers"
    NAMESPACED: ClassVar[bool] = False
    CATEGORIES: ClassVar[tuple[str, ...]] = ("karmada-io",)
    HAS_STATUS: ClassVar[bool] = True

    spec: WorkloadRebalancerSpec = Field(default_factory=WorkloadRebalancerSpec)
    status: WorkloadRebalancerStatus = Field(default_factory=WorkloadRebalancerStatus)


__all__ = [
    "REASON_NOT_FOUND", "ObjectReference", "ObservedWorkload", "RebalanceResult", "WorkloadRebalancer",
    "WorkloadRebalancerSpec", "WorkloadRebalancerStatus",
]
