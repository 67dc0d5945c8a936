"""Remedy decisions: which Remedies concern a cluster, whether they fire, what they ask for.

Pure functions over API values (the controller in :mod:`~fleetkeeper.controllers.remedy`
reads the caches and writes). Karmada's semantics, nil and empty
kept apart on purpose:

* :func:`works_on_cluster` — an absent ``clusterAffinity`` selects every cluster; a
  present one selects only the names it lists, so ``clusterAffinity: {}`` selects none.
* :func:`decision_matches` — absent ``decisionMatches`` fire at once (an "immediate"
  Remedy, e.g. drain traffic before an upgrade); an explicit empty list never fires; a
  cluster without conditions never matches; entries are ORed; an entry matches when the
  cluster has a condition of that type whose status is ``Equal`` / ``NotEqual`` to the
  wanted one (a missing condition type matches neither operator).
* :func:`calculate_actions` — the sorted, de-duplicated union of the actions of every
  related Remedy that fires; ``None`` when there are none (the field is then omitted).
* :func:`clusters_of_remedy_change` — which clusters a Remedy event wakes: the listed
  names, or every cluster when either side of the change has no ``clusterAffinity``.

fleetkeeper addition: :func:`firing` names the Remedies that fire, so the timeline can
say *which* Remedy put an action on a cluster (the question the proposal left open).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.meta import Condition
from fleetkeeper.api.remedy import DecisionMatch, Remedy


def works_on_cluster(remedy: Remedy, cluster: str) -> bool:
    """Whether ``remedy`` concerns ``cluster`` (absent affinity = all, ``{}`` = none)."""
    affinity = remedy.spec.cluster_affinity
    if affinity is None:
        return True
    return cluster in (affinity.cluster_names or ())


def decision_matches(matches: Sequence[DecisionMatch] | None, conditions: Sequence[Condition] | None) -> bool:
    """Whether the decision matches hold on a cluster with ``conditions`` (see the module notes)."""
    if matches is None:
        return True
    if not conditions:
        return False
    by_type = {c.type: c.status for c in conditions}
    for match in matches:
        requirement = match.cluster_condition_match
        if requirement is None:
            continue
        status = by_type.get(requirement.condition_type)
        if status is None:
            continue
        equal = status == requirement.condition_status
        if equal == (requirement.operator == "Equal"):
            return True
    return False


def related(remedies: Iterable[Remedy], cluster: str) -> list[Remedy]:
    """The Remedies that concern ``cluster``, by name."""
    return sorted((r for r in remedies if works_on_cluster(r, cluster)), key=lambda r: r.name)


def firing(remedies: Iterable[Remedy], cluster: Cluster) -> list[Remedy]:
    """The related Remedies whose decision matches hold on ``cluster`` now, by name."""
    return [r for r in related(remedies, cluster.name)
            if decision_matches(r.spec.decision_matches, cluster.status.conditions)]


def calculate_actions(remedies: Iterable[Remedy], cluster: Cluster) -> list[str] | None:
    """``status.remedyActions`` for ``cluster``: sorted, unique, ``None`` when empty."""
    actions = {action for remedy in firing(remedies, cluster) for action in remedy.spec.actions or ()}
    return sorted(actions) or None


def same_actions(a: Sequence[str] | None, b: Sequence[str] | None) -> bool:
    """Whether two action lists hold the same set (order and repeats do not matter)."""
    return set(a or ()) == set(b or ())


def cluster_wakes(old: Cluster | None, new: Cluster | None) -> bool:
    """Cluster events the controller acts on: a new cluster, changed conditions, or remedy
    actions that no longer are the set this controller wrote (someone else edited them).

    Karmada ignores creations; taking them costs one no-op reconcile and makes an
    immediate Remedy apply to a cluster that joins after it without waiting for the
    cluster's first condition.
    """
    if new is None:
        return False
    if old is None:
        return True
    return (old.status.conditions != new.status.conditions
            or not same_actions(old.status.remedy_actions, new.status.remedy_actions))


def clusters_of_remedy_change(old: Remedy | None, new: Remedy | None, clusters: Iterable[str]) -> list[str]:
    """The clusters a Remedy created (``old`` None), changed or deleted (``new`` None) may
    affect: every cluster when a side has no ``clusterAffinity``, else the listed names."""
    sides = [r for r in (old, new) if r is not None]
    names: set[str] = set()
    for remedy in sides:
        affinity = remedy.spec.cluster_affinity
        if affinity is None:
            return sorted(set(clusters))
        names.update(affinity.cluster_names or ())
    return sorted(names)


def actions_text(actions: Sequence[str] | None, remedies: Sequence[Remedy]) -> str:
    """``remedy actions [TrafficControl] by Remedy dns-broken`` / ``remedy actions cleared``."""
    if not actions:
        return "remedy actions cleared"
    names = ", ".join(r.name for r in remedies if r.spec.actions)
    return f"remedy actions [{', '.join(actions)}] by Remedy {names}"


__all__ = [
    "actions_text", "calculate_actions", "cluster_wakes", "clusters_of_remedy_change", "decision_matches",
    "firing", "related", "same_actions", "works_on_cluster",
]
