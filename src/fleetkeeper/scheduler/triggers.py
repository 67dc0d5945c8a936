"""When a binding is (re)scheduled, and how the outcome reads as a condition.

Karmada does not re-run the algorithm on every event: a binding is scheduled again
only when one of these triggers fires, checked in order (the first wins):

1. **placement changed** — the placement differs from the applied-placement
   annotation in affinity, tolerations, spread constraints or replica scheduling, or
   the observed ``clusterAffinities`` term changed (or none is observed yet);
2. **replicas changed** — Duplicated: a target runs a different count than
   ``spec.replicas``; Divided: the targets do not add up to it. This is how an eviction
   shows for Divided workloads: the evicted cluster leaves ``spec.clusters``;
3. **reschedule requested** — ``rescheduleTriggeredAt`` is later than
   ``status.lastScheduledTime``; the run then starts from scratch ("fresh");
4. **always** for Duplicated placements and non-workloads (cluster changes matter);
5. **a target cluster is being deleted**.

Consequence (kept on purpose): a Divided workload whose replicas, placement and
cluster set are unchanged is not moved when clusters join or gain capacity.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import ValidationError

from fleetkeeper.api.constants import (
    COND_SCHEDULED,
    MSG_BINDING_SCHEDULED,
    REASON_BINDING_SCHEDULED,
    REASON_NO_CLUSTER_FIT,
    REASON_SCHEDULER_ERROR,
    REASON_UNSCHEDULABLE,
    REPLICA_SCHEDULING_DUPLICATED,
)
from fleetkeeper.api.placement import ClusterAffinityTerm, Placement
from fleetkeeper.api.work import ResourceBindingSpec, ResourceBindingStatus
from fleetkeeper.scheduler.errors import ScheduleError, UnschedulableError
from fleetkeeper.scheduler.framework import FitError

RECONCILE_SCHEDULE = "ReconcileSchedule"
SCALE_SCHEDULE = "ScaleSchedule"


def placement_changed(placement: Placement, applied: str, observed_affinity: str) -> bool:
    """Trigger 1: whether ``placement`` differs from the applied one in a way that matters."""
    if not applied:
        return True
    previous = _applied(applied)
    if previous is None:
        return False  # an unreadable annotation is ignored, as Karmada does
    if previous == placement:
        return False
    if (previous.cluster_affinity != placement.cluster_affinity
            or previous.cluster_tolerations != placement.cluster_tolerations
            or previous.spread_constraints != placement.spread_constraints
            or previous.replica_scheduling != placement.replica_scheduling):
        return True
    if not observed_affinity:
        return True
    now_term = _term(placement.cluster_affinities, observed_affinity)
    then_term = _term(previous.cluster_affinities, observed_affinity)
    return now_term is None or then_term is None or now_term != then_term


@functools.lru_cache(maxsize=1024)
def _applied(annotation: str) -> Placement | None:
    """The applied-placement annotation, parsed (only read: the bindings of one policy share
    the text, and the triggers run on every event of every binding)."""
    try:
        return Placement.model_validate(json.loads(annotation))
    except (ValueError, ValidationError):
        return None


def _term(terms: Sequence[ClusterAffinityTerm] | None, name: str) -> ClusterAffinityTerm | None:
    return next((t for t in terms or () if t.affinity_name == name), None)


def affinity_index(terms: Sequence[ClusterAffinityTerm], observed: str) -> int:
    """The index of the term named ``observed`` (0 when empty or unknown)."""
    if not observed:
        return 0
    return next((i for i, t in enumerate(terms) if t.affinity_name == observed), 0)


def replicas_changed(spec: ResourceBindingSpec) -> bool:
    """Trigger 2: the targets no longer carry ``spec.replicas`` (by the replica strategy)."""
    placement = spec.placement
    if placement is None or placement.replica_scheduling is None:
        return False
    targets = spec.clusters or []
    if placement.replica_scheduling.replica_scheduling_type == REPLICA_SCHEDULING_DUPLICATED:
        return any(t.replicas != spec.replicas for t in targets)
    return sum(t.replicas for t in targets) != spec.replicas


def reschedule_required(spec: ResourceBindingSpec, status: ResourceBindingStatus) -> bool:
    """Trigger 3: ``rescheduleTriggeredAt`` is strictly after ``lastScheduledTime`` (both set)."""
    triggered, last = spec.reschedule_triggered_at, status.last_scheduled_time
    return triggered is not None and last is not None and triggered > last


def is_workload(spec: ResourceBindingSpec) -> bool:
    """Replicas, replica requirements or components: Karmada's ``IsWorkload``."""
    return spec.replicas > 0 or spec.replica_requirements is not None or bool(spec.components)


def schedule_trigger(spec: ResourceBindingSpec, status: ResourceBindingStatus, annotation: str,
                     deleting_clusters: Collection[str]) -> str | None:
    """The first trigger that fires (``ReconcileSchedule`` / ``ScaleSchedule``), or ``None``."""
    placement = spec.placement
    if placement is None:
        return None
    if placement_changed(placement, annotation, status.scheduler_observed_affinity_name or ""):
        return RECONCILE_SCHEDULE
    if replicas_changed(spec):
        return SCALE_SCHEDULE
    if reschedule_required(spec, status):
        return RECONCILE_SCHEDULE
    if not is_workload(spec) or placement.replica_scheduling_type() == REPLICA_SCHEDULING_DUPLICATED:
        return RECONCILE_SCHEDULE
    if any(t.name in deleting_clusters for t in spec.clusters or ()):
        return RECONCILE_SCHEDULE
    return None


@dataclass(frozen=True, slots=True)
class Verdict:
    """The ``Scheduled`` condition an outcome produces, and whether to retry on a timer."""

    status: Literal["True", "False"]
    reason: str
    message: str
    #: retry with backoff; ``False`` waits for the next event (cluster or binding change)
    retry: bool

    @property
    def type(self) -> str:
        return COND_SCHEDULED


def verdict(error: ScheduleError | None) -> Verdict:
    """Karmada's ``getConditionByError``: success, Unschedulable, NoClusterFit or SchedulerError.

    Unschedulable and NoClusterFit wait for a cluster or binding change instead of a
    timer (Karmada parks them in its unschedulable queue), so a binding nothing can hold
    does not spin."""
    if error is None:
        return Verdict("True", REASON_BINDING_SCHEDULED, MSG_BINDING_SCHEDULED, retry=False)
    if isinstance(error, UnschedulableError):
        return Verdict("False", REASON_UNSCHEDULABLE, str(error), retry=False)
    if isinstance(error, FitError):
        return Verdict("False", REASON_NO_CLUSTER_FIT, str(error), retry=False)
    return Verdict("False", REASON_SCHEDULER_ERROR, str(error), retry=True)


__all__ = [
    "RECONCILE_SCHEDULE", "SCALE_SCHEDULE", "Verdict", "affinity_index", "is_workload", "placement_changed",
    "replicas_changed", "reschedule_required", "schedule_trigger", "verdict",
]
