"""Native InterpretHealth: Karmada's healthy_test.go cases, as data."""

from __future__ import annotations

from typing import Any

import pytest

from fleetkeeper.interpreter import native
from fleetkeeper.interpreter.operation import Operation

DEPLOY = ("apps/v1", "Deployment")
STS = ("apps/v1", "StatefulSet")
RS = ("apps/v1", "ReplicaSet")
DS = ("apps/v1", "DaemonSet")
SVC = ("v1", "Service")
ING = ("networking.k8s.io/v1", "Ingress")
PVC = ("v1", "PersistentVolumeClaim")
POD = ("v1", "Pod")
PDB = ("policy/v1", "PodDisruptionBudget")


def rollout(generation: int, replicas: int, status: dict[str, Any]) -> dict[str, Any]:
    return {
        "metadata": {"name": "fake", "generation": generation},
        "spec": {"replicas": replicas},
        "status": status,
    }


CASES = [
    pytest.param(
        DEPLOY,
        rollout(1, 3, {"availableReplicas": 3, "updatedReplicas": 3, "observedGeneration": 1}),
        True,
        id="a deployment whose latest generation is fully updated and available is healthy",
    ),
    pytest.param(
        DEPLOY,
        rollout(1, 3, {"availableReplicas": 3, "updatedReplicas": 3, "observedGeneration": 2}),
        False,
        id="a deployment whose observed generation differs from its generation is unhealthy",
    ),
    pytest.param(
        DEPLOY,
        rollout(1, 3, {"updatedReplicas": 1, "observedGeneration": 1}),
        False,
        id="a deployment with fewer updated replicas than desired is unhealthy",
    ),
    pytest.param(
        DEPLOY,
        rollout(1, 3, {"availableReplicas": 0, "updatedReplicas": 3, "observedGeneration": 1}),
        False,
        id="a deployment with fewer available than updated replicas is unhealthy",
    ),
    pytest.param(
        STS,
        rollout(1, 3, {"availableReplicas": 3, "updatedReplicas": 3, "observedGeneration": 1}),
        True,
        id="a statefulset whose latest generation is fully updated and available is healthy",
    ),
    pytest.param(
        STS,
        rollout(1, 3, {"availableReplicas": 3, "updatedReplicas": 3, "observedGeneration": 2}),
        False,
        id="a statefulset whose observed generation differs from its generation is unhealthy",
    ),
    pytest.param(
        STS,
        rollout(1, 3, {"updatedReplicas": 1, "observedGeneration": 1}),
        False,
        id="a statefulset with fewer updated replicas than desired is unhealthy",
    ),
    pytest.param(
        STS,
        rollout(1, 3, {"availableReplicas": 1, "updatedReplicas": 3, "observedGeneration": 1}),
        False,
        id="a statefulset with fewer available than updated replicas is unhealthy",
    ),
    pytest.param(
        RS,
        {
            "metadata": {"generation": 1},
            "spec": {"replicas": 3},
            "status": {"availableReplicas": 3, "observedGeneration": 1},
        },
        True,
        id="a replicaset with every desired replica available is healthy",
    ),
    pytest.param(
        RS,
        {
            "metadata": {"generation": 1},
            "spec": {"replicas": 3},
            "status": {"availableReplicas": 3, "observedGeneration": 2},
        },
        False,
        id="a replicaset whose observed generation differs from its generation is unhealthy",
    ),
    pytest.param(
        RS,
        {
            "metadata": {"generation": 1},
            "spec": {"replicas": 3},
            "status": {"availableReplicas": 2, "observedGeneration": 2},
        },
        False,
        id="a replicaset with fewer available replicas than desired is unhealthy",
    ),
    pytest.param(
        DS,
        {"metadata": {"generation": 1}, "status": {"observedGeneration": 1}},
        True,
        id="a daemonset that has seen its generation and has nothing to schedule is healthy",
    ),
    pytest.param(
        DS,
        {"metadata": {"generation": 1}, "status": {"observedGeneration": 2}},
        False,
        id="a daemonset whose observed generation differs from its generation is unhealthy",
    ),
    pytest.param(
        DS,
        {"status": {"updatedNumberScheduled": 3, "desiredNumberScheduled": 5}},
        False,
        id="a daemonset updated on fewer nodes than desired is unhealthy",
    ),
    pytest.param(
        DS,
        {"status": {"updatedNumberScheduled": 5, "numberAvailable": 3}},
        False,
        id="a daemonset with fewer available than updated pods is unhealthy",
    ),
    pytest.param(
        SVC,
        {"spec": {"type": "LoadBalancer"}, "status": {"loadBalancer": {"ingress": [{"ip": "localhost"}]}}},
        True,
        id="a load balancer service with an ingress address is healthy",
    ),
    pytest.param(
        SVC,
        {"spec": {"type": "NodePort"}, "status": {"loadBalancer": {"ingress": [{"ip": "localhost"}]}}},
        True,
        id="a service that is not a load balancer is always healthy",
    ),
    pytest.param(
        SVC,
        {"spec": {"type": "LoadBalancer"}, "status": {"loadBalancer": {"ingress": []}}},
        False,
        id="a load balancer service without ingress addresses is unhealthy",
    ),
    pytest.param(
        ING,
        {"status": {"loadBalancer": {"ingress": [{"ip": "localhost"}]}}},
        True,
        id="an ingress with a load balancer address is healthy",
    ),
    pytest.param(
        ING,
        {"status": {"loadBalancer": {"ingress": []}}},
        False,
        id="an ingress without load balancer addresses is unhealthy",
    ),
    pytest.param(PVC, {"status": {"phase": "Bound"}}, True, id="a bound claim is healthy"),
    pytest.param(PVC, {"status": {"phase": "Pending"}}, False, id="a pending claim is unhealthy"),
    pytest.param(
        POD,
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "fake-pod"},
            "status": {"conditions": [{"type": "Ready", "status": "True"}], "phase": "Running"},
        },
        True,
        id="a running pod that is ready is healthy",
    ),
    pytest.param(
        POD,
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "fake-pod"},
            "status": {"phase": "Succeeded"},
        },
        True,
        id="a pod that succeeded is healthy",
    ),
    pytest.param(
        POD,
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "fake-pod"},
            "status": {"conditions": [{"type": "Ready", "status": "Unknown"}], "phase": "Running"},
        },
        False,
        id="a running pod whose readiness is unknown is unhealthy",
    ),
    pytest.param(
        POD,
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "fake-pod"}, "status": {"phase": "Failed"}},
        False,
        id="a failed pod is unhealthy",
    ),
    pytest.param(
        POD,
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "fake-pod"}},
        False,
        id="a pod without conditions or phase is unhealthy",
    ),
    pytest.param(
        PDB,
        {"status": {"desiredHealthy": 2, "currentHealthy": 3}},
        True,
        id="a disruption budget with more healthy pods than desired is healthy",
    ),
    pytest.param(
        PDB,
        {"status": {"desiredHealthy": 2, "currentHealthy": 2}},
        True,
        id="a disruption budget with exactly the desired healthy pods is healthy",
    ),
    pytest.param(
        PDB,
        {"status": {"desiredHealthy": 2, "currentHealthy": 1}},
        False,
        id="a disruption budget with fewer healthy pods than desired is unhealthy",
    ),
]


@pytest.mark.parametrize(("key", "obj", "healthy"), CASES)
def test_native_health(key: tuple[str, str], obj: dict[str, Any], healthy: bool) -> None:
    assert native.interpret_health(key, obj) is healthy


def test_the_native_health_registry_holds_exactly_karmadas_kinds() -> None:
    assert native.kinds(Operation.INTERPRET_HEALTH) == sorted([DEPLOY, STS, RS, DS, SVC, ING, PVC, POD, PDB])
