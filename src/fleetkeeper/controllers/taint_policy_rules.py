"""ClusterTaintPolicy decisions: which taints a cluster's conditions call for.

Pure functions, table-tested; the reconciler in
:mod:`~fleetkeeper.controllers.taint_policy` reads and writes.

* :func:`condition_matches` — every match condition must hold (AND); a condition type
  the cluster does not have fails both ``In`` and ``NotIn``; an unknown operator fails
  the whole match; an empty list never matches.
* :func:`apply_policies` — policies in a deterministic order (creation time, then name:
  Karmada leaves ties unordered), cumulatively on one taint list: when
  ``addOnConditions`` match, each policy taint missing by key+effect is appended with
  ``timeAdded = now``; when ``removeOnConditions`` match, the first taint with the same
  key+effect is removed. An existing taint is never refreshed (its ``timeAdded`` is what
  toleration deadlines count from). Clusters outside ``targetClusters`` keep their taints.
* **System taints are not a policy's to touch** (docs/architecture.md, Failover safety): ``not-ready`` and
  ``unreachable`` with effect ``NoSchedule`` belong to the cluster controller, which
  keeps them in step with Ready; a policy naming them is ignored for those entries, so
  the two controllers never fight over one taint.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

from fleetkeeper.api import constants, matching, taints
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.core import Taint
from fleetkeeper.api.meta import Condition
from fleetkeeper.api.taintpolicy import ClusterTaintPolicy, MatchCondition, PolicyTaint

_EPOCH = datetime.min.replace(tzinfo=UTC)
#: (key, effect) of the cluster controller's taints
SYSTEM_TAINTS = frozenset({(constants.TAINT_CLUSTER_NOT_READY, constants.EFFECT_NO_SCHEDULE),
                           (constants.TAINT_CLUSTER_UNREACHABLE, constants.EFFECT_NO_SCHEDULE)})


def is_system_taint(taint: taints.AnyTaint) -> bool:
    """Whether ``taint`` is one the cluster controller owns (by key and effect)."""
    return (taint.key, taint.effect) in SYSTEM_TAINTS


def condition_matches(conditions: Sequence[Condition] | None,
                      matches: Sequence[MatchCondition] | None) -> bool:
    """Whether every match condition holds on ``conditions`` (empty list: never)."""
    if not matches:
        return False
    by_type = {c.type: c.status for c in conditions or ()}
    for match in matches:
        status = by_type.get(match.condition_type)
        if status is None:
            return False
        if match.operator == "In":
            if status not in match.status_values:
                return False
        elif match.operator == "NotIn":
            if status in match.status_values:
                return False
        else:
            return False
    return True


@dataclass(frozen=True, slots=True)
class Change:
    """One taint a policy added or removed."""

    action: Literal["added", "removed"]
    taint: Taint
    policy: str


@dataclass(frozen=True, slots=True)
class Outcome:
    """The taints after the policies, and what each policy changed (in order)."""

    taints: list[Taint]
    changes: list[Change] = field(default_factory=list)


def add_taints(current: Sequence[Taint], wanted: Iterable[PolicyTaint], now: datetime) -> list[Taint]:
    """``current`` plus each wanted taint it lacks (by key and effect), stamped ``now``."""
    out = list(current)
    for taint in wanted:
        if is_system_taint(taint) or taints.taint_exists(out, taint):
            continue
        out.append(Taint(key=taint.key, value=taint.value, effect=taint.effect, time_added=now))
    return out


def remove_taints(current: Sequence[Taint], unwanted: Iterable[PolicyTaint]) -> list[Taint]:
    """``current`` without the first taint matching each unwanted one (system taints stay)."""
    out = list(current)
    for taint in unwanted:
        if is_system_taint(taint):
            continue
        for i, have in enumerate(out):
            if taints.same_taint(have, taint):
                del out[i]
                break
    return out


def ordered(policies: Iterable[ClusterTaintPolicy]) -> list[ClusterTaintPolicy]:
    """Policies by creation time, ties broken by name."""
    return sorted(policies, key=lambda p: (p.metadata.creation_timestamp or _EPOCH, p.name))


def targets(policy: ClusterTaintPolicy, cluster: Cluster) -> bool:
    """Whether ``policy`` applies to ``cluster`` (no ``targetClusters`` = every cluster)."""
    affinity = policy.spec.target_clusters
    return affinity is None or matching.cluster_matches(affinity, cluster)


def apply_policies(cluster: Cluster, policies: Iterable[ClusterTaintPolicy], now: datetime) -> Outcome:
    """The cluster's taints after every policy that targets it had its say."""
    current = list(cluster.spec.taints or ())
    conds = cluster.status.conditions
    changes: list[Change] = []
    for policy in ordered(policies):
        if not targets(policy, cluster):
            continue
        before = current
        if condition_matches(conds, policy.spec.add_on_conditions):
            current = add_taints(current, policy.spec.taints, now)
        if condition_matches(conds, policy.spec.remove_on_conditions):
            current = remove_taints(current, policy.spec.taints)
        changes += [Change("added", t, policy.name) for t in current if not taints.taint_exists(before, t)]
        changes += [Change("removed", t, policy.name) for t in before if not taints.taint_exists(current, t)]
    return Outcome(current, changes)


def taints_message(current: Sequence[Taint] | None) -> str:
    """``cluster now has taints([{Key:k,Effect:e},{Key:k,Value:v,Effect:e}])``."""
    if not current:
        return "cluster now does not have taints"
    parts = [f"{{Key:{t.key}{f',Value:{t.value}' if t.value else ''},Effect:{t.effect}}}" for t in current]
    return f"cluster now has taints([{','.join(parts)}])"


__all__ = [
    "SYSTEM_TAINTS", "Change", "Outcome", "add_taints", "apply_policies", "condition_matches",
    "is_system_taint", "ordered", "remove_taints", "taints_message", "targets",
]
