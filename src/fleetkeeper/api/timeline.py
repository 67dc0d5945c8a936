"""The failover timeline: one durable ``TimelineEntry`` per failover decision.

Karmada explains itself through Events, which are aggregated, expire, and say little
about *why* nothing happened. fleetkeeper additionally records every decision on the
path detect → taint → evict → schedule → healthy → purge as a ``TimelineEntry``
(group ``fleetkeeper.io``, additive to Karmada's API): cluster condition changes,
taints added and removed, eviction tasks created, blocked and dropped (with the
reason), schedule results, Works created and deleted, their member copies removed (once the
cluster is reachable again, for a cluster that failed), circuit-breaker decisions.

Entries are cluster-scoped and name their subject, so "why did (or didn't) it fail
over?" is a field-selector query away::

    kubectl get timelineentries --field-selector subject.kind=ResourceBinding,subject.name=nginx-deployment

``fleetkeeper describe binding NS/NAME`` and ``fleetkeeper simulate --timeline`` print
them in time order.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from fleetkeeper.api.base import Model
from fleetkeeper.api.core import MicroTime
from fleetkeeper.api.meta import Resource
from fleetkeeper.api.scheme import register

GROUP_VERSION = "fleetkeeper.io/v1alpha1"

# actions (what kind of decision an entry records)
CONDITION_CHANGED = "ConditionChanged"
TAINT_ADDED = "TaintAdded"
TAINT_REMOVED = "TaintRemoved"
EVICTION_STARTED = "EvictionStarted"
EVICTION_BLOCKED = "EvictionBlocked"
#: evictions paused by the circuit breaker start again
EVICTION_RESUMED = "EvictionResumed"
#: a binding tolerates a cluster's NoExecute taint, for a while or for good
EVICTION_TOLERATED = "EvictionTolerated"
EVICTION_COMPLETED = "EvictionCompleted"
EVICTION_CLEARED = "EvictionCleared"
SCHEDULED = "Scheduled"
#: a binding asked to be scheduled afresh (a WorkloadRebalancer)
RESCHEDULE_REQUESTED = "RescheduleRequested"
SCHEDULE_FAILED = "ScheduleFailed"
WORK_CREATED = "WorkCreated"
WORK_DELETED = "WorkDeleted"
#: a deleted Work's objects removed from (or, preserved, released in) its member cluster
WORK_CLEANED_UP = "WorkCleanedUp"
WORKLOAD_HEALTH = "WorkloadHealth"
DISPATCH_SUSPENDED = "DispatchSuspended"
DISPATCH_RESUMED = "DispatchResumed"
#: new Works held back until a ``Directly`` eviction's old copy is gone
DISPATCH_WAITING = "DispatchWaiting"
REMEDY = "Remedy"
TRAFFIC = "Traffic"
SCENARIO = "Scenario"


class Subject(Model):
    """The object an entry is about."""

    api_version: str = Field(alias="apiVersion")
    """API version of the object the entry is about."""
    kind: str
    """Kind of the object the entry is about, for example ResourceBinding or Cluster."""
    name: str
    """Name of the object the entry is about."""
    namespace: str | None = None
    """Namespace of the object; empty for a cluster-scoped one."""


@register
class TimelineEntry(Resource):
    """One failover decision, with when, about what, and why."""

    API_VERSION: ClassVar[str] = GROUP_VERSION
    KIND: ClassVar[str] = "TimelineEntry"
    PLURAL: ClassVar[str] = "timelineentries"
    NAMESPACED: ClassVar[bool] = False
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("tl",)
    HAS_STATUS: ClassVar[bool] = False

    time: MicroTime
    """When the decision was made."""
    subject: Subject
    """The object the decision is about."""
    action: str
    """What was decided, for example TaintAdded, EvictionStarted, Scheduled or WorkCreated."""
    reason: str = ""
    """One CamelCase word saying why."""
    message: str = ""
    """Details for people about the decision."""
    component: str = ""
    """The part of the plane that made the decision."""


__all__ = ["GROUP_VERSION", "Subject", "TimelineEntry"]
