"""Native rules: Karmada's built-in interpreter for Kubernetes kinds (spec B.2), one concept a module.

The registry below is spec table B.2.0 (which kind implements which operation). Rules are pure
functions over wire dicts; the one that needs time (Job aggregation) takes ``now``. A kind with
no rule for an operation has no native hook: :func:`has_hook` says so and the façade decides the
default. ReflectStatus is the exception: every kind has it, falling back to the whole status.

===========================  ========================================================
module                       operation
===========================  ========================================================
:mod:`.replicas`             GetReplicas (+ requirements, :mod:`.requirements`), ReviseReplica
:mod:`.retain`               Retain
:mod:`.aggregate`            AggregateStatus: counters and phases
:mod:`.aggregate_jobs`       AggregateStatus: Job, CronJob
:mod:`.loadbalancer`         AggregateStatus: Service, Ingress
:mod:`.reflect`              ReflectStatus
:mod:`.health`               InterpretHealth
:mod:`.dependencies`         GetDependencies
:mod:`.prune`                Prune
===========================  ========================================================
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from fleetkeeper.interpreter.native import aggregate, aggregate_jobs, loadbalancer
from fleetkeeper.interpreter.native.dependencies import GET_DEPENDENCIES, pod_dependencies, verify
from fleetkeeper.interpreter.native.health import INTERPRET_HEALTH
from fleetkeeper.interpreter.native.prune import prune
from fleetkeeper.interpreter.native.reflect import REFLECT_STATUS, whole_status
from fleetkeeper.interpreter.native.replicas import GET_REPLICAS, REVISE_REPLICA, Replicas
from fleetkeeper.interpreter.native.requirements import replica_requirements
from fleetkeeper.interpreter.native.retain import RETAIN
from fleetkeeper.interpreter.operation import Operation

Obj = dict[str, Any]
Key = tuple[str, str]
Items = list[Obj] | None

AggregateRule = Callable[[Obj, Items, datetime], Obj]


def _timeless(rule: Callable[[Obj, Items], Obj]) -> AggregateRule:
    def run(obj: Obj, items: Items, now: datetime) -> Obj:
        return rule(obj, items)

    return run


_AGGREGATE: dict[Key, AggregateRule] = {
    **{key: _timeless(rule) for key, rule in aggregate.COUNTERS.items()},
    ("v1", "Service"): _timeless(loadbalancer.aggregate_service),
    ("networking.k8s.io/v1", "Ingress"): _timeless(loadbalancer.aggregate_ingress),
    ("batch/v1", "Job"): aggregate_jobs.aggregate_job,
    ("batch/v1", "CronJob"): _timeless(aggregate_jobs.aggregate_cron_job),
}

_REGISTRY: dict[Operation, dict[Key, Any]] = {
    Operation.INTERPRET_REPLICA: GET_REPLICAS,
    Operation.REVISE_REPLICA: REVISE_REPLICA,
    Operation.RETAIN: RETAIN,
    Operation.AGGREGATE_STATUS: _AGGREGATE,
    Operation.INTERPRET_DEPENDENCY: GET_DEPENDENCIES,
    Operation.INTERPRET_HEALTH: INTERPRET_HEALTH,
}


def has_hook(key: Key, operation: Operation) -> bool:
    """Whether a native rule exists for ``key`` = (apiVersion, kind); ReflectStatus always does."""
    if operation is Operation.INTERPRET_STATUS:
        return True
    return key in _REGISTRY.get(operation, {})


def kinds(operation: Operation) -> list[Key]:
    """The (apiVersion, kind) pairs with a native rule for ``operation``, sorted."""
    return sorted(_REGISTRY.get(operation, {}))


def get_replicas(key: Key, obj: Obj) -> Replicas:
    return GET_REPLICAS[key](obj)


def revise_replica(key: Key, obj: Obj, replicas: int) -> Obj:
    return REVISE_REPLICA[key](obj, replicas)


def retain(key: Key, desired: Obj, observed: Obj) -> Obj:
    return RETAIN[key](desired, observed)


def aggregate_status(key: Key, obj: Obj, items: Items, now: datetime) -> Obj:
    return _AGGREGATE[key](obj, items, now)


def reflect_status(key: Key, obj: Obj) -> Obj | None:
    rule = REFLECT_STATUS.get(key, whole_status)
    return rule(obj)


def interpret_health(key: Key, obj: Obj) -> bool:
    return INTERPRET_HEALTH[key](obj)


def get_dependencies(key: Key, obj: Obj) -> list[Obj]:
    return verify(GET_DEPENDENCIES[key](obj))


__all__ = [
    "aggregate_status", "get_dependencies", "get_replicas", "has_hook", "interpret_health", "kinds",
    "pod_dependencies", "prune", "reflect_status", "replica_requirements", "retain", "revise_replica",
]
