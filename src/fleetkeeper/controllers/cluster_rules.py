"""Cluster controller decisions: system taints from Ready, heartbeats, execution spaces.

Pure functions over API values plus ``now``; the reconciler and the heartbeat monitor
in :mod:`~fleetkeeper.controllers.cluster` do the reading and writing.

* :func:`sync_ready_taints` — the two *system* taints, both
  ``NoSchedule``, follow the Ready condition: ``not-ready`` when Ready is False or
  absent, ``unreachable`` when Unknown (swapped on False↔Unknown), neither when True.
  Identity is key+effect, so a user's ``NoExecute`` taint with the same key is never
  touched. Kept taints keep their order; added ones go last with ``timeAdded = now``.
* :func:`monitor` — the heartbeat monitor of one cluster: a heartbeat
  is a change of the Ready condition or (Pull clusters) a newer Lease ``renewTime``;
  a Pull cluster silent for longer than the grace period (startup grace when it never
  posted Ready) becomes ``Ready=Unknown``. Push clusters are only recorded: their Ready
  comes from probes.
* :func:`taints_message` — Karmada's event text for a taint change.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from fleetkeeper.api import conditions, constants, taints
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.core import Namespace, Taint
from fleetkeeper.api.meta import Condition, ObjectMeta

NOT_READY_NO_SCHEDULE = Taint(key=constants.TAINT_CLUSTER_NOT_READY, effect="NoSchedule")
UNREACHABLE_NO_SCHEDULE = Taint(key=constants.TAINT_CLUSTER_UNREACHABLE, effect="NoSchedule")
#: the taints the cluster controller owns; no policy may add or remove them
SYSTEM_TAINTS: tuple[Taint, ...] = (NOT_READY_NO_SCHEDULE, UNREACHABLE_NO_SCHEDULE)


def is_system_taint(taint: taints.AnyTaint) -> bool:
    """Whether ``taint`` (by key and effect) is one of the cluster controller's."""
    return any(taints.same_taint(taint, system) for system in SYSTEM_TAINTS)


def ready_taint_changes(ready: Condition | None) -> tuple[tuple[Taint, ...], tuple[Taint, ...]]:
    """(taints to add, taints to remove) for a Ready condition."""
    if ready is None:
        return (NOT_READY_NO_SCHEDULE,), ()
    if ready.status == "False":
        return (NOT_READY_NO_SCHEDULE,), (UNREACHABLE_NO_SCHEDULE,)
    if ready.status == "Unknown":
        return (UNREACHABLE_NO_SCHEDULE,), (NOT_READY_NO_SCHEDULE,)
    return (), (NOT_READY_NO_SCHEDULE, UNREACHABLE_NO_SCHEDULE)


def sync_ready_taints(current: Sequence[Taint] | None, ready: Condition | None,
                      now: datetime) -> list[Taint] | None:
    """The taint list after following ``ready``, or ``None`` when nothing changes."""
    add, remove = ready_taint_changes(ready)
    have = list(current or ())
    missing = [t for t in add if not taints.taint_exists(have, t)]
    present = [t for t in remove if taints.taint_exists(have, t)]
    if not missing and not present:
        return None
    kept = [t for t in have if not any(taints.same_taint(t, r) for r in present)]
    return kept + [t.model_copy(update={"time_added": now}) for t in missing]


def taints_message(current: Sequence[Taint] | None) -> str:
    """``cluster now has taints([{Key:k,Effect:e},{Key:k,Value:v,Effect:e}])``."""
    if not current:
        return "cluster now does not have taints"
    parts = []
    for t in current:
        value = f",Value:{t.value}" if t.value else ""
        parts.append(f"{{Key:{t.key}{value},Effect:{t.effect}}}")
    return f"cluster now has taints([{','.join(parts)}])"


def taint_text(taint: taints.AnyTaint) -> str:
    """``cluster.karmada.io/not-ready:NoExecute`` (``key=value:effect`` with a value)."""
    value = f"={taint.value}" if taint.value else ""
    return f"{taint.key}{value}:{taint.effect}"


def taint_diff(before: Sequence[Taint] | None, after: Sequence[Taint] | None
               ) -> tuple[list[Taint], list[Taint]]:
    """(added, removed) between two taint lists, by key and effect."""
    old, new = list(before or ()), list(after or ())
    added = [t for t in new if not taints.taint_exists(old, t)]
    removed = [t for t in old if not taints.taint_exists(new, t)]
    return added, removed


def execution_space(cluster_name: str) -> Namespace:
    """The execution namespace of a cluster (``karmada-es-<name>``, labelled system)."""
    return Namespace(metadata=ObjectMeta(
        name=constants.execution_namespace(cluster_name),
        labels={constants.KARMADA_SYSTEM_LABEL: constants.KARMADA_SYSTEM_LABEL_VALUE}))


# --------------------------------------------------------------------------- heartbeats


@dataclass(frozen=True, slots=True)
class HealthRecord:
    """What the monitor last heard from a cluster: when, its Ready condition, its lease."""

    probe_timestamp: datetime
    ready: Condition | None
    lease_renew_time: datetime | None = None


@dataclass(frozen=True, slots=True)
class MonitorResult:
    """The record to keep; with ``ready`` set, write it and keep ``written`` once it is stored."""

    record: HealthRecord
    #: the Ready condition to write, or ``None`` when nothing is to be written
    ready: Condition | None = None
    #: the record to keep after ``ready`` was written (a failed write keeps ``record``)
    written: HealthRecord | None = None


@dataclass(frozen=True, slots=True)
class Graces:
    monitor: float
    startup: float
    #: how far back a lease renewal may be credited (one monitor period): the heartbeat counts
    #: from the Lease's ``renewTime``, not from when the monitor happened to see it, so a silent
    #: cluster turns Unknown ``grace`` seconds after its last renewal; a renewTime further in the
    #: past or in the future (clock skew) is clamped into ``[now - skew_window, now]``
    skew_window: float = 0.0


def _unknown(current: Condition | None, now: datetime) -> Condition:
    if current is None:
        return Condition(type=constants.COND_READY, status="Unknown",
                         reason=constants.REASON_CLUSTER_STATUS_NEVER_UPDATED,
                         message=constants.MSG_CLUSTER_STATUS_NEVER_UPDATED, last_transition_time=now)
    if current.status == "Unknown":
        return current
    return current.model_copy(update={"status": "Unknown", "reason": constants.REASON_CLUSTER_STATUS_UNKNOWN,
                                      "message": constants.MSG_CLUSTER_STATUS_UNKNOWN,
                                      "last_transition_time": now})


def deadline(record: HealthRecord, cluster: Cluster, graces: Graces) -> datetime | None:
    """When a silent Pull cluster turns Unknown if nothing renews before (None: not a Pull cluster)."""
    if cluster.spec.sync_mode != constants.SYNC_MODE_PULL:
        return None
    current = conditions.get_condition(cluster.status.conditions, constants.COND_READY)
    if current is not None and current.status == "Unknown":
        return None
    grace = graces.startup if current is None else graces.monitor
    return record.probe_timestamp + timedelta(seconds=grace)


def monitor(record: HealthRecord | None, cluster: Cluster, lease_renew_time: datetime | None,
            now: datetime, graces: Graces) -> MonitorResult:
    """One heartbeat check of ``cluster``; ``lease_renew_time`` is the
    cluster's Lease ``renewTime`` (``None`` when there is no lease)."""
    current = conditions.get_condition(cluster.status.conditions, constants.COND_READY)
    created = cluster.metadata.creation_timestamp or now
    if current is None:
        grace = graces.startup
        observed = Condition(type=constants.COND_READY, status="Unknown", last_transition_time=created)
        if record is None:
            record = HealthRecord(probe_timestamp=created, ready=None)
    else:
        grace = graces.monitor
        observed = current
    if record is None or record.ready != current:
        record = HealthRecord(probe_timestamp=now, ready=current)
    if cluster.spec.sync_mode != constants.SYNC_MODE_PULL:
        return MonitorResult(record)
    if lease_renew_time is not None and (record.lease_renew_time is None
                                         or record.lease_renew_time < lease_renew_time):
        credited = min(now, max(lease_renew_time, now - timedelta(seconds=graces.skew_window)))
        record = HealthRecord(probe_timestamp=credited, ready=record.ready, lease_renew_time=lease_renew_time)
    if now < record.probe_timestamp + timedelta(seconds=grace):
        return MonitorResult(record)
    unknown = _unknown(current, now)
    if current is not None and unknown == observed:
        return MonitorResult(record)
    written = HealthRecord(record.probe_timestamp, unknown, record.lease_renew_time)
    return MonitorResult(record, unknown, written)


__all__ = [
    "NOT_READY_NO_SCHEDULE", "SYSTEM_TAINTS", "UNREACHABLE_NO_SCHEDULE", "Graces", "HealthRecord",
    "MonitorResult", "deadline", "execution_space", "is_system_taint", "monitor", "ready_taint_changes",
    "sync_ready_taints", "taint_diff", "taint_text", "taints_message",
]
