"""Service-name-resolution detector decisions: pure functions of observations and ``now``.

The detector (:mod:`fleetkeeper.agent.detector`) does the lookups and the I/O; what
they mean is decided here, after Karmada's example agent:

* :func:`observed` — one lookup of ``kubernetes.default`` as a condition: ``True``, or
  ``False`` with reason ``ServiceDomainNameResolutionFailed`` and the error.
* :func:`adjusted` — the threshold state machine of the proposal. Its ``detectionFlag``
  is the verdict stored for the node; a lookup that disagrees with it is only believed
  once the disagreement has lasted the *failure* threshold (True → False) or the
  *success* threshold (False → True); a lookup that agrees is taken at once. This is the
  same machine as the cluster-status controller's, so it is that one
  (:func:`~fleetkeeper.controllers.cluster_status_rules.threshold_adjusted`), including
  its guard that a first lookup after a restart cannot take a node out of True without
  waiting the failure threshold.
* :func:`stored` — the node verdict to store: status, reason, message, and Kubernetes'
  node-condition times (``lastHeartbeatTime`` = every detection, ``lastTransitionTime``
  only when the status changes).
* :func:`aggregate` — the leader's cluster verdict: NotReady nodes do not
  vote; a Ready node without a verdict, or with one older than the stale threshold,
  votes ``Unknown``; no votes or any ``Unknown`` → no verdict (nothing is written);
  otherwise the cluster is failing only when *every* vote is ``False``.
* :func:`search_names` — the names a Pod's resolver asks for a short name, in order
  (search list first when the name has fewer dots than ``ndots``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from fleetkeeper.api import conditions, constants
from fleetkeeper.api.base import format_time, parse_time
from fleetkeeper.api.cluster import ClusterStatus
from fleetkeeper.api.meta import Condition, ConditionStatus
from fleetkeeper.controllers.cluster_status_rules import Thresholds, ThresholdState, threshold_adjusted

CONDITION = constants.COND_SERVICE_DOMAIN_NAME_RESOLUTION_READY
#: what a Pod resolves to check its cluster's DNS (``nslookup kubernetes.default``)
HOST = "kubernetes.default"
#: a Pod's resolv.conf search list in namespace ``default`` of a ``cluster.local`` cluster
POD_SEARCH = ("default.svc.cluster.local", "svc.cluster.local", "cluster.local")
POD_NDOTS = 5


@dataclass(frozen=True, slots=True)
class NodeVerdict:
    """What one node's detector concluded, shaped like a ``v1.NodeCondition``."""

    status: ConditionStatus
    reason: str
    message: str
    last_heartbeat_time: datetime
    last_transition_time: datetime

    def condition(self) -> Condition:
        return Condition(type=CONDITION, status=self.status, reason=self.reason, message=self.message,
                         last_transition_time=self.last_transition_time)

    def to_wire(self) -> dict[str, Any]:
        return {"type": CONDITION, "status": self.status, "reason": self.reason, "message": self.message,
                "lastHeartbeatTime": format_time(self.last_heartbeat_time),
                "lastTransitionTime": format_time(self.last_transition_time)}

    @classmethod
    def from_wire(cls, raw: Any) -> NodeVerdict | None:
        """The verdict in a node-condition dict (or its JSON text); None when absent or malformed."""
        try:
            data = json.loads(raw) if isinstance(raw, str) else raw
            if not isinstance(data, Mapping) or data.get("status") not in ("True", "False", "Unknown"):
                return None
            return cls(status=data["status"], reason=str(data.get("reason") or ""),
                       message=str(data.get("message") or ""),
                       last_heartbeat_time=parse_time(str(data["lastHeartbeatTime"])),
                       last_transition_time=parse_time(str(data["lastTransitionTime"])))
        except (KeyError, ValueError, TypeError):
            return None


@dataclass(frozen=True, slots=True)
class NodeReport:
    """One node as the leader sees it: whether it is Ready, and its stored verdict."""

    name: str
    ready: bool
    verdict: NodeVerdict | None
    uid: str = ""


def observed(error: str | None) -> Condition:
    """One lookup's result (``error`` None = it resolved)."""
    if error is None:
        return Condition(type=CONDITION, status="True")
    return Condition(type=CONDITION, status="False",
                     reason=constants.REASON_SERVICE_DOMAIN_NAME_RESOLUTION_FAILED, message=error)


def adjusted(state: ThresholdState | None, current: NodeVerdict | None, seen: Condition, now: datetime,
             thresholds: Thresholds) -> tuple[Condition, ThresholdState]:
    """The verdict to store after a lookup, and the next threshold state (see the module notes)."""
    return threshold_adjusted(state, current.condition() if current else None, seen, now, thresholds)


def stored(current: NodeVerdict | None, verdict: Condition, now: datetime) -> NodeVerdict:
    """The node verdict after storing ``verdict`` at ``now`` (Kubernetes' node-condition rule)."""
    if current is not None and current.status == verdict.status:
        transition = current.last_transition_time
    else:
        transition = verdict.last_transition_time or now
    return NodeVerdict(verdict.status, verdict.reason, verdict.message, now, transition)


def node_ready(node: Mapping[str, Any]) -> bool:
    """Whether a ``v1.Node`` wire object reports ``Ready=True``."""
    for cond in (node.get("status") or {}).get("conditions") or ():
        if isinstance(cond, Mapping) and cond.get("type") == constants.COND_READY:
            return cond.get("status") == "True"
    return False


def verdict_in(node_conditions: Iterable[Any]) -> NodeVerdict | None:
    """The detector's verdict among a node's ``status.conditions``."""
    for cond in node_conditions:
        if isinstance(cond, Mapping) and cond.get("type") == CONDITION:
            return NodeVerdict.from_wire(cond)
    return None


def vote(report: NodeReport, now: datetime, stale: float) -> ConditionStatus | None:
    """A node's say in the cluster verdict; None for a node that is not Ready."""
    if not report.ready:
        return None
    verdict = report.verdict
    if verdict is None or verdict.last_heartbeat_time + timedelta(seconds=stale) < now:
        return "Unknown"
    return verdict.status


def cluster_condition(alarm: bool) -> Condition:
    """The Cluster condition for an alarming (every node failing) or a healthy cluster."""
    if alarm:
        return Condition(type=CONDITION, status="False",
                         reason=constants.REASON_SERVICE_DOMAIN_NAME_RESOLUTION_FAILED,
                         message=constants.MSG_SERVICE_DOMAIN_NAME_RESOLUTION_FAILED)
    return Condition(type=CONDITION, status="True",
                     reason=constants.REASON_SERVICE_DOMAIN_NAME_RESOLUTION_READY,
                     message=constants.MSG_SERVICE_DOMAIN_NAME_RESOLUTION_READY)


def aggregate(reports: Iterable[NodeReport], now: datetime, stale: float) -> Condition | None:
    """The cluster condition the nodes agree on, or None when nothing may be written."""
    votes = [v for v in (vote(r, now, stale) for r in reports) if v is not None]
    if not votes or "Unknown" in votes:
        return None
    return cluster_condition(all(v == "False" for v in votes))


def worth_recording(before: Condition | None, after: Condition) -> bool:
    """Whether a written Cluster condition goes on the timeline: a changed status, or a
    first verdict that is not ``True`` (a healthy first report is no news)."""
    if before is None:
        return after.status != "True"
    return before.status != after.status


def desired_cluster_status(status: ClusterStatus, condition: Condition, now: datetime) -> ClusterStatus:
    """``status`` with the detector's condition set (every other field kept)."""
    return status.model_copy(update={"conditions": conditions.set_condition(status.conditions, condition,
                                                                            now)})


def search_names(host: str, search: Sequence[str] = POD_SEARCH, ndots: int = POD_NDOTS) -> list[str]:
    """Fully qualified names to try for ``host``, in a Pod resolver's order."""
    if host.endswith("."):
        return [host]
    expanded = [f"{host}.{domain.strip('.')}." for domain in search if domain.strip(".")]
    absolute = f"{host}."
    return [*expanded, absolute] if host.count(".") < ndots else [absolute, *expanded]


__all__ = [
    "CONDITION", "HOST", "POD_NDOTS", "POD_SEARCH", "NodeReport", "NodeVerdict", "ThresholdState",
    "Thresholds", "adjusted", "aggregate", "cluster_condition", "desired_cluster_status", "node_ready",
    "observed", "search_names", "stored", "verdict_in", "vote", "worth_recording",
]
