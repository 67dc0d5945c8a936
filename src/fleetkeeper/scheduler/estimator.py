"""The general estimator: how many more replicas fit on a cluster.

Two sources, as in Karmada's ``general-estimator``:

* **Resource summary** (``status.resourceSummary``): free = allocatable − allocated −
  allocating per resource; the answer is the smallest ``free // request`` over the
  requested resources (CPU in milli-units), bounded by the free pod slots.
* **Resource models** (``spec.resourceModels`` + ``status.resourceSummary.
  allocatableModelings``): the cluster is modelled as ``count`` identical nodes per
  grade, each with the grade's *minimum* resources and 110 pod slots, and replicas are
  placed first-fit. When the model can be built it replaces the summary answer
  (bounded by the free pods); when it cannot (no models, a negative count), the summary
  answer is used.

Everything that depends only on the cluster is parsed once into a :class:`Capacity`
when the cluster's facts are built (once per cluster version, not per binding); the
per-binding work is a handful of integer divisions.

Quantities are exact decimals (:mod:`fleetkeeper.api.quantity`); like Go, a resource
amount is rounded *up* to an integer (``Value()``) or to milli-units for CPU
(``MilliValue()``) before dividing, and divisions truncate.

Single-template placement is a sum: first-fit of identical one-replica sets fills each
model node up to ``min(free_r // request_r)`` before moving on, so the simulation's
count equals the sum of that per-node bound. We compute the sum directly.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache

from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.quantity import parse_quantity
from fleetkeeper.api.work import ReplicaRequirements

MAX_INT32 = 2**31 - 1
MAX_PODS_PER_MODEL_NODE = 110
_CPU, _MEMORY, _PODS, _EPHEMERAL = "cpu", "memory", "pods", "ephemeral-storage"
_QUALIFIED = re.compile(
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$"
)

#: a replica's request: resource name → exact quantity (``None`` = no requirements)
Request = tuple[tuple[str, Decimal], ...]
_ZERO = Decimal(0)


@lru_cache(maxsize=8192)
def _parse(text: str) -> Decimal:
    return parse_quantity(text)


def value(q: Decimal) -> int:
    """Go's ``Quantity.Value()``: rounded up, away from zero."""
    return math.ceil(q) if q >= 0 else -math.ceil(-q)


def milli_value(q: Decimal) -> int:
    """Go's ``Quantity.MilliValue()``: value × 1000, rounded up away from zero."""
    return value(q * 1000)


@dataclass(frozen=True, slots=True)
class Capacity:
    """A cluster's capacity, parsed once: the summary and the model nodes."""

    allocatable: Mapping[str, Decimal]
    free: Mapping[str, Decimal]
    allowed_pods: int
    #: per model node: tracked resource → integer capacity (CPU in milli); ``None`` = no usable model
    model_nodes: tuple[Mapping[str, int], ...] | None


def is_scalar_resource(name: str) -> bool:
    """Extended, hugepages, ``*kubernetes.io/*`` and attachable-volume resources."""
    if name.startswith(("hugepages-", "attachable-volumes-")) or "kubernetes.io/" in name:
        return True
    if "/" not in name or name.startswith("requests."):
        return False
    return _QUALIFIED.match("requests." + name) is not None and len(name) <= 253


def capacity_of(cluster: Cluster) -> Capacity | None:
    """Parse a cluster's resource summary and models; ``None`` when it has no summary."""
    summary = cluster.status.resource_summary
    if summary is None:
        return None
    allocatable = _parse_list(summary.allocatable)
    allocated = _parse_list(summary.allocated)
    allocating = _parse_list(summary.allocating)
    free = {
        name: amount - allocated.get(name, _ZERO) - allocating.get(name, _ZERO)
        for name, amount in allocatable.items()
    }
    pods = value(allocatable.get(_PODS, _ZERO)) - value(
        allocated.get(_PODS, _ZERO)) - value(allocating.get(_PODS, _ZERO))
    return Capacity(allocatable, free, max(pods, 0), _model_nodes(cluster))


def _parse_list(items: Mapping[str, str] | None) -> dict[str, Decimal]:
    return {name: _parse(text) for name, text in (items or {}).items()}


def _model_nodes(cluster: Cluster) -> tuple[Mapping[str, int], ...] | None:
    summary = cluster.status.resource_summary
    models = cluster.spec.resource_models or []
    modelings = summary.allocatable_modelings if summary is not None else None
    if not modelings or not models:
        return None
    counts: dict[int, int] = {}
    for item in modelings:
        if item.count < 0:
            return None
        counts[item.grade] = counts.get(item.grade, 0) + item.count
    templates = {model.grade: _node_template({r.name: r.min for r in model.ranges}) for model in models}
    nodes: list[Mapping[str, int]] = []
    for grade in sorted(templates):
        nodes.extend([templates[grade]] * counts.get(grade, 0))
    return tuple(nodes)


def _node_template(ranges: Mapping[str, str]) -> dict[str, int]:
    node = {name: _tracked(name, _parse(text)) for name, text in ranges.items() if _is_tracked(name)}
    node[_PODS] = MAX_PODS_PER_MODEL_NODE
    return node


def _is_tracked(name: str) -> bool:
    return name in (_CPU, _MEMORY, _EPHEMERAL, _PODS) or is_scalar_resource(name)


def _tracked(name: str, amount: Decimal) -> int:
    return milli_value(amount) if name == _CPU else value(amount)


@lru_cache(maxsize=4096)
def request_of(resources: tuple[tuple[str, str], ...]) -> Request:
    """The parsed request of a replica (input: sorted ``(name, quantity string)`` pairs)."""
    return tuple((name, _parse(text)) for name, text in resources)


def request_key(requirements: ReplicaRequirements | None) -> tuple[tuple[str, str], ...] | None:
    """A hashable form of the requirements the estimator reads (``None`` = no requirements)."""
    if requirements is None:
        return None
    return tuple(sorted((requirements.resource_request or {}).items()))


def max_available_replicas(capacity: Capacity | None, request: Request | None) -> int:
    """How many replicas with ``request`` fit on a cluster (the general estimator)."""
    if capacity is None:
        return 0
    allowed = capacity.allowed_pods
    if allowed <= 0:
        return 0
    if request is None:
        return min(allowed, MAX_INT32)
    if capacity.model_nodes is not None:
        return min(allowed, _fit_on_models(capacity.model_nodes, request), MAX_INT32)
    return min(allowed, _fit_on_summary(capacity, request), MAX_INT32)


def _fit_on_summary(capacity: Capacity, request: Request) -> int:
    best = 2**63 - 1
    for name, amount in request:
        want = value(amount)
        if want <= 0:
            continue
        if name not in capacity.allocatable:
            return 0
        free = capacity.free[name]
        have = value(free)
        if have <= 0:
            return 0
        if name == _CPU:
            want, have = milli_value(amount), milli_value(free)
        best = min(best, have // want)
    return best


def _fit_on_models(nodes: tuple[Mapping[str, int], ...], request: Request) -> int:
    per_replica = {name: _tracked(name, amount) for name, amount in request
                   if _is_tracked(name) and name != _PODS}
    needed = {name: amount for name, amount in per_replica.items() if amount > 0}
    total = 0
    for node in nodes:
        fit = node.get(_PODS, 0)
        for name, amount in needed.items():
            fit = min(fit, node.get(name, 0) // amount)
        total += fit
        if total >= MAX_INT32:
            return MAX_INT32
    return total


__all__ = [
    "MAX_INT32", "Capacity", "Request", "capacity_of", "is_scalar_resource", "max_available_replicas",
    "milli_value", "request_key", "request_of", "value",
]
