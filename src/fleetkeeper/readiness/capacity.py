"""The room left on clusters while moved replicas take it (pure, no I/O).

The scheduler decides a burst of evictions on the capacity its clusters last reported:
their resource summaries are refreshed every status period, not after each decision.
So where replicas go comes from the reported capacity, and *whether they run* is a
matter of the room left once the replicas moved before them took theirs — in the order
the taint-manager evicts (highest ``schedulePriority`` first). :class:`Ledger` keeps that
account per cluster: free resources and pod slots of the summary, and the model nodes
(first-fit, as the estimator counts them), starting from what the estimator reads.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from decimal import Decimal

from fleetkeeper.scheduler import estimator
from fleetkeeper.scheduler.estimator import Capacity, Request

_CPU, _PODS = "cpu", "pods"


def _per_node(request: Request) -> dict[str, int]:
    """What one replica takes of a model node (CPU in milli-units), as the estimator counts it."""
    out = {}
    for name, amount in request:
        if name == _PODS or not (name in ("cpu", "memory", "ephemeral-storage")
                                 or estimator.is_scalar_resource(name)):
            continue
        used = estimator.milli_value(amount) if name == _CPU else estimator.value(amount)
        if used > 0:
            out[name] = used
    return out


def consumed(capacity: Capacity, request: Request | None, replicas: int) -> Capacity:
    """``capacity`` after ``replicas`` more replicas of ``request`` started on the cluster."""
    if replicas <= 0:
        return capacity
    free: dict[str, Decimal] = dict(capacity.free)
    for name, amount in request or ():
        if name in free:
            free[name] -= amount * replicas
    nodes = capacity.model_nodes
    if nodes is not None and request is not None:
        nodes = _fill_nodes(nodes, _per_node(request), replicas)
    return dataclasses.replace(capacity, free=free, allowed_pods=max(capacity.allowed_pods - replicas, 0),
                               model_nodes=nodes)


def _fill_nodes(nodes: tuple[Mapping[str, int], ...], use: Mapping[str, int], replicas: int
                ) -> tuple[Mapping[str, int], ...]:
    """First-fit: each model node takes what it can hold before the next one is used."""
    out: list[Mapping[str, int]] = []
    left = replicas
    for node in nodes:
        if left <= 0:
            out.append(node)
            continue
        fit = node.get(_PODS, 0)
        for name, amount in use.items():
            fit = min(fit, node.get(name, 0) // amount)
        taken = min(fit, left)
        left -= taken
        changed = dict(node)
        changed[_PODS] = node.get(_PODS, 0) - taken
        for name, amount in use.items():
            changed[name] = node.get(name, 0) - amount * taken
        out.append(changed)
    return tuple(out)


class Ledger:
    """The room left per cluster as replicas start (see the module notes). A cluster that
    reports no resource summary is not counted against: its replicas are taken to run."""

    def __init__(self, capacities: Mapping[str, Capacity | None]) -> None:
        self._left: dict[str, Capacity | None] = dict(capacities)

    def start(self, cluster: str, request: Request | None, replicas: int) -> int:
        """Start up to ``replicas`` new replicas on ``cluster``; returns how many found room."""
        if replicas <= 0:
            return 0
        capacity = self._left.get(cluster)
        if capacity is None:
            return replicas  # a cluster that reports no resources: nothing to count against
        fit = min(replicas, estimator.max_available_replicas(capacity, request))
        if fit > 0:
            self._left[cluster] = consumed(capacity, request, fit)
        return fit


__all__ = ["Ledger", "consumed"]
