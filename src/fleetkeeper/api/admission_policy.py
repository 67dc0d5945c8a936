"""Admission of the ``policy.karmada.io`` kinds: propagation, override and taint policies.

Propagation policies (Karmada's policy webhooks):

* defaulting — a PropagationPolicy's resource selectors without a namespace get the
  policy's; selecting ``ServiceImport`` forces ``propagateDeps``; placement defaults (see
  :mod:`~fleetkeeper.api.admission_placement`); ``Gracefully`` application failover
  without ``gracePeriodSeconds`` gets 600;
* validation — ``propagateDeps`` must be true with application failover;
  ``tolerationSeconds >= 0``; ``gracePeriodSeconds`` only with ``Gracefully`` and > 0;
  state-preservation rules (at least one) name distinct labels and JSONPaths that parse;
  ``dispatching`` and ``dispatchingOnClusters`` are exclusive; ``preemption: Always``
  needs named selectors; ``schedulerName`` is immutable. fleetkeeper's additive
  ``preConditions.delaySeconds`` and ``blockPredecessorSeconds`` must not be negative.

  Application failover for a kind without a health rule can never fire, but whether a
  kind has one is the interpreter's knowledge (customizations included), which this
  layer cannot see: the application-failover controller warns about such bindings.

Override policies: rules and the deprecated top-level fields are exclusive, field
overriders use exactly one of JSON/YAML patches with JSON-pointer paths. Cluster taint
policies: taints unique by key and effect, valid keys and values, condition operators
``In``/``NotIn``.

Permanent-id labels and controller finalizers are not set here: the controllers that
own them add them.
"""

from __future__ import annotations

from fleetkeeper.api import jsonpath, validation
from fleetkeeper.api.admission_placement import (
    default_placement,
    validate_cluster_affinity,
    validate_label_selector,
    validate_placement,
)
from fleetkeeper.api.override import OverrideSpec
from fleetkeeper.api.placement import ResourceSelector
from fleetkeeper.api.policy import (
    ApplicationFailoverBehavior,
    FailoverBehavior,
    PropagationSpec,
    StatePreservation,
    Suspension,
)
from fleetkeeper.api.taintpolicy import ClusterTaintPolicySpec, MatchCondition
from fleetkeeper.api.validation import FieldErrors

_SERVICE_IMPORT = ("multicluster.x-k8s.io/v1alpha1", "ServiceImport")


# --- defaulting ----------------------------------------------------------------------------------


def default_selector_namespaces(resource_selectors: list[ResourceSelector] | None, namespace: str) -> None:
    for selector in resource_selectors or ():
        if not selector.namespace:
            selector.namespace = namespace


def default_propagation(spec: PropagationSpec, *, namespace: str | None) -> None:
    """Apply the policy webhook defaults to ``spec`` in place (``namespace`` only for PP)."""
    if namespace:
        default_selector_namespaces(spec.resource_selectors, namespace)
    if any((s.api_version, s.kind) == _SERVICE_IMPORT for s in spec.resource_selectors):
        spec.propagate_deps = True
    default_placement(spec.placement)
    application = spec.failover.application if spec.failover else None
    if application is not None and application.purge_mode == "Gracefully" \
            and application.grace_period_seconds is None:
        application.grace_period_seconds = 600


# --- propagation policies ------------------------------------------------------------------------


def _validate_state_preservation(preservation: StatePreservation | None, path: str,
                                 errs: FieldErrors) -> None:
    """Rules present, label names valid and distinct, JSONPaths that parse.

    Karmada checks the JSONPath only when it evaluates it — at eviction, when a typo
    blocks the failover. fleetkeeper parses it here (with the same grammar), so the
    mistake is reported to whoever wrote it, naming the rule."""
    if preservation is None:
        return
    if not preservation.rules:
        errs.required(f"{path}.rules", "statePreservation needs at least one rule")
    seen: set[str] = set()
    for i, rule in enumerate(preservation.rules):
        item = f"{path}.rules[{i}]"
        if not rule.alias_label_name:
            errs.required(f"{item}.aliasLabelName")
        else:
            errs.invalid_all(f"{item}.aliasLabelName", rule.alias_label_name,
                             validation.qualified_name(rule.alias_label_name))
            if rule.alias_label_name in seen:
                errs.duplicate(f"{item}.aliasLabelName",
                               f"aliasLabelName {rule.alias_label_name} is used by an earlier rule")
            seen.add(rule.alias_label_name)
        if not rule.json_path.strip():
            errs.required(f"{item}.jsonPath")
            continue
        try:
            jsonpath.parse(rule.json_path)
        except jsonpath.JSONPathError as exc:
            errs.invalid(f"{item}.jsonPath", rule.json_path, f"not a valid JSONPath template: {exc}")


def _validate_application(app: ApplicationFailoverBehavior, path: str, errs: FieldErrors) -> None:
    toleration = app.decision_conditions.toleration_seconds
    if toleration < 0:
        errs.invalid(f"{path}.decisionConditions.tolerationSeconds", toleration,
                     "must be greater than or equal to 0")
    grace = app.grace_period_seconds
    if app.purge_mode != "Gracefully" and grace is not None:
        errs.invalid(f"{path}.gracePeriodSeconds", grace, "only takes effect when purgeMode is Gracefully")
    if app.purge_mode == "Gracefully" and grace is None:
        errs.required(f"{path}.gracePeriodSeconds", "should not be empty when purgeMode is Gracefully")
    if grace is not None and grace <= 0:
        errs.invalid(f"{path}.gracePeriodSeconds", grace, "must be greater than 0")
    if app.block_predecessor_seconds is not None and app.block_predecessor_seconds < 0:
        errs.invalid(f"{path}.blockPredecessorSeconds", app.block_predecessor_seconds,
                     "must be greater than or equal to 0")
    if app.pre_conditions is not None and (app.pre_conditions.delay_seconds or 0) < 0:
        errs.invalid(f"{path}.preConditions.delaySeconds", app.pre_conditions.delay_seconds,
                     "must be greater than or equal to 0")
    _validate_state_preservation(app.state_preservation, f"{path}.statePreservation", errs)


def validate_failover(failover: FailoverBehavior | None, path: str, errs: FieldErrors) -> None:
    if failover is None:
        return
    if failover.application is not None:
        _validate_application(failover.application, f"{path}.application", errs)
    if failover.cluster is not None:
        _validate_state_preservation(failover.cluster.state_preservation,
                                     f"{path}.cluster.statePreservation", errs)


def validate_suspension(suspension: Suspension | None, path: str, errs: FieldErrors) -> None:
    if suspension is None or not suspension.dispatching:
        return
    on_clusters = suspension.dispatching_on_clusters
    if on_clusters is not None and on_clusters.cluster_names:
        errs.invalid(path, None,
                     "suspension dispatching cannot co-exist with dispatchingOnClusters.clusterNames")


def validate_propagation(spec: PropagationSpec, old: PropagationSpec | None, *, namespace: str | None,
                         errs: FieldErrors) -> None:
    """Record every problem of a propagation spec (``namespace`` only for PP)."""
    validate_placement(spec.placement, "spec.placement", errs)
    if spec.failover is not None and spec.failover.application is not None and not spec.propagate_deps:
        errs.invalid("spec.propagateDeps", spec.propagate_deps,
                     "application failover is set, propagateDeps must be true")
    validate_failover(spec.failover, "spec.failover", errs)
    _validate_selectors(spec.resource_selectors, namespace, errs)
    if spec.preemption == "Always":
        for i, selector in enumerate(spec.resource_selectors):
            if not selector.name:
                errs.invalid(f"spec.resourceSelectors[{i}].name", "",
                             "name cannot be empty if preemption is Always, the empty name may cause "
                             "unexpected resources preemption")
    validate_suspension(spec.suspension, "spec.suspension", errs)
    if old is not None and old.scheduler_name != spec.scheduler_name:
        errs.invalid("spec.schedulerName", spec.scheduler_name, "field is immutable")


def _validate_selectors(resource_selectors: list[ResourceSelector] | None, namespace: str | None,
                        errs: FieldErrors) -> None:
    for i, selector in enumerate(resource_selectors or ()):
        path = f"spec.resourceSelectors[{i}]"
        if not selector.api_version:
            errs.required(f"{path}.apiVersion")
        if not selector.kind:
            errs.required(f"{path}.kind")
        if namespace and selector.namespace != namespace:
            errs.invalid(f"{path}.namespace", selector.namespace or "",
                         "namespace of resource selector must be the same as the namespace of the policy")
        validate_label_selector(selector.label_selector, f"{path}.labelSelector", errs)


# --- override policies ---------------------------------------------------------------------------


def _is_pointer(path: str) -> bool:
    return path == "" or path.startswith("/")


def _validate_rule_overriders(spec: OverrideSpec, errs: FieldErrors) -> None:
    for r, rule in enumerate(spec.override_rules or ()):
        rule_path = f"spec.overrideRules[{r}]"
        validate_cluster_affinity(rule.target_cluster, f"{rule_path}.targetCluster", errs)
        for f, fo in enumerate(rule.overriders.field_overrider or ()):
            path = f"{rule_path}.overriders.fieldOverrider[{f}]"
            if fo.json_ and fo.yaml:
                errs.invalid(path, None, "FieldOverrider has both YAML and JSON set. Only one is allowed")
            if not fo.json_ and not fo.yaml:
                errs.required(path, "FieldOverrider must have either JSON or YAML set")
            if not _is_pointer(fo.field_path):
                errs.invalid(f"{path}.fieldPath", fo.field_path, "must be a JSON pointer (start with '/')")
            for kind, patches in (("json", fo.json_), ("yaml", fo.yaml)):
                for p, patch in enumerate(patches or ()):
                    patch_path = f"{path}.{kind}[{p}]"
                    if not _is_pointer(patch.sub_path):
                        errs.invalid(f"{patch_path}.subPath", patch.sub_path, "must be a JSON pointer")
                    if patch.operator == "remove" and patch.value is not None:
                        errs.invalid(f"{patch_path}.value", None,
                                     "value is not allowed for remove operation")
                    if patch.operator != "remove" and patch.value is None:
                        errs.invalid(f"{patch_path}.value", None,
                                     "value is required for add or replace operation")
        for i, label in enumerate(rule.overriders.labels_overrider or ()):
            for key, value in (label.value or {}).items():
                lpath = f"{rule_path}.overriders.labelsOverrider[{i}].value"
                errs.invalid_all(lpath, key, validation.qualified_name(key))
                errs.invalid_all(lpath, value, validation.label_value(value))


def validate_override(spec: OverrideSpec, *, namespace: str | None, errs: FieldErrors) -> None:
    """Record every problem of an override spec (``namespace`` only for OverridePolicy)."""
    validate_cluster_affinity(spec.target_cluster, "spec.targetCluster", errs)
    if spec.target_cluster is not None and spec.override_rules is not None:
        errs.invalid("spec.targetCluster", None, "overrideRules and targetCluster can't co-exist")
    legacy = ("plaintext", "image_overrider", "command_overrider", "args_overrider", "labels_overrider",
              "annotations_overrider")
    if spec.override_rules is not None and any(getattr(spec.overriders, f) for f in legacy):
        errs.invalid("spec.overriders", None, "overrideRules and overriders can't co-exist")
    _validate_rule_overriders(spec, errs)
    _validate_selectors(spec.resource_selectors, namespace, errs)


# --- cluster taint policies ----------------------------------------------------------------------


def _validate_conditions(conditions: list[MatchCondition] | None, path: str, errs: FieldErrors) -> None:
    for i, cond in enumerate(conditions or ()):
        if not cond.condition_type:
            errs.required(f"{path}[{i}].conditionType")
        if cond.operator not in ("In", "NotIn"):
            errs.not_supported(f"{path}[{i}].operator", cond.operator, ("In", "NotIn"))


def validate_taint_policy(spec: ClusterTaintPolicySpec, errs: FieldErrors) -> None:
    """Record every problem of a ClusterTaintPolicy spec (NoExecute taints are allowed)."""
    validate_cluster_affinity(spec.target_clusters, "spec.targetClusters", errs)
    _validate_conditions(spec.add_on_conditions, "spec.addOnConditions", errs)
    _validate_conditions(spec.remove_on_conditions, "spec.removeOnConditions", errs)
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(spec.taints):
        path = f"spec.taints[{i}]"
        errs.invalid_all(f"{path}.key", taint.key, validation.qualified_name(taint.key))
        if taint.value:
            errs.invalid_all(f"{path}.value", taint.value, validation.label_value(taint.value))
        if taint.effect not in ("NoSchedule", "NoExecute"):
            errs.not_supported(f"{path}.effect", taint.effect, ("NoExecute", "NoSchedule"))
        if (taint.key, taint.effect) in seen:
            errs.duplicate(path, f"taints must be unique by key and effect pair ({taint.key}:{taint.effect})")
        seen.add((taint.key, taint.effect))


__all__ = [
    "default_propagation", "default_selector_namespaces", "validate_failover", "validate_override",
    "validate_propagation", "validate_suspension", "validate_taint_policy",
]
