"""Cluster status decisions: what a probe means, when a changed verdict may be written.

Pure functions over API values plus ``now`` (the controller in
:mod:`~fleetkeeper.controllers.cluster_status` does the probing and the writing):

* :func:`health_of` — one probe result (an HTTP status code, or ``None`` for a
  transport error or timeout) as ``online``/``healthy``: a transport error or any status
  outside 200–206 is *offline*, 201–206 is *online but unhealthy*, 200 is healthy.
  :func:`needs_healthz` says when ``/readyz`` is missing (404) and ``/healthz`` must be
  asked instead.
* :func:`observed_ready` — the Ready condition that health implies (reasons and
  messages are Karmada's: ``ClusterNotReachable``, ``ClusterNotReady``, ``ClusterReady``).
* :func:`threshold_adjusted` — the threshold state machine: a verdict that crosses the
  True/not-True boundary against the *stored* condition is written only once the new
  observation has persisted for the success (→True) or failure (→not True) threshold;
  False↔Unknown flips are never delayed.
  The very first observation after a (re)start is not delayed either — with one
  fleetkeeper guard (docs/architecture.md: "a transient probe/client error never bypasses the
  failure threshold"): when that first observation would take a cluster stored as
  Ready out of Ready, it starts the failure window instead of being written at once.
  Karmada writes it immediately, so one failed probe right after a controller restart
  marked a healthy cluster NotReady.
* :func:`desired_status` — the status to write: Ready always; version, API
  enablements (+ ``CompleteAPIEnablements``), node and resource summaries only when
  the cluster was healthy and Ready.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from fleetkeeper.api import conditions, constants
from fleetkeeper.api.cluster import APIEnablement, ClusterStatus, NodeSummary, ResourceSummary
from fleetkeeper.api.meta import Condition, ConditionStatus
from fleetkeeper.members.interface import ClusterSummary

READY = constants.COND_READY


@dataclass(frozen=True, slots=True)
class Health:
    """What one probe says about a member."""

    online: bool
    healthy: bool


OFFLINE = Health(online=False, healthy=False)


def needs_healthz(readyz_code: int | None) -> bool:
    """``/readyz`` is not installed (404): ask ``/healthz`` instead."""
    return readyz_code == 404


def health_of(code: int | None) -> Health:
    """The health a final probe answer means (``None`` = transport error or timeout)."""
    if code is None or not 200 <= code <= 206:
        return OFFLINE
    return Health(online=True, healthy=code == 200)


def observed_ready(health: Health) -> Condition:
    """The Ready condition a probe observed (Karmada's reasons and messages)."""
    if not health.online:
        return Condition(type=READY, status="False", reason=constants.REASON_CLUSTER_NOT_REACHABLE,
                         message=constants.MSG_CLUSTER_NOT_REACHABLE)
    if not health.healthy:
        return Condition(type=READY, status="False", reason=constants.REASON_CLUSTER_NOT_READY,
                         message=constants.MSG_CLUSTER_NOT_READY)
    return Condition(type=READY, status="True", reason=constants.REASON_CLUSTER_READY,
                     message=constants.MSG_CLUSTER_READY)


def collection_failed(error: str) -> Condition:
    """Ready=False when no client for the member could be built."""
    return Condition(type=READY, status="False", reason=constants.REASON_STATUS_COLLECTION_FAILED,
                     message=f"failed to create a ClusterClient: {error}")


@dataclass(frozen=True, slots=True)
class ThresholdState:
    """The last observed Ready status of one cluster and since when it has been observed.

    ``since`` is ``None`` for an observation that needs no delay (the first one after a
    start); comparisons then treat the threshold as already elapsed.
    """

    observed: ConditionStatus
    since: datetime | None


@dataclass(frozen=True, slots=True)
class Thresholds:
    success: float
    failure: float


def threshold_adjusted(state: ThresholdState | None, current: Condition | None, observed: Condition,
                       now: datetime, thresholds: Thresholds) -> tuple[Condition, ThresholdState]:
    """The Ready condition to write and the next threshold state (see the module notes)."""
    observed_true = observed.status == "True"
    if state is None:
        if current is not None and current.status == "True" and not observed_true:
            return current, ThresholdState(observed.status, now)
        return observed, ThresholdState(observed.status, None)
    if current is None:
        return observed, state
    if state.observed != observed.status:
        state = ThresholdState(observed.status, now)
    threshold = thresholds.success if observed_true else thresholds.failure
    crosses = observed_true != (current.status == "True")
    if crosses and state.since is not None and now < state.since + timedelta(seconds=threshold):
        return current, state
    return observed, state


def collects_summary(health: Health, ready: Condition) -> bool:
    """Version, APIs and capacity are collected only from a healthy member held Ready."""
    return health.online and health.healthy and ready.status == "True"


def api_enablements(raw: list[dict[str, Any]]) -> list[APIEnablement]:
    """Discovered APIs as Karmada stores them: subresources dropped, resources sorted by
    name, groups sorted by groupVersion, empty groups left out."""
    out: list[APIEnablement] = []
    for group in raw:
        resources = [r for r in group.get("resources") or () if "/" not in str(r.get("name", ""))]
        if not resources:
            continue
        resources.sort(key=lambda r: str(r.get("name", "")))
        out.append(APIEnablement.from_dict({"groupVersion": group["groupVersion"], "resources": resources}))
    out.sort(key=lambda g: g.group_version)
    return out


def api_enablements_condition(enablements: list[APIEnablement]) -> Condition:
    """``CompleteAPIEnablements``: ``Empty`` when nothing was discovered, else ``Complete``."""
    if not enablements:
        return Condition(type=constants.COND_COMPLETE_API_ENABLEMENTS, status="False",
                         reason=constants.REASON_API_ENABLEMENTS_EMPTY,
                         message=constants.MSG_API_ENABLEMENTS_EMPTY)
    return Condition(type=constants.COND_COMPLETE_API_ENABLEMENTS, status="True",
                     reason=constants.REASON_API_ENABLEMENTS_COMPLETE,
                     message=constants.MSG_API_ENABLEMENTS_COMPLETE)


def reachable(observed: Condition) -> Condition:
    """fleetkeeper's ``fleetkeeper.io/Reachable`` condition: the latest probe verdict as
    observed, without the thresholds (Ready keeps Karmada's thresholded meaning)."""
    return observed.model_copy(update={"type": constants.COND_REACHABLE, "last_transition_time": None})


def desired_status(status: ClusterStatus, ready: Condition, summary: ClusterSummary | None,
                   now: datetime, *, observed: Condition | None = None) -> ClusterStatus:
    """``status`` with the Ready condition set and, given a summary, the collected facts;
    with ``observed``, the un-thresholded ``fleetkeeper.io/Reachable`` condition too.

    Other condition types (``ServiceDomainNameResolutionReady`` …) and the remedy
    actions are kept: only named fields are set on the freshly read status.
    """
    current = status.conditions
    if observed is not None:
        current = conditions.set_condition(current, reachable(observed), now)
    update: dict[str, Any] = {"conditions": conditions.set_condition(current, ready, now)}
    if summary is not None:
        enablements = api_enablements(summary.api_enablements)
        update["conditions"] = conditions.set_condition(
            update["conditions"], api_enablements_condition(enablements), now)
        update["kubernetes_version"] = summary.kubernetes_version or None
        update["api_enablements"] = enablements or None
        update["node_summary"] = NodeSummary.from_dict(summary.node_summary) if summary.node_summary else None
        update["resource_summary"] = (ResourceSummary.from_dict(summary.resource_summary)
                                      if summary.resource_summary else None)
    return status.model_copy(update=update)


def ready_changed(before: Condition | None, after: Condition) -> bool:
    """Whether the Ready verdict (status or reason) changed — what the timeline records."""
    return before is None or (before.status, before.reason) != (after.status, after.reason)


def ready_text(ready: Condition) -> str:
    """``Ready=False (ClusterNotReachable)`` — a Ready verdict as the timeline prints it."""
    return f"{ready.type}={ready.status} ({ready.reason})" if ready.reason else f"{ready.type}={ready.status}"


__all__ = [
    "OFFLINE",
    "READY",
    "Health",
    "ThresholdState",
    "Thresholds",
    "api_enablements",
    "api_enablements_condition",
    "collection_failed",
    "collects_summary",
    "desired_status",
    "health_of",
    "needs_healthz",
    "observed_ready",
    "reachable",
    "ready_changed",
    "ready_text",
    "threshold_adjusted",
]
