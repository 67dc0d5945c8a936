"""Taint-manager decisions: which bindings leave a NoExecute-tainted cluster, and when.

Pure functions over API values plus ``now``, table-tested; the controller
in :mod:`~fleetkeeper.controllers.taint_manager` does the I/O.

* **Toleration arithmetic**: :func:`matching_tolerations` picks, per NoExecute
  taint, the first toleration that tolerates it; :func:`min_toleration_time` is the
  time left until the earliest ``timeAdded + tolerationSeconds`` — ``0`` when it has
  passed, ``FOREVER`` (−1) when no used toleration has ``tolerationSeconds`` (tolerate
  forever). ``tolerationSeconds: 0`` means "evict now".
* :func:`decide` — one binding on one cluster: evict now, after a delay, or never.
  Tolerations come from the **applied** placement (what the scheduler last used).
  A binding never scheduled (no applied placement) is not evicted: it has nothing on
  the cluster yet (Karmada retries it forever with backoff).
* :func:`plan` — every target cluster of a binding at once: which to evict now and
  when to look again.
* :func:`purge_mode` — the binding's ``failover.cluster.purgeMode``, else the option.
* :func:`evict_clusters` — a binding's spec without the clusters to evict and with their
  tasks, each carrying the state ``failover.cluster.statePreservation`` preserves; a cluster
  whose state cannot be read yet is left for a retry.
* :func:`breaker` — the partition circuit breaker (docs/architecture.md, Failover safety): evictions pause
  while more than ``threshold`` of the clusters are not Ready, because when most of
  the fleet "fails" at once the likelier story is that the control plane lost its
  network, and moving every workload would only make things worse.
* :func:`pacing_delay` — ``resource_eviction_rate`` (evictions per second per worker;
  0 = unthrottled).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Literal

from fleetkeeper.api import conditions, constants, taints
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.core import Taint, Toleration
from fleetkeeper.api.policy import FailoverBehavior
from fleetkeeper.api.work import BindingSuspension, ResourceBindingSpec, ResourceBindingStatus
from fleetkeeper.controllers import eviction_rules as evictions
from fleetkeeper.controllers import state_preservation as state

#: ``min_toleration_time`` of a taint tolerated forever
FOREVER = -1.0


def no_execute_taints(cluster: Cluster) -> list[Taint]:
    """The cluster's NoExecute taints, in order."""
    return [t for t in cluster.spec.taints or () if t.effect == constants.EFFECT_NO_EXECUTE]


def matching_tolerations(found: Sequence[Taint], tolerations: Sequence[Toleration]
                         ) -> tuple[bool, list[Toleration]]:
    """(all tolerated?, the first tolerating toleration of each taint)."""
    if not found:
        return True, []
    if not tolerations:
        return False, []
    used: list[Toleration] = []
    for taint in found:
        match = next((t for t in tolerations if taints.tolerates(t, taint)), None)
        if match is None:
            return False, []
        used.append(match)
    return True, used


def min_toleration_time(found: Sequence[Taint], used: Sequence[Toleration], now: datetime) -> float:
    """Seconds until the earliest toleration expires: 0 = now, ``FOREVER`` = never."""
    if not found:
        return FOREVER
    if not used:
        return 0.0
    triggers = [taint.time_added + timedelta(seconds=toleration.toleration_seconds)
                for toleration in used if toleration.toleration_seconds is not None
                for taint in found if taint.time_added is not None and taints.tolerates(toleration, taint)]
    if not triggers:
        return FOREVER
    return max(0.0, (min(triggers) - now).total_seconds())


Action = Literal["now", "later", "never"]


@dataclass(frozen=True, slots=True)
class Decision:
    """Evict ``now``, ``later`` (after ``delay`` seconds) or ``never``; ``why`` says so."""

    action: Action
    delay: float = 0.0
    why: str = ""


NEVER = Decision("never")
#: every NoExecute taint of the cluster is tolerated without a time limit
TOLERATED_FOREVER = Decision("never", why="tolerated forever")


def decide(found: Sequence[Taint], tolerations: Sequence[Toleration] | None, now: datetime) -> Decision:
    """Whether a binding with these applied tolerations leaves a cluster with these NoExecute taints."""
    if not found or tolerations is None:
        return NEVER
    tolerated, used = matching_tolerations(found, tolerations)
    if not tolerated:
        untolerated = taints.untolerated_taints(found, tolerations)
        names = ", ".join(f"{t.key}:{t.effect}" for t in untolerated)
        return Decision("now", why=f"untolerated taint {names}")
    left = min_toleration_time(found, used, now)
    if left == FOREVER:
        return TOLERATED_FOREVER
    if left == 0:
        return Decision("now", why="toleration expired")
    return Decision("later", delay=left, why="tolerated for now")


@dataclass(frozen=True, slots=True)
class Plan:
    """For one binding: the clusters to evict now and when to look again (``None``: no need)."""

    evict: list[str]
    retry_after: float | None


def plan(targets: Iterable[str], cluster_of: Callable[[str], Cluster | None],
         tolerations: Sequence[Toleration] | None, now: datetime) -> Plan:
    """Decide every target cluster of a binding (``cluster_of`` looks a cluster up by name)."""
    evict: list[str] = []
    delays: list[float] = []
    for name in targets:
        cluster = cluster_of(name)
        if cluster is None:
            continue
        decision = decide(no_execute_taints(cluster), tolerations, now)
        if decision.action == "now":
            evict.append(name)
        elif decision.action == "later":
            delays.append(decision.delay)
    return Plan(evict, min(delays) if delays else None)


def dispatch_held(suspension: BindingSuspension | None) -> bool:
    """Evictions wait while the binding's dispatching is suspended (``dispatching: true``):
    a replacement could not be dispatched, and an eviction would only strand the workload.
    Per-cluster suspension does not hold them: the graceful-eviction rules keep
    the old copy until a replacement is dispatched and healthy."""
    return bool(suspension is not None and suspension.dispatching)


def purge_mode(failover: FailoverBehavior | None, default: str) -> str:
    """``failover.cluster.purgeMode`` (empty → Gracefully), else the option (only ``Directly`` counts)."""
    if failover is not None and failover.cluster is not None:
        return failover.cluster.purge_mode or constants.PURGE_GRACEFULLY
    return constants.PURGE_DIRECTLY if default == constants.PURGE_DIRECTLY else constants.PURGE_GRACEFULLY


def evict_clusters(spec: ResourceBindingSpec, status: ResourceBindingStatus, names: Iterable[str],
                   options: evictions.TaskOptions) -> tuple[ResourceBindingSpec, list[str], dict[str, str]]:
    """(``spec`` with ``names`` evicted, the clusters evicted, the clusters left → why).

    Without state-preservation rules every cluster is evicted. With them each task carries
    the labels read from its cluster's reported status; a cluster that has reported nothing
    the rules can read is left (Karmada retries such an eviction too)."""
    preserving = bool(state.cluster_rules(spec))
    out, evicted, waiting = spec, [], {}
    for name in names:
        if preserving:
            try:
                kept = state.preserved_on_taint(spec, status, name)
            except state.ExtractionError as exc:
                waiting[name] = str(exc)
                continue
            options = replace(options, preserved_label_state=kept)
        out = evictions.graceful_evict_cluster(out, name, options)
        evicted.append(name)
    return out, evicted, waiting


@dataclass(frozen=True, slots=True)
class Breaker:
    """The partition circuit breaker's reading."""

    open: bool
    not_ready: int
    total: int
    threshold: float

    def message(self) -> str:
        share = self.not_ready / self.total if self.total else 0.0
        return (f"evictions paused: {self.not_ready} of {self.total} clusters are not Ready or failing "
                f"their probes ({share:.0%} > {self.threshold:.0%}); suspecting a partition of the "
                f"control plane")


def failing(cluster: Cluster) -> bool:
    """Not Ready, or Ready but already failing its probes (``fleetkeeper.io/Reachable=False``):
    clusters that fail together cross their failure thresholds up to a probe period apart,
    so the breaker must see the ones still inside the threshold too."""
    conds = cluster.status.conditions
    if not conditions.is_condition_true(conds, constants.COND_READY):
        return True
    reach = conditions.get_condition(conds, constants.COND_REACHABLE)
    return reach is not None and reach.status == "False"


def breaker(clusters: Iterable[Cluster], threshold: float) -> Breaker:
    """Open while more than ``threshold`` of the (non-deleting) clusters are :func:`failing`
    (0 disables)."""
    live = [c for c in clusters if c.metadata.deletion_timestamp is None]
    not_ready = sum(1 for c in live if failing(c))
    total = len(live)
    tripped = threshold > 0 and total > 0 and not_ready / total > threshold
    return Breaker(tripped, not_ready, total, threshold)


def pacing_delay(rate: float) -> float:
    """Seconds a worker pauses after an eviction (``rate`` per second; 0 = no pause)."""
    return 1.0 / rate if rate > 0 else 0.0


def eviction_text(cluster: str, reason: str, mode: str) -> str:
    """``evicted from member1 (TaintUntolerated, Gracefully)``."""
    return f"evicted from {cluster} ({reason}, {mode})"


__all__ = [
    "FOREVER", "NEVER", "Breaker", "Decision", "Plan", "breaker", "decide", "dispatch_held", "evict_clusters",
    "eviction_text", "failing",
    "matching_tolerations", "min_toleration_time", "no_execute_taints", "pacing_delay", "plan", "purge_mode",
]
