"""Native GetReplicas, ReviseReplica and replica requirements (replica_test.go,
revisereplica_test.go and the requirement helper tests, as data; plus resource sums)."""

from __future__ import annotations

from typing import Any

import pytest

from fleetkeeper import errors
from fleetkeeper.interpreter import native
from fleetkeeper.interpreter.native.requirements import replica_requirements
from fleetkeeper.interpreter.operation import Operation

SCHEDULING = {
    "nodeSelector": {"foo": "foo1"},
    "tolerations": [{"key": "foo", "operator": "Exists", "effect": "NoSchedule"}],
    "affinity": {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchFields": [{"key": "foo", "operator": "Exists"}]}]
            }
        }
    },
}
CLAIM = {
    "nodeSelector": {"foo": "foo1"},
    "tolerations": [{"key": "foo", "operator": "Exists", "effect": "NoSchedule"}],
    "hardNodeAffinity": {"nodeSelectorTerms": [{"matchFields": [{"key": "foo", "operator": "Exists"}]}]},
}


def workload(kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    api = "batch/v1" if kind == "Job" else "v1" if kind == "Pod" else "apps/v1"
    return {"apiVersion": api, "kind": kind, "metadata": {"name": "fake"}, "spec": spec}


@pytest.mark.parametrize(
    ("obj", "replicas"),
    [
        pytest.param(
            workload("Deployment", {"replicas": 2, "template": {"spec": SCHEDULING}}),
            2,
            id="a deployment has spec.replicas replicas",
        ),
        pytest.param(
            workload("StatefulSet", {"replicas": 2, "template": {"spec": SCHEDULING}}),
            2,
            id="a statefulset has spec.replicas replicas",
        ),
        pytest.param(
            workload("ReplicaSet", {"replicas": 3, "template": {"spec": SCHEDULING}}),
            3,
            id="a replicaset has spec.replicas replicas",
        ),
        pytest.param(
            workload("Job", {"parallelism": 3, "completions": 2, "template": {"spec": SCHEDULING}}),
            2,
            id="a job never runs more pods at once than it needs completions",
        ),
        pytest.param(workload("Pod", SCHEDULING), 1, id="a pod is one replica"),
    ],
)
def test_replicas_come_with_the_node_claim_of_the_pod_template(obj: dict[str, Any], replicas: int) -> None:
    key = (obj["apiVersion"], obj["kind"])
    assert native.get_replicas(key, obj) == (replicas, {"nodeClaim": CLAIM})


@pytest.mark.parametrize(
    ("obj", "replicas"),
    [
        pytest.param(workload("Deployment", {}), 0, id="a deployment without spec.replicas counts zero"),
        pytest.param(
            workload("Job", {"parallelism": 4}), 4, id="a job without completions runs its parallelism"
        ),
        pytest.param(
            workload("Job", {"parallelism": 2, "completions": 5}),
            2,
            id="a job with more completions than parallelism runs its parallelism",
        ),
        pytest.param(workload("Job", {}), 0, id="a job without parallelism counts zero"),
    ],
)
def test_replica_counts(obj: dict[str, Any], replicas: int) -> None:
    assert native.get_replicas((obj["apiVersion"], obj["kind"]), obj) == (replicas, None)


def test_requirements_carry_the_namespace_and_priority_class_of_the_template() -> None:
    obj = workload(
        "Deployment",
        {
            "replicas": 1,
            "template": {
                "spec": {
                    "priorityClassName": "high",
                    "containers": [{"resources": {"requests": {"cpu": "1"}}}],
                }
            },
        },
    )
    obj["metadata"]["namespace"] = "shop"
    assert native.get_replicas(("apps/v1", "Deployment"), obj)[1] == {
        "resourceRequest": {"cpu": "1"},
        "namespace": "shop",
        "priorityClassName": "high",
    }


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        pytest.param({}, None, id="a template without constraints or requests requires nothing"),
        pytest.param(
            {"spec": SCHEDULING},
            {"nodeClaim": CLAIM},
            id="a template with scheduling constraints claims nodes",
        ),
        pytest.param(
            {"spec": {"containers": [{"resources": {"limits": {"cpu": "200m"}}}]}},
            {"resourceRequest": {"cpu": "200m"}},
            id="a limit without a request becomes the request",
        ),
        pytest.param({"spec": {"tolerations": []}}, None, id="an empty toleration list claims nothing"),
        pytest.param(
            {"spec": {"nodeSelector": {}}},
            {"nodeClaim": {}},
            id="an empty node selector still makes a node claim, as in Go",
        ),
        pytest.param(
            {
                "spec": {
                    "containers": [
                        {"resources": {"requests": {"cpu": "100m", "memory": "100M"}}},
                        {"resources": {"requests": {"cpu": "1.2", "memory": "1.2G"}, "limits": {"cpu": "2"}}},
                    ]
                }
            },
            {"resourceRequest": {"cpu": "1300m", "memory": "1300000000"}},
            id="container requests add up, a request wins over its limit, and memory prints in binary units",
        ),
        pytest.param(
            {
                "spec": {
                    "containers": [{"resources": {"requests": {"cpu": "100m", "memory": "1Gi"}}}],
                    "initContainers": [{"resources": {"requests": {"cpu": "500m", "memory": "1Mi"}}}],
                    "overhead": {"cpu": "10m"},
                }
            },
            {"resourceRequest": {"cpu": "510m", "memory": "1Gi"}},
            id="init containers count by their maximum and the overhead adds on top",
        ),
        pytest.param(
            {
                "spec": {
                    "containers": [
                        {
                            "resources": {
                                "requests": {
                                    "nvidia.com/gpu": "1",
                                    "hugepages-2Mi": "4Mi",
                                    "example.com/widget": 2,
                                    "cpu": 0.5,
                                    "unknown-native": "1",
                                    "ephemeral-storage": "1.5Gi",
                                }
                            }
                        }
                    ]
                }
            },
            {
                "resourceRequest": {
                    "nvidia.com/gpu": "1",
                    "hugepages-2Mi": "4Mi",
                    "example.com/widget": "2",
                    "cpu": "500m",
                    "ephemeral-storage": "1536Mi",
                }
            },
            id="extended resources and hugepages count, unknown native names do not",
        ),
        pytest.param(
            {"spec": {"containers": [{"resources": {"requests": {"memory": "1000001"}}}]}},
            {"resourceRequest": {"memory": "1000001"}},
            id="memory that is not a multiple of 1024 prints as plain bytes",
        ),
        pytest.param(
            {"spec": {"containers": [{"resources": {"requests": {"cpu": "0", "memory": "0"}}}]}},
            None,
            id="zero requests are left out",
        ),
    ],
)
def test_replica_requirements(template: dict[str, Any], expected: dict[str, Any] | None) -> None:
    assert replica_requirements(template, with_priority=False) == expected


def test_an_unparsable_request_is_an_error_naming_the_field() -> None:
    template = {"spec": {"containers": [{"resources": {"requests": {"cpu": "lots"}}}]}}
    with pytest.raises(errors.InterpreterError, match=r"spec\.containers\[0\]\.resources\.cpu"):
        replica_requirements(template)


REVISE = [
    pytest.param(
        workload("Deployment", {"replicas": 1}),
        3,
        workload("Deployment", {"replicas": 3}),
        id="a deployment gets the cluster's share in spec.replicas",
    ),
    pytest.param(
        workload("ReplicaSet", {"replicas": 1}),
        3,
        workload("ReplicaSet", {"replicas": 3}),
        id="a replicaset gets the cluster's share in spec.replicas",
    ),
    pytest.param(
        workload("StatefulSet", {"replicas": 1}),
        3,
        workload("StatefulSet", {"replicas": 3}),
        id="a statefulset gets the cluster's share in spec.replicas",
    ),
    pytest.param(
        workload("Job", {"parallelism": 1}),
        3,
        workload("Job", {"parallelism": 3}),
        id="a job gets the cluster's share in spec.parallelism",
    ),
    pytest.param(
        workload("Deployment", {}),
        3,
        workload("Deployment", {}),
        id="a deployment without spec.replicas is left as it is",
    ),
]


@pytest.mark.parametrize(("obj", "replicas", "expected"), REVISE)
def test_revise_replica(obj: dict[str, Any], replicas: int, expected: dict[str, Any]) -> None:
    before = repr(obj)
    assert native.revise_replica((obj["apiVersion"], obj["kind"]), obj, replicas) == expected
    assert repr(obj) == before, "the input object must not be modified"


@pytest.mark.parametrize("kind", ["Deployment", "ReplicaSet", "StatefulSet"])
def test_a_replica_field_that_is_not_an_integer_is_refused(kind: str) -> None:
    obj = workload(kind, {"replicas": "1"})
    with pytest.raises(errors.InterpreterError, match=r"spec\.replicas"):
        native.revise_replica(("apps/v1", kind), obj, 3)


def test_a_parallelism_that_is_not_an_integer_is_refused() -> None:
    with pytest.raises(errors.InterpreterError, match=r"spec\.parallelism"):
        native.revise_replica(("batch/v1", "Job"), workload("Job", {"parallelism": 1.5}), 3)


def test_the_native_replica_registries_hold_exactly_karmadas_kinds() -> None:
    apps = [("apps/v1", k) for k in ("Deployment", "ReplicaSet", "StatefulSet")]
    assert native.kinds(Operation.INTERPRET_REPLICA) == sorted([*apps, ("batch/v1", "Job"), ("v1", "Pod")])
    assert native.kinds(Operation.REVISE_REPLICA) == sorted([*apps, ("batch/v1", "Job")])
