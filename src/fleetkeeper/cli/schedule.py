"""``fleetkeeper schedule``: what would the scheduler decide? — a what-if, offline.

Give it member clusters (Karmada ``Cluster`` objects with their status) and either a
ResourceBinding (or ClusterResourceBinding) or a resource template with the
PropagationPolicy that claims it; it runs the very core the scheduling controller runs
and prints the resulting ``spec.clusters``::

    fleetkeeper schedule -f clusters.yaml -f binding.yaml
    fleetkeeper schedule -f clusters.yaml -f deployment.yaml -f policy.yaml -o json

Files may hold several YAML documents, and a ``List`` (``kubectl get clusters -o yaml``)
stands for its items; ``-`` reads stdin. The output is a list of
``{name, replicas}`` ordered by cluster name (``replicas`` left out for non-workloads
such as ConfigMaps). With a template, the replicas and per-replica requirements come
from the resource interpreter (``spec.replicas`` when it has no rule for the kind).
Placements get the admission defaults first (``spreadByField: cluster``, ``minGroups:
1``, ``Weighted``), as a policy written to the control plane would; a PropagationPolicy
goes through the control plane's whole admission, so a policy it would refuse is refused
here with the same message. A PropagationPolicy without a namespace is in the template's
(``default`` if the template has none either), as ``kubectl apply`` would put it.

Exit codes: 0 scheduled; 1 unschedulable — the reason is printed per cluster, in the
words the controller records (``cluster "member3" is not fit, reason: cluster(s) had
untolerated taint {…}``); 2 bad input, with a message naming the file and the field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Annotated, Any

import typer
import yaml

from fleetkeeper import errors
from fleetkeeper.api import admission, yamlload
from fleetkeeper.api.admission_placement import default_placement
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.matching import resource_selectors_priority
from fleetkeeper.api.policy import ClusterPropagationPolicy, PropagationPolicy
from fleetkeeper.api.work import (
    Binding,
    ClusterResourceBinding,
    ReplicaRequirements,
    ResourceBinding,
    binding_model,
)
from fleetkeeper.clock import SystemClock
from fleetkeeper.scheduler.core import Scheduler
from fleetkeeper.scheduler.framework import FitError
from fleetkeeper.scheduler.snapshot import snapshot_of
from fleetkeeper.scheduler.triggers import is_workload

Policy = PropagationPolicy | ClusterPropagationPolicy
_BINDINGS: dict[str, type[Binding]] = {"ResourceBinding": ResourceBinding,
                                       "ClusterResourceBinding": ClusterResourceBinding}
_POLICIES: dict[str, type[Policy]] = {"PropagationPolicy": PropagationPolicy,
                                      "ClusterPropagationPolicy": ClusterPropagationPolicy}


class BadInput(Exception):
    """Input the command cannot use; the message names the file and the field."""


@dataclass
class Inputs:
    """What the files held, sorted by role."""

    clusters: list[Cluster] = field(default_factory=list)
    #: where each cluster was read (``file: document n``), by name
    cluster_sources: dict[str, str] = field(default_factory=dict)
    bindings: list[tuple[str, Binding]] = field(default_factory=list)
    policies: list[tuple[str, Policy]] = field(default_factory=list)
    templates: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


# --------------------------------------------------------------------------- reading


def _documents(path: str) -> list[Any]:
    try:
        return [doc for doc in yamlload.read_all(path) if doc is not None]
    except yamlload.Unreadable as exc:
        raise BadInput(str(exc)) from None


def read_inputs(paths: list[str]) -> Inputs:
    """Parse every document of every file into clusters, bindings, policies and templates."""
    found = Inputs()
    for path in paths:
        for index, doc in enumerate(_documents(path), start=1):
            where = f"{path}: document {index}"
            try:
                items = yamlload.list_items(doc)
            except ValueError as exc:
                raise BadInput(f"{where}: {exc}") from None
            for item_where, item in ([(where, doc)] if items is None else
                                     [(f"{where}: items[{i}]", item) for i, item in enumerate(items)]):
                if not isinstance(item, dict):
                    raise BadInput(f"{item_where}: expected an object with apiVersion and kind")
                _classify(found, item, item_where)
    return found


def _classify(found: Inputs, doc: dict[str, Any], where: str) -> None:
    kind = doc.get("kind")
    if not isinstance(kind, str) or not kind or not isinstance(doc.get("apiVersion"), str):
        raise BadInput(f"{where}: apiVersion and kind are required")
    try:
        if kind == "Cluster":
            _add_cluster(found, Cluster.from_dict(doc), where)
        elif kind in _BINDINGS:
            found.bindings.append((where, _BINDINGS[kind].from_dict(_without_nulls(doc))))
        elif kind in _POLICIES:
            found.policies.append((where, _POLICIES[kind].from_dict(_without_nulls(doc))))
        else:
            if not (doc.get("metadata") or {}).get("name"):
                raise BadInput(f"{where}: metadata.name: Required value")
            found.templates.append((where, doc))
    except errors.Invalid as exc:
        raise BadInput(f"{where}: {exc.message}") from None


def _without_nulls(value: Any) -> Any:
    """A Karmada object as the control plane stores it: a field set to null (``placement:``
    with nothing after it) is absent — server-side apply drops it, and Kubernetes prunes it
    from a custom resource — so an empty ``placement:`` means any cluster, Duplicated."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def _add_cluster(found: Inputs, cluster: Cluster, where: str) -> None:
    first = found.cluster_sources.get(cluster.name)
    if first is not None:
        raise BadInput(f"{where}: metadata.name: Duplicate value: {cluster.name!r}: "
                       f"a Cluster of that name is already given in {first}")
    found.cluster_sources[cluster.name] = where
    found.clusters.append(cluster)


# --------------------------------------------------------------------------- the binding


def binding_of(found: Inputs) -> Binding:
    """The binding to schedule: the one given, or one built from a template and its policy."""
    if len(found.bindings) > 1:
        raise BadInput(f"{found.bindings[1][0]}: only one ResourceBinding may be given")
    if found.bindings:
        if found.policies or found.templates:
            raise BadInput("give either a ResourceBinding, or a resource template with its PropagationPolicy")
        where, binding = found.bindings[0]
        if binding.spec.placement is None:
            raise BadInput(f"{where}: spec.placement: Required value")
        default_placement(binding.spec.placement)
        return binding
    if len(found.templates) != 1 or len(found.policies) != 1:
        raise BadInput("expected one ResourceBinding, or one resource template and one PropagationPolicy "
                       f"(got {len(found.templates)} template(s) and {len(found.policies)} policy(ies))")
    (where, template), (policy_where, policy) = found.templates[0], found.policies[0]
    if resource_selectors_priority(policy.spec.resource_selectors, template) == 0:
        raise BadInput(f"{policy_where}: spec.resourceSelectors: does not select {template['kind']} "
                       f"{template['metadata']['name']!r} of {where}")
    return _from_template(template, _admitted(policy, template, policy_where), where)


def _admitted(policy: Policy, template: dict[str, Any], where: str) -> Policy:
    """The policy as the control plane would store it (defaulted), or the reason it would refuse it."""
    if isinstance(policy, PropagationPolicy) and not policy.metadata.namespace:
        policy = policy.deep_copy()
        policy.metadata.namespace = template["metadata"].get("namespace") or "default"
    try:
        return admission.admit(policy, None, operation="CREATE", now=SystemClock().now())
    except errors.ApiError as exc:
        raise BadInput(f"{where}: {exc.message}") from None


def _from_template(template: dict[str, Any], policy: Policy, where: str) -> Binding:
    meta = template["metadata"]
    replicas, requirements = _replicas(template, where)
    placement = policy.spec.placement
    namespace = meta.get("namespace") or ("default" if isinstance(policy, PropagationPolicy) else None)
    spec = {
        "resource": {"apiVersion": template["apiVersion"], "kind": template["kind"], "namespace": namespace,
                     "name": meta["name"], "uid": meta.get("uid")},
        "replicas": replicas,
        "replicaRequirements": requirements,
        "placement": placement.to_dict(),
        "failover": policy.spec.failover.to_dict() if policy.spec.failover else None,
    }
    body = {"metadata": {"name": f"{meta['name']}-{template['kind'].lower()}", "namespace": namespace},
            "spec": {k: v for k, v in spec.items() if v is not None}}
    try:
        return binding_model(namespace).from_dict(body)
    except errors.Invalid as exc:
        raise BadInput(f"{where}: {exc.message}") from None


def _replicas(template: dict[str, Any], where: str) -> tuple[int, dict[str, Any] | None]:
    """Replicas and requirements from the interpreter; ``spec.replicas`` when it cannot say."""
    try:
        from fleetkeeper.interpreter import Interpreter

        replicas, requirements = Interpreter(clock=SystemClock()).get_replicas(template)
    except ImportError:
        replicas, requirements = 0, None
    except errors.FleetkeeperError as exc:
        raise BadInput(f"{where}: cannot read the replicas: {exc}") from None
    if replicas == 0 and requirements is None:
        value = (template.get("spec") or {}).get("replicas", 0)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise BadInput(f"{where}: spec.replicas: must be a non-negative integer")
        replicas = value
    if requirements is not None:
        requirements = ReplicaRequirements.from_dict(requirements).to_dict()
    return replicas, requirements


# --------------------------------------------------------------------------- output


def render(result: list[tuple[str, int]], *, workload: bool, output: str) -> str:
    """``spec.clusters`` as a YAML or JSON list ordered by cluster name."""
    items: list[dict[str, Any]] = [{"name": name, "replicas": replicas} if workload else {"name": name}
                                   for name, replicas in sorted(result)]
    if output == "json":
        return json.dumps(items, indent=2)
    return yaml.safe_dump(items, sort_keys=False, default_flow_style=False).rstrip("\n") if items else "[]"


def schedule(
    filename: Annotated[list[str], typer.Option(
        "--filename", "-f", help="Clusters and a binding, or a template and its policy (YAML; - = stdin).")],
    output: Annotated[str, typer.Option("--output", "-o", help="yaml or json")] = "yaml",
) -> None:
    """Print where the scheduler would place a binding, without a control plane."""
    if output not in ("yaml", "json"):
        typer.echo(f"error: --output: must be yaml or json, not {output!r}", err=True)
        raise typer.Exit(2)
    try:
        found = read_inputs(filename)
        binding = binding_of(found)
    except BadInput as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    outcome = Scheduler().schedule_binding(binding.spec, binding.status, snapshot_of(found.clusters),
                                           SystemClock().now())
    if outcome.error is not None:
        typer.echo(f"error: {outcome.error}", err=True)
        if isinstance(outcome.error, FitError):
            for line in outcome.error.cluster_reasons():
                typer.echo(line, err=True)
        raise typer.Exit(1)
    typer.echo(render(outcome.clusters or [], workload=is_workload(binding.spec), output=output))


__all__ = ["BadInput", "Inputs", "binding_of", "read_inputs", "render", "schedule"]
