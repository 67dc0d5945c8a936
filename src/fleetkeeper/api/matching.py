"""Which clusters an affinity selects, which templates a resource selector claims.

:func:`cluster_matches` is Karmada's ``ClusterMatches``: ``exclude``
first, then the label selector, the field selector (``zone`` against ``spec.zones``,
``provider``/``region`` as node-selector requirements against the cluster's fields),
then ``clusterNames``; all clauses ANDed, an empty affinity matches every cluster and an
invalid selector matches none.

:func:`resource_selector_priority` is the implicit priority of a selector for a
template: a name match beats a label-selector match beats a kind-only
match; it decides which policy claims a template when several match.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from enum import IntEnum
from typing import Any

from fleetkeeper.api import selectors
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.core import NodeSelectorRequirement
from fleetkeeper.api.meta import Resource
from fleetkeeper.api.placement import ClusterAffinity, ResourceSelector


def _zones_match(expr: NodeSelectorRequirement, zones: Sequence[str]) -> bool:
    values = expr.values or []
    if expr.operator == "In":
        return any(z in values for z in zones)
    if expr.operator == "NotIn":
        return not any(z in values for z in zones)
    if expr.operator == "Exists":
        return bool(zones)
    if expr.operator == "DoesNotExist":
        return not zones
    return False


def _int(value: str) -> int | None:
    try:
        return int(value)
    except ValueError:
        return None


def node_requirement_matches(expr: NodeSelectorRequirement, fields: Mapping[str, str]) -> bool:
    """A node-selector requirement against a label-like map; an invalid requirement never matches."""
    values = expr.values or []
    value = fields.get(expr.key)
    op = expr.operator
    if op in ("In", "NotIn"):
        if not values:
            return False
        present = value is not None and value in values
        return present if op == "In" else not present
    if op in ("Exists", "DoesNotExist"):
        return not values and ((value is not None) == (op == "Exists"))
    bound = _int(values[0]) if len(values) == 1 else None
    have = _int(value) if value is not None else None
    if bound is None or have is None:
        return False
    return have > bound if op == "Gt" else have < bound


def cluster_fields(cluster: Cluster) -> dict[str, str]:
    """The cluster fields a field selector sees besides zones: ``provider``, ``region`` when set."""
    fields: dict[str, str] = {}
    if cluster.spec.provider:
        fields["provider"] = cluster.spec.provider
    if cluster.spec.region:
        fields["region"] = cluster.spec.region
    return fields


def cluster_matches(affinity: ClusterAffinity, cluster: Cluster) -> bool:
    """Whether ``cluster`` is selected by ``affinity`` (Karmada's ``ClusterMatches``)."""
    name = cluster.name
    if affinity.exclude and name in affinity.exclude:
        return False
    if affinity.label_selector is not None and not selectors.label_selector_matches(
            affinity.label_selector, cluster.labels()):
        return False
    if affinity.field_selector is not None:
        others = []
        for expr in affinity.field_selector.match_expressions or ():
            if expr.key == "zone":
                if not _zones_match(expr, cluster.spec.zones or ()):
                    return False
            else:
                others.append(expr)
        if others:
            fields = cluster_fields(cluster)
            if not all(node_requirement_matches(e, fields) for e in others):
                return False
    return not affinity.cluster_names or name in affinity.cluster_names


class ImplicitPriority(IntEnum):
    """How specifically a resource selector matched a template (higher wins)."""

    MISMATCH = 0
    MATCH_ALL = 1
    MATCH_LABEL_SELECTOR = 2
    MATCH_NAME = 3


def _identity(obj: Mapping[str, Any] | Resource) -> tuple[str, str, str, str, Mapping[str, str]]:
    if isinstance(obj, Resource):
        return obj.api_version, obj.kind, obj.namespace, obj.name, obj.labels()
    meta = obj.get("metadata") or {}
    return (obj.get("apiVersion", ""), obj.get("kind", ""), meta.get("namespace") or "",
            meta.get("name") or "", meta.get("labels") or {})


def resource_selector_priority(selector: ResourceSelector,
                               obj: Mapping[str, Any] | Resource) -> ImplicitPriority:
    """The implicit priority of ``selector`` for a template (wire dict or Resource)."""
    api_version, kind, namespace, name, labels = _identity(obj)
    if api_version != selector.api_version or kind != selector.kind:
        return ImplicitPriority.MISMATCH
    if selector.namespace and namespace != selector.namespace:
        return ImplicitPriority.MISMATCH
    if selector.name:
        return ImplicitPriority.MATCH_NAME if selector.name == name else ImplicitPriority.MISMATCH
    if selector.label_selector is None:
        return ImplicitPriority.MATCH_ALL
    if selectors.label_selector_matches(selector.label_selector, labels):
        return ImplicitPriority.MATCH_LABEL_SELECTOR
    return ImplicitPriority.MISMATCH


def resource_selector_matches(selector: ResourceSelector, obj: Mapping[str, Any] | Resource) -> bool:
    """Whether ``selector`` selects the template."""
    return resource_selector_priority(selector, obj) > ImplicitPriority.MISMATCH


def resource_selectors_priority(selector_list: Iterable[ResourceSelector] | None,
                                obj: Mapping[str, Any] | Resource) -> ImplicitPriority:
    """The best priority among ``selector_list`` (``MISMATCH`` when none selects the template)."""
    best = ImplicitPriority.MISMATCH
    for selector in selector_list or ():
        best = max(best, resource_selector_priority(selector, obj))
    return best


__all__ = [
    "ImplicitPriority", "cluster_fields", "cluster_matches", "node_requirement_matches",
    "resource_selector_matches", "resource_selector_priority", "resource_selectors_priority",
]
