"""State preservation for failover: extract state from the failed copy, inject it into the new one.

A stateful workload (a Flink job, a batch run) can resume elsewhere only if the new copy
learns what the old one was doing. A ``statePreservation`` rule names a label
(``aliasLabelName``) and a Kubernetes JSONPath (``jsonPath``) evaluated against the
*reflected status* of the failed cluster (``status.aggregatedStatus[cluster].status``,
so ``{ .jobId }`` reads the status field ``jobId``; see :mod:`fleetkeeper.api.jsonpath`
for the syntax and for why ``1734462491693`` becomes ``1.734462491693e+12``). At
eviction the values are stored in the eviction task (``preservedLabelState``, with
``clustersBeforeFailover``); the binding controller then injects them as labels into
the manifest of every *new* cluster. Both steps are
pure functions here:

* :func:`preserved_label_state` — every rule evaluated, or :class:`ExtractionError`
  naming the rule (Karmada aborts the eviction attempt and retries; so do we);
* :func:`preserved_for` — what an application-failover eviction preserves: the failed
  copy's status, or — when that copy never got Healthy — the state it was started with;
* :func:`preserved_on_taint` — what a cluster-failover (taint-manager) eviction preserves under
  ``failover.cluster.statePreservation``: the failed cluster's status, as in Karmada (no
  ``clustersBeforeFailover`` is recorded);
* :func:`labels_to_inject` — Karmada's injection rules: a single target cluster, the
  *last* task, purge mode ``Directly``, and a cluster that is not one of the task's
  ``clustersBeforeFailover``; :func:`inject` merges them into a manifest.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fleetkeeper.api import constants
from fleetkeeper.api.jsonpath import JSONPathError, evaluate
from fleetkeeper.api.policy import StatePreservationRule
from fleetkeeper.api.work import ResourceBindingSpec, ResourceBindingStatus


class ExtractionError(ValueError):
    """A state-preservation rule could not be evaluated (the eviction is retried)."""


# --------------------------------------------------------------------------- the failover rules


def preserved_label_state(rules: Sequence[StatePreservationRule],
                          status: Mapping[str, Any] | None) -> dict[str, str]:
    """``aliasLabelName → value`` for every rule over a reflected status; ExtractionError otherwise."""
    if not status:
        raise ExtractionError("the failed cluster has reported no status to preserve state from")
    out: dict[str, str] = {}
    for rule in rules:
        try:
            out[rule.alias_label_name] = evaluate(rule.json_path, status)
        except JSONPathError as exc:
            raise ExtractionError(f"state preservation rule {rule.alias_label_name} "
                                  f"(jsonPath {rule.json_path!r}): {exc}") from None
    return out


def _target_count(spec: ResourceBindingSpec) -> int:
    names = {t.name for t in spec.clusters or ()}
    for snapshot in spec.required_by or ():
        names.update(t.name for t in snapshot.clusters or ())
    return len(names)


def labels_to_inject(spec: ResourceBindingSpec, cluster: str) -> dict[str, str]:
    """The preserved labels the manifest for ``cluster`` carries, else ``{}``."""
    tasks = spec.graceful_eviction_tasks or ()
    if _target_count(spec) > 1 or not tasks:
        return {}
    last = tasks[-1]
    if last.purge_mode != constants.PURGE_DIRECTLY or cluster in (last.clusters_before_failover or ()):
        return {}
    return dict(last.preserved_label_state or {})


def _reported(status: ResourceBindingStatus, cluster: str) -> Mapping[str, Any] | None:
    item = next((i for i in status.aggregated_status or () if i.cluster_name == cluster), None)
    return item.status if item is not None else None


def cluster_rules(spec: ResourceBindingSpec) -> list[StatePreservationRule]:
    """``failover.cluster.statePreservation.rules`` ([] when there are none)."""
    behavior = spec.failover.cluster if spec.failover is not None else None
    preservation = behavior.state_preservation if behavior is not None else None
    return list(preservation.rules) if preservation is not None else []


def preserved_on_taint(spec: ResourceBindingSpec, status: ResourceBindingStatus,
                       cluster: str) -> dict[str, str]:
    """The labels to preserve when the taint-manager evicts ``cluster`` ({} without rules);
    ExtractionError while the cluster has reported nothing the rules can read."""
    rules = cluster_rules(spec)
    if not rules:
        return {}
    return preserved_label_state(rules, _reported(status, cluster))


def preserved_for(spec: ResourceBindingSpec, status: ResourceBindingStatus, cluster: str, *,
                  ran_healthy: bool) -> dict[str, str]:
    """The labels to preserve when application failover evicts ``cluster`` ({} without rules).

    Normally what the cluster's reflected status says. But a copy that never got Healthy
    there (``ran_healthy`` False) never resumed the job: its status describes a job that
    did not run, so the labels it was started with — the state injected into it by the
    previous failover — are carried on instead, and a second failover in a row does not
    lose the original state."""
    app = spec.failover.application if spec.failover is not None else None
    rules = app.state_preservation.rules if app is not None and app.state_preservation is not None else []
    if not rules:
        return {}
    inherited = labels_to_inject(spec, cluster)
    if inherited and not ran_healthy:
        return inherited
    return preserved_label_state(rules, _reported(status, cluster))


def inject(manifest: dict[str, Any], labels: Mapping[str, str]) -> dict[str, Any]:
    """``manifest`` with ``labels`` merged into its labels (a copy; ``manifest`` itself when none)."""
    if not labels:
        return manifest
    meta = dict(manifest.get("metadata") or {})
    meta["labels"] = {**(meta.get("labels") or {}), **labels}
    return {**manifest, "metadata": meta}


__all__ = [
    "ExtractionError", "cluster_rules", "inject", "labels_to_inject", "preserved_for",
    "preserved_label_state", "preserved_on_taint",
]
