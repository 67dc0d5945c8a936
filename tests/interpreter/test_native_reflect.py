"""Native ReflectStatus: Karmada's reflectstatus_test.go cases, as data (compared as JSON)."""

from __future__ import annotations

from typing import Any

import pytest

from fleetkeeper import errors
from fleetkeeper.interpreter import native

GEN = "resourcetemplate.karmada.io/generation"
NOW = "2024-05-01T10:00:00Z"


def member(
    api: str,
    kind: str,
    status: Any = None,
    *,
    generation: int | None = 2,
    annotation: str | None = "1",
    **spec: Any,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "test", "namespace": "test-ns"}
    if generation is not None:
        meta["generation"] = generation
    if annotation is not None:
        meta["annotations"] = {GEN: annotation}
    out: dict[str, Any] = {"apiVersion": api, "kind": kind, "metadata": meta}
    if spec:
        out["spec"] = spec
    if status is not None:
        out["status"] = status
    return out


DEPLOY_STATUS = {
    "replicas": 3,
    "updatedReplicas": 3,
    "readyReplicas": 3,
    "availableReplicas": 3,
    "unavailableReplicas": 0,
    "observedGeneration": 2,
    "conditions": [{"type": "Available"}],
}
RS_STATUS = {
    "replicas": 3,
    "readyReplicas": 3,
    "availableReplicas": 3,
    "observedGeneration": 2,
    "fullyLabeledReplicas": 3,
}
DS_STATUS = {
    "currentNumberScheduled": 3,
    "desiredNumberScheduled": 3,
    "numberAvailable": 3,
    "numberMisscheduled": 0,
    "numberReady": 3,
    "updatedNumberScheduled": 3,
    "numberUnavailable": 0,
    "observedGeneration": 2,
}
STS_STATUS = {
    "replicas": 3,
    "readyReplicas": 3,
    "currentReplicas": 3,
    "updatedReplicas": 3,
    "availableReplicas": 3,
    "observedGeneration": 2,
    "currentRevision": "abc",
}
JOB_STATUS = {
    "active": 1,
    "succeeded": 2,
    "failed": 0,
    "completionTime": NOW,
    "startTime": NOW,
    "ready": 1,
    "conditions": [
        {
            "type": "Complete",
            "status": "True",
            "reason": "JobComplete",
            "message": "Job completed successfully",
        }
    ],
}
LB_STATUS = {"loadBalancer": {"ingress": [{"ip": "192.0.2.1"}]}}
D, RS, DS, STS = (("apps/v1", k) for k in ("Deployment", "ReplicaSet", "DaemonSet", "StatefulSet"))
JOB, SVC, ING = ("batch/v1", "Job"), ("v1", "Service"), ("networking.k8s.io/v1", "Ingress")
PDB, HPA = ("policy/v1", "PodDisruptionBudget"), ("autoscaling/v2", "HorizontalPodAutoscaler")


def job(**changes: Any) -> dict[str, Any]:
    return {**JOB_STATUS, **changes}


def job_reflected(**changes: Any) -> dict[str, Any]:
    out = {k: v for k, v in job(**changes).items() if k != "ready" and v not in (0, None, [])}
    return out


CASES = [
    pytest.param(
        member(*D, DEPLOY_STATUS),
        {
            "generation": 2,
            "resourceTemplateGeneration": 1,
            "replicas": 3,
            "updatedReplicas": 3,
            "readyReplicas": 3,
            "availableReplicas": 3,
            "observedGeneration": 2,
        },
        id="a deployment reflects its counters and generations",
    ),
    pytest.param(member(*D), None, id="a deployment without status reflects nothing"),
    pytest.param(
        member(*D, {}, generation=None, annotation="0"),
        None,
        id="a deployment whose reflected status would be empty reflects nothing",
    ),
    pytest.param(
        member(*RS, RS_STATUS),
        {
            "generation": 2,
            "resourceTemplateGeneration": 1,
            "replicas": 3,
            "readyReplicas": 3,
            "availableReplicas": 3,
            "observedGeneration": 2,
        },
        id="a replicaset reflects its counters and generations",
    ),
    pytest.param(member(*RS), None, id="a replicaset without status reflects nothing"),
    pytest.param(
        member(*DS, DS_STATUS),
        {
            "generation": 2,
            "resourceTemplateGeneration": 1,
            "currentNumberScheduled": 3,
            "numberMisscheduled": 0,
            "desiredNumberScheduled": 3,
            "numberReady": 3,
            "observedGeneration": 2,
            "updatedNumberScheduled": 3,
            "numberAvailable": 3,
        },
        id="a daemonset reflects its counters and generations",
    ),
    pytest.param(member(*DS, generation=1), None, id="a daemonset without status reflects nothing"),
    pytest.param(
        member(*STS, STS_STATUS),
        {
            "generation": 2,
            "resourceTemplateGeneration": 1,
            "replicas": 3,
            "readyReplicas": 3,
            "currentReplicas": 3,
            "updatedReplicas": 3,
            "availableReplicas": 3,
        },
        id="a statefulset reflects counters but no observedGeneration",
    ),
    pytest.param(
        member(*STS, {"replicas": 2, "readyReplicas": 1, "currentReplicas": 1}),
        {
            "generation": 2,
            "resourceTemplateGeneration": 1,
            "replicas": 2,
            "readyReplicas": 1,
            "currentReplicas": 1,
            "availableReplicas": 0,
        },
        id="a statefulset always reflects replicas and availableReplicas",
    ),
    pytest.param(member(*STS, generation=1), None, id="a statefulset without status reflects nothing"),
    pytest.param(member(*SVC, LB_STATUS, type="ClusterIP"), None, id="a ClusterIP service reflects nothing"),
    pytest.param(
        member(*SVC, type="LoadBalancer"), None, id="a load balancer service without status reflects nothing"
    ),
    pytest.param(
        member(*SVC, {**LB_STATUS, "conditions": [{"type": "x"}]}, type="LoadBalancer"),
        LB_STATUS,
        id="a load balancer service reflects only its load balancer",
    ),
    pytest.param(member(*ING, LB_STATUS), LB_STATUS, id="an ingress reflects its whole status"),
    pytest.param(member(*ING), None, id="an ingress without status reflects nothing"),
    pytest.param(member(*JOB, job()), job_reflected(), id="a job reflects counts, conditions and times"),
    pytest.param(member(*JOB), None, id="a job without status reflects nothing"),
    pytest.param(
        member(*JOB, job(conditions=[])),
        job_reflected(conditions=[]),
        id="a job with no conditions reflects none",
    ),
    pytest.param(
        member(
            *JOB,
            job(
                failed=1,
                active=0,
                succeeded=0,
                conditions=[
                    {
                        "type": "Failed",
                        "status": "True",
                        "reason": "JobFailed",
                        "message": "Job failed due to error",
                    }
                ],
            ),
        ),
        job_reflected(
            failed=1,
            active=0,
            succeeded=0,
            conditions=[
                {
                    "type": "Failed",
                    "status": "True",
                    "reason": "JobFailed",
                    "message": "Job failed due to error",
                }
            ],
        ),
        id="a failed job reflects its failure",
    ),
    pytest.param(
        member(*JOB, job(succeeded=0, completionTime=None, conditions=[])),
        job_reflected(succeeded=0, completionTime=None, conditions=[]),
        id="an active job reflects only what it has",
    ),
    pytest.param(
        member(*JOB, job(completionTime=None)),
        job_reflected(completionTime=None),
        id="a job without completion time reflects none",
    ),
    pytest.param(
        member(*JOB, job(startTime=None)),
        job_reflected(startTime=None),
        id="a job without start time reflects none",
    ),
    pytest.param(
        member(
            *PDB,
            {
                "currentHealthy": 2,
                "desiredHealthy": 3,
                "disruptionsAllowed": 1,
                "expectedPods": 3,
                "disruptedPods": {"pod1": NOW},
                "observedGeneration": 4,
            },
        ),
        {
            "currentHealthy": 2,
            "desiredHealthy": 3,
            "disruptionsAllowed": 1,
            "expectedPods": 3,
            "disruptedPods": {"pod1": NOW},
        },
        id="a disruption budget reflects its counters and disrupted pods",
    ),
    pytest.param(member(*PDB), None, id="a disruption budget without status reflects nothing"),
    pytest.param(
        member(*HPA, {"currentReplicas": 2, "desiredReplicas": 3, "currentMetrics": []}),
        {"currentReplicas": 2, "desiredReplicas": 3},
        id="an autoscaler reflects its replica counts",
    ),
    pytest.param(member(*HPA), None, id="an autoscaler without status reflects nothing"),
    pytest.param(
        {"status": {"key": "value", "num": 1}},
        {"key": "value", "num": 1},
        id="any other kind reflects its whole status",
    ),
    pytest.param({}, None, id="any other kind without status reflects nothing"),
]


@pytest.mark.parametrize(("obj", "expected"), CASES)
def test_native_reflect_status(obj: dict[str, Any], expected: dict[str, Any] | None) -> None:
    key = (obj.get("apiVersion", "example.io/v1"), obj.get("kind", "Widget"))
    assert native.reflect_status(key, obj) == expected


ERRORS = [
    pytest.param(
        member(*D, DEPLOY_STATUS, annotation="invalid"),
        id="a deployment with a malformed generation annotation",
    ),
    pytest.param(
        member(*D, DEPLOY_STATUS, annotation=None), id="a deployment without the generation annotation"
    ),
    pytest.param(
        member(*RS, RS_STATUS, annotation="invalid"), id="a replicaset with a malformed generation annotation"
    ),
    pytest.param(
        member(*RS, RS_STATUS, annotation=None), id="a replicaset without the generation annotation"
    ),
    pytest.param(
        member(*DS, {"currentNumberScheduled": 1}, annotation="invalid"),
        id="a daemonset with a malformed generation annotation",
    ),
    pytest.param(member(*DS, "invalid"), id="a daemonset whose status is not an object"),
    pytest.param(
        member(*DS, {"currentNumberScheduled": 1}, annotation=None),
        id="a daemonset without the generation annotation",
    ),
    pytest.param(member(*STS, "invalid"), id="a statefulset whose status is not an object"),
    pytest.param(
        member(*STS, {"replicas": 1}, annotation=None), id="a statefulset without the generation annotation"
    ),
    pytest.param(
        member(*SVC, "invalid", type="LoadBalancer"),
        id="a load balancer service whose status is not an object",
    ),
    pytest.param(member(*ING, "invalid"), id="an ingress whose status is not an object"),
    pytest.param(member(*JOB, {"active": "invalid"}), id="a job whose active count is not a number"),
    pytest.param(member(*JOB, "invalid"), id="a job whose status is not an object"),
    pytest.param(member(*PDB, "invalid"), id="a disruption budget whose status is not an object"),
    pytest.param(member(*HPA, "invalid"), id="an autoscaler whose status is not an object"),
    pytest.param(
        {"apiVersion": "example.io/v1", "kind": "Widget", "status": "invalid"},
        id="any other kind whose status is not an object",
    ),
]


@pytest.mark.parametrize("obj", ERRORS)
def test_native_reflect_status_errors(obj: dict[str, Any]) -> None:
    with pytest.raises(errors.InterpreterError):
        native.reflect_status((obj["apiVersion"], obj["kind"]), obj)


def test_the_missing_annotation_error_names_the_annotation_and_the_object() -> None:
    with pytest.raises(
        errors.InterpreterError,
        match=r"resourcetemplate\.karmada\.io/generation of Deployment "
        r"test-ns/test",
    ):
        native.reflect_status(D, member(*D, DEPLOY_STATUS, annotation=None))
