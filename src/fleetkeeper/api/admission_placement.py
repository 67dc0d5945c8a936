"""Admission rules for ``Placement`` and ``ClusterAffinity`` (shared by every policy kind).

Defaulting (Karmada's policy mutating webhook): a spread constraint with neither
``spreadByField`` nor ``spreadByLabel`` spreads by ``cluster``; ``minGroups: 0`` becomes
1; ``Divided`` replica scheduling without a division preference becomes ``Weighted``.

Validation (Karmada's ``ValidatePlacement``): ``clusterAffinity`` and
``clusterAffinities`` are exclusive; field selectors use keys provider/region/zone and
operators In/NotIn; affinity names are qualified names, unique, and overflow affinities
only go with dynamic replica division and a non-empty inline affinity; spread constraints
are consistent; tolerations use ``Equal`` or ``Exists``; workload-affinity keys are label
keys that differ.
"""

from __future__ import annotations

from collections.abc import Sequence

from fleetkeeper import errors
from fleetkeeper.api import selectors, validation
from fleetkeeper.api.core import Toleration
from fleetkeeper.api.meta import LabelSelector
from fleetkeeper.api.placement import (
    ClusterAffinity,
    ClusterAffinityTerm,
    Placement,
    ReplicaSchedulingStrategy,
    SpreadConstraint,
    WorkloadAffinity,
)
from fleetkeeper.api.validation import FieldErrors

_FIELD_KEYS = ("provider", "region", "zone")
_TOLERATION_OPERATORS = ("", "Equal", "Exists")


def default_placement(placement: Placement) -> None:
    """Apply the webhook defaults to ``placement`` in place."""
    for constraint in placement.spread_constraints or ():
        if not constraint.spread_by_field and not constraint.spread_by_label:
            constraint.spread_by_field = "cluster"
        if constraint.min_groups == 0:
            constraint.min_groups = 1
    strategy = placement.replica_scheduling
    if strategy is not None and strategy.replica_scheduling_type == "Divided" \
            and not strategy.replica_division_preference:
        strategy.replica_division_preference = "Weighted"


def validate_label_selector(selector: LabelSelector | None, path: str, errs: FieldErrors) -> None:
    """A label selector must convert to requirements (values only with In/NotIn, valid keys)."""
    if selector is None:
        return
    try:
        selectors.selector_requirements(selector)
    except errors.BadRequest as exc:
        errs.invalid(path, None, exc.message)


def validate_cluster_affinity(affinity: ClusterAffinity | None, path: str, errs: FieldErrors) -> None:
    if affinity is None:
        return
    validate_label_selector(affinity.label_selector, f"{path}.labelSelector", errs)
    if affinity.field_selector is None:
        return
    for i, expr in enumerate(affinity.field_selector.match_expressions or ()):
        expr_path = f"{path}.fieldSelector.matchExpressions[{i}]"
        if expr.key not in _FIELD_KEYS:
            errs.not_supported(f"{expr_path}.key", expr.key, _FIELD_KEYS)
        if expr.operator not in ("In", "NotIn"):
            errs.not_supported(f"{expr_path}.operator", expr.operator, ("In", "NotIn"))


def _is_empty_affinity(affinity: ClusterAffinity) -> bool:
    return (affinity.label_selector is None and affinity.field_selector is None
            and not affinity.cluster_names and not affinity.exclude)


def overflow_allowed(strategy: ReplicaSchedulingStrategy | None) -> bool:
    """Overflow affinities need dynamic division: Divided + Aggregated, or Weighted + dynamicWeight."""
    if strategy is None or strategy.replica_scheduling_type != "Divided":
        return False
    if strategy.replica_division_preference == "Aggregated":
        return True
    return (strategy.replica_division_preference == "Weighted" and strategy.weight_preference is not None
            and bool(strategy.weight_preference.dynamic_weight))


def _validate_term(term: ClusterAffinityTerm, path: str, allow_overflow: bool, errs: FieldErrors) -> None:
    name = term.affinity_name
    errs.invalid_all(f"{path}.affinityName", name, validation.qualified_name(name))
    validate_cluster_affinity(term, path, errs)
    if term.overflow_affinities is None:
        return
    overflow_path = f"{path}.overflowAffinities"
    if not allow_overflow:
        errs.invalid(overflow_path, None, "overflowAffinities can only be used together with dynamic weight "
                                          "or aggregated scheduling")
    if _is_empty_affinity(term):
        errs.invalid(overflow_path, None,
                     "overflowAffinities can only be used together with the inline affinity")
    names = {term.affinity_name}
    for i, overflow in enumerate(term.overflow_affinities):
        name_path = f"{overflow_path}[{i}].affinityName"
        errs.invalid_all(name_path, overflow.affinity_name, validation.qualified_name(overflow.affinity_name))
        if overflow.affinity_name in names:
            errs.invalid(name_path, overflow.affinity_name,
                         "overflow affinity names must be unique and differ from the term's affinityName")
        names.add(overflow.affinity_name)
        validate_cluster_affinity(overflow, f"{overflow_path}[{i}]", errs)


def validate_spread_constraints(constraints: Sequence[SpreadConstraint] | None, path: str,
                                errs: FieldErrors) -> None:
    fields: set[str] = set()
    for i, c in enumerate(constraints or ()):
        item = f"{path}[{i}]"
        if c.spread_by_field and c.spread_by_label:
            errs.invalid(item, None, "spreadByLabel should not co-exist with spreadByField")
        if c.min_groups < 0:
            errs.invalid(f"{item}.minGroups", c.min_groups, "minGroups lower than 0 is not allowed")
        if c.max_groups < 0:
            errs.invalid(f"{item}.maxGroups", c.max_groups, "maxGroups lower than 0 is not allowed")
        if 0 < c.max_groups < c.min_groups:
            errs.invalid(f"{item}.maxGroups", c.max_groups, "maxGroups lower than minGroups is not allowed")
        if c.spread_by_field:
            if c.spread_by_field in fields:
                errs.invalid(f"{item}.spreadByField", c.spread_by_field,
                             f"multiple {c.spread_by_field} spread constraints are not allowed")
            fields.add(c.spread_by_field)
    if fields and "cluster" not in fields:
        errs.invalid(path, None, "the cluster spread constraint must be enabled in one of the constraints "
                                 "in case of SpreadByField is enabled")


def validate_tolerations(tolerations: Sequence[Toleration] | None, path: str, errs: FieldErrors) -> None:
    for i, tol in enumerate(tolerations or ()):
        item = f"{path}[{i}]"
        operator = tol.operator or ""
        if operator not in _TOLERATION_OPERATORS:
            errs.not_supported(f"{item}.operator", operator, _TOLERATION_OPERATORS)
        if tol.key:
            errs.invalid_all(f"{item}.key", tol.key, validation.qualified_name(tol.key))
        if operator == "Exists" and tol.value:
            errs.invalid(f"{item}.value", tol.value, "value must be empty when operator is Exists")


def _validate_workload_affinity(affinity: WorkloadAffinity | None, path: str, errs: FieldErrors) -> None:
    if affinity is None:
        return
    for field, term in (("affinity", affinity.affinity), ("antiAffinity", affinity.anti_affinity)):
        if term is not None:
            errs.invalid_all(f"{path}.{field}.groupByLabelKey", term.group_by_label_key,
                             validation.qualified_name(term.group_by_label_key))
    if affinity.affinity and affinity.anti_affinity and \
            affinity.affinity.group_by_label_key == affinity.anti_affinity.group_by_label_key:
        errs.invalid(path, None, "affinity and antiAffinity must not use the same groupByLabelKey")


def validate_placement(placement: Placement, path: str, errs: FieldErrors) -> None:
    """Record every problem of ``placement`` (at ``path``) in ``errs``."""
    if placement.cluster_affinity is not None and placement.cluster_affinities is not None:
        errs.invalid(f"{path}.clusterAffinities", None,
                     "clusterAffinities cannot co-exist with clusterAffinity")
    validate_cluster_affinity(placement.cluster_affinity, f"{path}.clusterAffinity", errs)
    allow_overflow = overflow_allowed(placement.replica_scheduling)
    names: set[str] = set()
    for i, term in enumerate(placement.cluster_affinities or ()):
        if term.affinity_name in names:
            errs.invalid(f"{path}.clusterAffinities[{i}].affinityName", term.affinity_name,
                         "each affinity term in a policy must have a unique name")
        names.add(term.affinity_name)
        _validate_term(term, f"{path}.clusterAffinities[{i}]", allow_overflow, errs)
    validate_spread_constraints(placement.spread_constraints, f"{path}.spreadConstraints", errs)
    _validate_workload_affinity(placement.workload_affinity, f"{path}.workloadAffinity", errs)
    validate_tolerations(placement.cluster_tolerations, f"{path}.clusterTolerations", errs)
    strategy = placement.replica_scheduling
    if strategy is not None and strategy.weight_preference is not None:
        for i, weight in enumerate(strategy.weight_preference.static_weight_list or ()):
            validate_cluster_affinity(
                weight.target_cluster,
                f"{path}.replicaScheduling.weightPreference.staticWeightList[{i}].targetCluster", errs)


__all__ = [
    "default_placement", "overflow_allowed", "validate_cluster_affinity", "validate_label_selector",
    "validate_placement", "validate_spread_constraints", "validate_tolerations",
]
