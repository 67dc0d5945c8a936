"""Eviction tasks: the binding helpers, and when a task may end (pure, table-tested).

**Binding helpers** (re-implemented exactly): :func:`graceful_evict_cluster`
removes a cluster from ``spec.clusters`` and appends a ``gracefulEvictionTask`` (no task
when the cluster is not a target; an existing task for it is left untouched),
:func:`existing_clusters` and :func:`directly_clusters` say which Works a binding keeps.

**Assessment** (with the invariants of docs/architecture.md binding over Karmada's
rules): :func:`assess_task` decides one task at ``now``; :func:`assess_tasks` decides
them all, each with its own timeout (``gracePeriodSeconds`` or the controller default —
a value never leaks from one task to the next). A task is

* **stamped** on first sight (``creationTimestamp = now``);
* **kept** while ``suppressDeletion`` is true, and under purge mode ``Never`` until a
  person sets ``suppressDeletion: false`` (which **drops** it);
* **cleared** — and its cluster put back into ``spec.clusters`` with the replicas it had
  — when it was a taint eviction, its source cluster recovered (Ready, no untolerated
  NoExecute taint) and the workload has not moved yet: no successful schedule since the
  eviction, or scheduling failed;
* **dropped** when the current schedule is observed and every scheduled cluster reports
  the workload Healthy — an *empty* schedule is never "all healthy", and a cluster whose
  reported ``replicas`` differ from what was just scheduled there is still reporting on
  the old schedule (Karmada drops the task on that stale verdict, and with it the old
  copy before the new replicas run);
* at its timeout, **dropped** only if a replacement is scheduled *and* dispatched: a
  successful schedule made since the eviction, and every other target's Work applied with
  the member running the replicas now scheduled there (an ``applied`` left from before
  the eviction, a failed reschedule or a Work whose dispatch is suspended is no
  replacement); otherwise **blocked**: kept, because dropping it would delete the only
  copy. Purge mode ``Directly`` is the explicit exception: the user asked for
  the old copy to go first, so Karmada's rules apply unchanged (timeout drops, an empty
  observed schedule counts as done).

:func:`next_retry` is when a timeout next needs a look.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal

from fleetkeeper.api import conditions, constants, taints
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.core import Toleration
from fleetkeeper.api.placement import Placement
from fleetkeeper.api.work import (
    GracefulEvictionTask,
    ResourceBindingSpec,
    ResourceBindingStatus,
    TargetCluster,
)

# --------------------------------------------------------------------------- binding helpers


@dataclass(frozen=True, slots=True)
class TaskOptions:
    """What a producer puts into a new eviction task."""

    producer: str
    reason: str
    purge_mode: str | None = None
    message: str | None = None
    grace_period_seconds: int | None = None
    suppress_deletion: bool | None = None
    preserved_label_state: Mapping[str, str] | None = None
    clusters_before_failover: Sequence[str] | None = None
    creation_timestamp: datetime | None = None


def target_contains(spec: ResourceBindingSpec, name: str) -> bool:
    return any(t.name == name for t in spec.clusters or ())


def cluster_in_tasks(spec: ResourceBindingSpec, name: str) -> bool:
    return any(t.from_cluster == name for t in spec.graceful_eviction_tasks or ())


def assigned_replicas(spec: ResourceBindingSpec, name: str) -> int:
    return next((t.replicas for t in spec.clusters or () if t.name == name), 0)


def graceful_evict_cluster(spec: ResourceBindingSpec, name: str, options: TaskOptions) -> ResourceBindingSpec:
    """``spec`` with ``name`` evicted (Karmada's ``GracefulEvictCluster``); ``spec`` itself when absent."""
    targets = list(spec.clusters or ())
    index = next((i for i, t in enumerate(targets) if t.name == name), None)
    if index is None:
        return spec
    removed = targets.pop(index)
    update: dict[str, object] = {"clusters": targets or None}
    if not cluster_in_tasks(spec, name):
        task = GracefulEvictionTask(
            from_cluster=name, purge_mode=options.purge_mode,
            replicas=removed.replicas if removed.replicas > 0 else None, reason=options.reason,
            message=options.message, producer=options.producer,
            grace_period_seconds=options.grace_period_seconds, suppress_deletion=options.suppress_deletion,
            preserved_label_state=(dict(options.preserved_label_state)
                                   if options.preserved_label_state else None),
            clusters_before_failover=(list(options.clusters_before_failover)
                                      if options.clusters_before_failover else None),
            creation_timestamp=options.creation_timestamp,
        )
        update["graceful_eviction_tasks"] = [*(spec.graceful_eviction_tasks or ()), task]
    return spec.model_copy(update=update)


def existing_clusters(spec: ResourceBindingSpec) -> set[str]:
    """Clusters whose Works the binding keeps: targets, ``requiredBy`` targets, non-Directly tasks."""
    names = {t.name for t in spec.clusters or ()}
    for snapshot in spec.required_by or ():
        names.update(t.name for t in snapshot.clusters or ())
    names.update(t.from_cluster for t in spec.graceful_eviction_tasks or ()
                 if t.purge_mode != constants.PURGE_DIRECTLY)
    return names


def directly_clusters(spec: ResourceBindingSpec) -> set[str]:
    """Clusters of tasks with purge mode ``Directly`` (their Works go first)."""
    return {t.from_cluster for t in spec.graceful_eviction_tasks or ()
            if t.purge_mode == constants.PURGE_DIRECTLY}


@functools.lru_cache(maxsize=1024)
def _placement_tolerations(annotation: str) -> tuple[Toleration, ...]:
    placement = Placement.from_dict(json.loads(annotation))
    return tuple(placement.cluster_tolerations or ())


def applied_tolerations(annotations: Mapping[str, str]) -> tuple[Toleration, ...] | None:
    """Tolerations of the applied placement (``None``: never scheduled); ``ValueError`` when undecodable."""
    text = annotations.get(constants.APPLIED_PLACEMENT_ANNOTATION)
    if not text:
        return None
    try:
        return _placement_tolerations(text)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"the applied placement annotation cannot be decoded: {exc}") from None


def source_recovered(cluster: Cluster | None, tolerations: Sequence[Toleration]) -> bool:
    """The evicted cluster is back: Ready, not deleting, no NoExecute taint left untolerated."""
    if cluster is None or cluster.metadata.deletion_timestamp is not None:
        return False
    if not conditions.is_condition_true(cluster.status.conditions, constants.COND_READY):
        return False
    left = taints.untolerated_taints(cluster.spec.taints, tolerations, effects=(constants.EFFECT_NO_EXECUTE,))
    return not left


# --------------------------------------------------------------------------- assessment

Verdict = Literal["stamp", "keep", "drop", "clear", "block"]


@dataclass(frozen=True, slots=True)
class EvictionView:
    """A binding as the task assessment sees it (what it reads of spec and status)."""

    targets: tuple[str, ...]
    has_scheduled: bool
    health: Mapping[str, str | None]
    applied: frozenset[str]
    scheduled_status: str | None = None
    scheduled_reason: str | None = None
    last_scheduled_time: datetime | None = None
    #: replicas scheduled per target, and replicas the target reports (``None``: its kind reports none)
    assigned: Mapping[str, int] = field(default_factory=dict)
    reported: Mapping[str, int | None] = field(default_factory=dict)


def _reported_replicas(status: Mapping[str, object] | None) -> int | None:
    value = (status or {}).get("replicas")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def view_of(spec: ResourceBindingSpec, status: ResourceBindingStatus, generation: int | None) -> EvictionView:
    items = status.aggregated_status or ()
    scheduled = conditions.get_condition(status.conditions, constants.COND_SCHEDULED)
    return EvictionView(
        targets=tuple(t.name for t in spec.clusters or ()),
        has_scheduled=status.scheduler_observed_generation == (generation or 0),
        health={i.cluster_name: i.health for i in items},
        applied=frozenset(i.cluster_name for i in items if i.applied),
        scheduled_status=None if scheduled is None else scheduled.status,
        scheduled_reason=None if scheduled is None else scheduled.reason,
        last_scheduled_time=status.last_scheduled_time,
        assigned={t.name: t.replicas for t in spec.clusters or ()},
        reported={i.cluster_name: _reported_replicas(i.status) for i in items},
    )


@dataclass(frozen=True, slots=True)
class TaskVerdict:
    task: GracefulEvictionTask
    verdict: Verdict
    why: str

    def message(self) -> str:
        """The timeline text: ``eviction from member1 completed: member2 healthy``."""
        word = {"drop": "completed", "clear": "cleared", "block": "kept", "keep": "kept", "stamp": "started"}
        return f"eviction from {self.task.from_cluster} {word[self.verdict]}: {self.why}"


def timeout_of(task: GracefulEvictionTask, default_timeout: float) -> float:
    """The task's own grace period, else the controller default (never another task's)."""
    return float(task.grace_period_seconds) if task.grace_period_seconds is not None else default_timeout


def _moved(task: GracefulEvictionTask, view: EvictionView) -> bool:
    """Whether a successful schedule has placed the workload since the eviction."""
    if view.scheduled_status != "True" or not view.targets:
        return False
    last, created = view.last_scheduled_time, task.creation_timestamp
    return last is not None and created is not None and last >= created


def _healthy(view: EvictionView, name: str) -> bool:
    """Healthy, and (for kinds that report replicas) at the replicas scheduled there — a
    verdict reported before the reschedule reached the member does not count."""
    if view.health.get(name) != constants.HEALTHY:
        return False
    assigned, reported = view.assigned.get(name, 0), view.reported.get(name)
    return assigned <= 0 or reported is None or reported == assigned


def _all_healthy(view: EvictionView, *, vacuous: bool) -> bool:
    if not view.has_scheduled or (not view.targets and not vacuous):
        return False
    return all(_healthy(view, name) for name in view.targets)


def _holds_its_share(view: EvictionView, name: str) -> bool:
    """The target's Work is applied and (for kinds that report replicas) the member runs the
    replicas scheduled there now — an ``applied`` left from an earlier dispatch, or a Work whose
    dispatch is suspended, still shows the old share."""
    if name not in view.applied:
        return False
    assigned, reported = view.assigned.get(name, 0), view.reported.get(name)
    return assigned <= 0 or reported is None or reported == assigned


def _expired_verdict(task: GracefulEvictionTask, view: EvictionView, timeout: float) -> TaskVerdict:
    elapsed = f"grace period of {timeout:g}s elapsed"
    if task.purge_mode == constants.PURGE_DIRECTLY:
        return TaskVerdict(task, "drop", f"{elapsed} (purge mode Directly)")
    if view.scheduled_status == "False":
        return TaskVerdict(task, "block", f"scheduling failed ({view.scheduled_reason}), no replacement")
    others = [name for name in view.targets if name != task.from_cluster]
    if not others or not _moved(task, view):
        return TaskVerdict(task, "block", "no replacement scheduled")
    waiting = [name for name in others if not _holds_its_share(view, name)]
    if waiting:
        return TaskVerdict(task, "block", f"no replacement dispatched yet ({', '.join(waiting)} "
                                          "not running its new share)")
    return TaskVerdict(task, "drop", f"{elapsed}; replacement dispatched to {', '.join(others)}")


def assess_task(task: GracefulEvictionTask, view: EvictionView, *, recovered: bool, now: datetime,
                default_timeout: float) -> TaskVerdict:
    """The verdict for one task (see the module notes for the order of the rules)."""
    if task.creation_timestamp is None:
        return TaskVerdict(task.model_copy(update={"creation_timestamp": now}), "stamp", "first seen")
    if task.suppress_deletion is True:
        return TaskVerdict(task, "keep", "deletion suppressed")
    if task.suppress_deletion is False:
        return TaskVerdict(task, "drop", "deletion confirmed (suppressDeletion=false)")
    if task.purge_mode == constants.PURGE_NEVER:
        return TaskVerdict(task, "keep", "purge mode Never waits for suppressDeletion=false")
    if task.reason == constants.EVICTION_REASON_TAINT_UNTOLERATED and recovered and not _moved(task, view):
        return TaskVerdict(task, "clear", f"{task.from_cluster} recovered before the workload moved")
    directly = task.purge_mode == constants.PURGE_DIRECTLY
    if _all_healthy(view, vacuous=directly):
        return TaskVerdict(task, "drop", f"{', '.join(view.targets) or 'schedule'} healthy")
    timeout = timeout_of(task, default_timeout)
    if now >= task.creation_timestamp + timedelta(seconds=timeout):  # reached, so the timed requeue lands
        return _expired_verdict(task, view, timeout)
    return TaskVerdict(task, "keep", "waiting for the replacement to become healthy")


@dataclass(frozen=True, slots=True)
class Assessment:
    verdicts: list[TaskVerdict]
    kept: list[GracefulEvictionTask]
    restored: list[TargetCluster] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.restored) or any(v.verdict in ("stamp", "drop", "clear") for v in self.verdicts)

    def of(self, *verdicts: Verdict) -> list[TaskVerdict]:
        return [v for v in self.verdicts if v.verdict in verdicts]


def assess_tasks(spec: ResourceBindingSpec, view: EvictionView, *, recovered: Iterable[str], now: datetime,
                 default_timeout: float) -> Assessment:
    """Every task's verdict, the tasks to keep and the targets to restore."""
    back = frozenset(recovered)
    verdicts = [assess_task(task, view, recovered=task.from_cluster in back, now=now,
                            default_timeout=default_timeout)
                for task in spec.graceful_eviction_tasks or ()]
    kept = [v.task for v in verdicts if v.verdict in ("stamp", "keep", "block")]
    restored = [TargetCluster(name=v.task.from_cluster, replicas=v.task.replicas or 0)
                for v in verdicts if v.verdict == "clear" and v.task.from_cluster not in view.targets]
    return Assessment(verdicts, kept, restored)


def apply_assessment(spec: ResourceBindingSpec, assessment: Assessment) -> ResourceBindingSpec:
    """``spec`` with the kept tasks and the restored targets."""
    update: dict[str, object] = {"graceful_eviction_tasks": assessment.kept or None}
    if assessment.restored:
        update["clusters"] = [*(spec.clusters or ()), *assessment.restored]
    return spec.model_copy(update=update)


def next_retry(kept: Iterable[GracefulEvictionTask], now: datetime, default_timeout: float) -> float | None:
    """Seconds until the earliest pending timeout of a task that can time out, if any."""
    waits = []
    for task in kept:
        if task.suppress_deletion is not None or task.purge_mode == constants.PURGE_NEVER:
            continue
        created = task.creation_timestamp or now
        remaining = (created + timedelta(seconds=timeout_of(task, default_timeout)) - now).total_seconds()
        if remaining > 0:
            waits.append(remaining)
    return min(waits) if waits else None


__all__ = [
    "Assessment", "EvictionView", "TaskOptions", "TaskVerdict", "Verdict", "applied_tolerations",
    "apply_assessment", "assess_task", "assess_tasks", "assigned_replicas", "cluster_in_tasks",
    "directly_clusters", "existing_clusters", "graceful_evict_cluster", "next_retry", "source_recovered",
    "target_contains", "timeout_of", "view_of",
]
