"""The workload-rebalancer controller's decisions, as pure functions (Karmada's rules).

* **which workloads** — ``status.observedWorkloads`` follows ``spec.workloads``: a listed
  workload keeps its result, a new one starts without; one no longer listed is kept only
  if it was rebalanced (``Successful``), as a record of what was done. The list is sorted
  by apiVersion, kind, namespace and name;
* **whether to ask again** — a binding is asked to reschedule unless its
  ``rescheduleTriggeredAt`` is already at or after the rebalancer's creation;
* **finishing** — ``finishTime`` is stamped when the status changed and nothing waits for
  a retry; with ``ttlSecondsAfterFinished`` the rebalancer goes that long after it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from fleetkeeper.api.apps import ObjectReference, ObservedWorkload


def observed_workloads(spec: Sequence[ObjectReference],
                       observed: Sequence[ObservedWorkload]) -> list[ObservedWorkload]:
    """The status list for ``spec``: kept results, new workloads without one, sorted."""
    wanted = {w.sort_key(): w for w in spec}
    out: list[ObservedWorkload] = []
    for item in observed:
        key = item.workload.sort_key()
        if key in wanted:
            out.append(item)
            del wanted[key]
        elif item.result == "Successful":
            out.append(item)
    out.extend(ObservedWorkload(workload=w) for w in wanted.values())
    return sorted(out, key=lambda item: item.workload.sort_key())


def needs_trigger(created: datetime | None, triggered_at: datetime | None) -> bool:
    """Whether a binding last asked to reschedule at ``triggered_at`` must be asked again."""
    return triggered_at is None or (created is not None and created > triggered_at)


def time_left(finish_time: datetime | None, ttl_seconds: int | None, now: datetime) -> float | None:
    """Seconds until a finished rebalancer goes (<= 0: now); None when it stays."""
    if ttl_seconds is None or finish_time is None:
        return None
    return (finish_time + timedelta(seconds=ttl_seconds) - now).total_seconds()


__all__ = ["needs_trigger", "observed_workloads", "time_left"]
