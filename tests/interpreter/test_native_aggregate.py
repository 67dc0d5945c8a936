"""Native AggregateStatus: Karmada's aggregatestatus_test.go cases, as data (compared as typed
objects, see :mod:`.semantic`)."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pytest

from fleetkeeper.interpreter import native
from fleetkeeper.interpreter.operation import Operation

from .semantic import typed

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
STAMP = "2026-01-01T12:00:00Z"
START = "2023-02-08T07:16:00Z"


def obj(api: str, kind: str, status: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"apiVersion": api, "kind": kind, "metadata": {}}
    if spec:
        out["spec"] = spec
    if status is not None:
        out["status"] = status
    return out


def items(*statuses: dict[str, Any] | None) -> list[dict[str, Any]]:
    return [{"clusterName": f"member{i}", "status": s, "applied": True} for i, s in enumerate(statuses, 1)]


# ------------------------------------------------------------------ workloads
DEPLOY_MEMBER = {
    "replicas": 1,
    "readyReplicas": 1,
    "updatedReplicas": 1,
    "availableReplicas": 1,
    "unavailableReplicas": 0,
}
DEPLOY_SUM = {"replicas": 2, "readyReplicas": 2, "updatedReplicas": 2, "availableReplicas": 2}
DS_MEMBER = {
    "currentNumberScheduled": 1,
    "numberMisscheduled": 0,
    "desiredNumberScheduled": 1,
    "numberReady": 1,
    "updatedNumberScheduled": 1,
    "numberAvailable": 1,
    "numberUnavailable": 0,
}
DS_SUM = {
    "currentNumberScheduled": 2,
    "desiredNumberScheduled": 2,
    "numberReady": 2,
    "updatedNumberScheduled": 2,
    "numberAvailable": 2,
}
STS_MEMBER = {
    "replicas": 1,
    "readyReplicas": 1,
    "currentReplicas": 1,
    "updatedReplicas": 1,
    "availableReplicas": 1,
}
STS_SUM = {
    "replicas": 2,
    "readyReplicas": 2,
    "currentReplicas": 2,
    "updatedReplicas": 2,
    "availableReplicas": 2,
}
D, DS, STS = ("apps/v1", "Deployment"), ("apps/v1", "DaemonSet"), ("apps/v1", "StatefulSet")

# ------------------------------------------------------------------ services and ingresses
LB = {"loadBalancer": {"ingress": [{"ip": "8.8.8.8"}]}}

# ------------------------------------------------------------------ jobs
JOB_DONE = {
    "active": 0,
    "succeeded": 1,
    "failed": 0,
    "startTime": START,
    "completionTime": START,
    "conditions": [{"type": "Complete", "status": "True"}, {"type": "SuccessCriteriaMet", "status": "True"}],
}
JOB_FAILED = {
    "active": 0,
    "succeeded": 0,
    "failed": 1,
    "startTime": START,
    "completionTime": START,
    "conditions": [{"type": "Failed", "status": "True"}],
}


def condition(kind: str, reason: str, message: str) -> dict[str, Any]:
    return {
        "type": kind,
        "status": "True",
        "lastProbeTime": STAMP,
        "lastTransitionTime": STAMP,
        "reason": reason,
        "message": message,
    }


JOB_COMPLETE = {
    "succeeded": 2,
    "startTime": START,
    "completionTime": START,
    "conditions": [
        condition("Complete", "Completed", "Job completed"),
        condition(
            "SuccessCriteriaMet", "CompletionsReached", "All member clusters have met success criteria"
        ),
    ],
}
JOB_PARTLY_FAILED = {
    "succeeded": 1,
    "failed": 1,
    "startTime": START,
    "completionTime": START,
    "conditions": [condition("Failed", "JobFailed", "Job executed failed in member clusters member2")],
}

# ------------------------------------------------------------------ pods
RUNNING = {"running": {"startedAt": START}}


def full_container(ready: bool) -> dict[str, Any]:
    return {
        "containerID": "containerd://6cee0afa333472f672341352e0d",
        "image": "nginx:latest",
        "imageID": "docker.io/library/import@sha256:dfb593",
        "name": "busybox-2",
        "ready": ready,
        "restartCount": 0,
        "started": True,
        "state": RUNNING,
    }


INIT_STATUSES = [
    {"ready": False, "state": {"waiting": {"reason": "PodInitializing"}}},
    {"ready": False, "state": RUNNING},
]
POD_RUNNING = {"ready": True, "state": RUNNING}
POD_CRASHED = {"ready": False, "state": {"terminated": {"exitCode": 125}}}
POD_EXITED = {"ready": False, "state": {"terminated": {"exitCode": 0}}}
POD = ("v1", "Pod")

# ------------------------------------------------------------------ pdb, cronjob, hpa
PDB = ("policy/v1", "PodDisruptionBudget")
PDB_ONE = {"currentHealthy": 1, "desiredHealthy": 1, "disruptionsAllowed": 1, "expectedPods": 1}
PDB_TWO = {"currentHealthy": 2, "desiredHealthy": 2, "disruptionsAllowed": 2, "expectedPods": 2}
EVICTED = "2024-05-01T10:00:00Z"
PDB_SICK = {
    "currentHealthy": 0,
    "desiredHealthy": 1,
    "disruptionsAllowed": 0,
    "expectedPods": 1,
    "disruptedPods": {"pod-1234": EVICTED},
}
PDB_SICK_SUM = {
    "currentHealthy": 0,
    "desiredHealthy": 2,
    "disruptionsAllowed": 0,
    "expectedPods": 2,
    "disruptedPods": {"member1/pod-1234": EVICTED, "member2/pod-1234": EVICTED},
}
ACTIVE_JOB = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "name": "foo",
    "namespace": "default",
    "resourceVersion": "1",
    "uid": "1d5db04f-f2e8-4807-b6d4-7b78f402250d",
}
HPA = ("autoscaling/v2", "HorizontalPodAutoscaler")
PV, PVC = ("v1", "PersistentVolume"), ("v1", "PersistentVolumeClaim")

CASES = [
    pytest.param(
        obj(*D),
        items(DEPLOY_MEMBER, DEPLOY_MEMBER),
        obj(*D, DEPLOY_SUM),
        id="deployment counters are summed over the members",
    ),
    pytest.param(
        obj(*D, DEPLOY_SUM),
        items(DEPLOY_MEMBER, DEPLOY_MEMBER),
        obj(*D, DEPLOY_SUM),
        id="an up-to-date deployment status is left alone",
    ),
    pytest.param(
        obj("v1", "Service", type="ClusterIP"),
        items({}),
        obj("v1", "Service", type="ClusterIP"),
        id="a ClusterIP service status is never aggregated",
    ),
    pytest.param(
        obj("v1", "Service", type="NodePort"),
        items({}),
        obj("v1", "Service", type="NodePort"),
        id="a NodePort service status is never aggregated",
    ),
    pytest.param(
        obj("v1", "Service", type="ExternalName"),
        items({}),
        obj("v1", "Service", type="ExternalName"),
        id="an ExternalName service status is never aggregated",
    ),
    pytest.param(
        obj("v1", "Service", type="LoadBalancer"),
        items(LB),
        obj("v1", "Service", LB, type="LoadBalancer"),
        id="a load balancer service shows the members' addresses",
    ),
    pytest.param(
        obj("v1", "Service", LB, type="LoadBalancer"),
        items(LB),
        obj("v1", "Service", LB, type="LoadBalancer"),
        id="an up-to-date load balancer service status is left alone",
    ),
    pytest.param(
        obj("networking.k8s.io/v1", "Ingress"),
        items(LB),
        obj("networking.k8s.io/v1", "Ingress", LB),
        id="an ingress shows the members' addresses",
    ),
    pytest.param(
        obj("networking.k8s.io/v1", "Ingress", LB),
        items(LB),
        obj("networking.k8s.io/v1", "Ingress", LB),
        id="an up-to-date ingress status is left alone",
    ),
    pytest.param(
        obj("batch/v1", "Job"),
        items(JOB_DONE, JOB_DONE),
        obj("batch/v1", "Job", JOB_COMPLETE),
        id="a job complete in every member is complete and met its success criteria",
    ),
    pytest.param(
        obj("batch/v1", "Job"),
        items(JOB_DONE, JOB_FAILED),
        obj("batch/v1", "Job", JOB_PARTLY_FAILED),
        id="a job that failed in one member is failed, naming that member",
    ),
    pytest.param(
        obj("batch/v1", "Job", JOB_COMPLETE),
        items(JOB_DONE, JOB_DONE),
        obj("batch/v1", "Job", JOB_COMPLETE),
        id="a finished job is never updated again",
    ),
    pytest.param(
        obj(*DS),
        items(DS_MEMBER, DS_MEMBER),
        obj(*DS, DS_SUM),
        id="daemonset counters are summed over the members",
    ),
    pytest.param(
        obj(*DS, DS_SUM),
        items(DS_MEMBER, DS_MEMBER),
        obj(*DS, DS_SUM),
        id="an up-to-date daemonset status is left alone",
    ),
    pytest.param(
        obj(*STS),
        items(STS_MEMBER, STS_MEMBER),
        obj(*STS, STS_SUM),
        id="statefulset counters are summed over the members",
    ),
    pytest.param(
        obj(*STS, STS_SUM),
        items(STS_MEMBER, STS_MEMBER),
        obj(*STS, STS_SUM),
        id="an up-to-date statefulset status is left alone",
    ),
    pytest.param(
        obj(*POD),
        items({"initContainerStatuses": INIT_STATUSES, "phase": "Pending"}),
        obj(*POD, {"initContainerStatuses": INIT_STATUSES, "phase": "Pending"}),
        id="init container readiness and state are collected",
    ),
    pytest.param(
        obj(*POD),
        items(
            {"containerStatuses": [full_container(True)], "phase": "Running"},
            {"containerStatuses": [full_container(True)], "phase": "Running"},
        ),
        obj(*POD, {"containerStatuses": [POD_RUNNING, POD_RUNNING], "phase": "Running"}),
        id="a pod running everywhere is running, with only readiness and state per container",
    ),
    pytest.param(
        obj(*POD, {"containerStatuses": [POD_RUNNING, POD_RUNNING], "phase": "Running"}),
        items(
            {"containerStatuses": [full_container(True)], "phase": "Running"},
            {"containerStatuses": [full_container(True)], "phase": "Running"},
        ),
        obj(*POD, {"containerStatuses": [POD_RUNNING, POD_RUNNING], "phase": "Running"}),
        id="an up-to-date pod status is left alone",
    ),
    pytest.param(
        obj(*POD, {"containerStatuses": [POD_RUNNING, POD_RUNNING], "phase": "Running"}),
        items(
            {"containerStatuses": [full_container(True)], "phase": "Running"},
            {"containerStatuses": [full_container(False)], "phase": "Pending"},
        ),
        obj(
            *POD, {"containerStatuses": [POD_RUNNING, {"ready": False, "state": RUNNING}], "phase": "Pending"}
        ),
        id="a pod pending in one member is pending",
    ),
    pytest.param(
        obj(*POD),
        items(
            {"containerStatuses": [POD_RUNNING], "phase": "Running"},
            {"containerStatuses": [POD_CRASHED], "phase": "Failed"},
        ),
        obj(*POD, {"containerStatuses": [POD_RUNNING, POD_CRASHED], "phase": "Failed"}),
        id="running and failed members make a failed pod",
    ),
    pytest.param(
        obj(*POD),
        items(
            {"containerStatuses": [POD_RUNNING], "phase": "Running"},
            {"containerStatuses": [POD_EXITED], "phase": "Succeeded"},
        ),
        obj(*POD, {"containerStatuses": [POD_RUNNING, POD_EXITED], "phase": "Running"}),
        id="running and succeeded members make a running pod",
    ),
    pytest.param(
        obj(*POD),
        items({"containerStatuses": [POD_RUNNING], "phase": "Running"}, None),
        obj(*POD, {"containerStatuses": [POD_RUNNING], "phase": "Pending"}),
        id="a member without a status makes the pod pending",
    ),
    pytest.param(
        obj(*PVC),
        items({"phase": "Bound"}, {"phase": "Bound"}),
        obj(*PVC, {"phase": "Bound"}),
        id="a claim bound everywhere is bound",
    ),
    pytest.param(
        obj(*PVC),
        items({"phase": "Bound"}, {"phase": "Lost"}),
        obj(*PVC, {"phase": "Lost"}),
        id="a claim lost in one member is lost",
    ),
    pytest.param(
        obj(*PVC),
        items({"phase": "Bound"}, {"phase": "Pending"}),
        obj(*PVC, {"phase": "Pending"}),
        id="a claim pending in one member is pending",
    ),
    pytest.param(
        obj(*PVC, {"phase": "Bound"}),
        items({"phase": "Bound"}, {"phase": "Bound"}),
        obj(*PVC, {"phase": "Bound"}),
        id="an up-to-date claim status is left alone",
    ),
    pytest.param(
        obj(*PV),
        items({"phase": "Available"}, {"phase": "Available"}),
        obj(*PV, {"phase": "Available"}),
        id="a volume available everywhere is available",
    ),
    pytest.param(
        obj(*PV),
        items({"phase": "Released"}, {"phase": "Released"}),
        obj(*PV, {"phase": "Released"}),
        id="a volume released everywhere is released",
    ),
    pytest.param(
        obj(*PV),
        items({"phase": "Bound"}, {"phase": "Released"}),
        obj(*PV, {"phase": "Bound"}),
        id="bound wins over released",
    ),
    pytest.param(
        obj(*PV),
        items({"phase": "Released"}, {"phase": "Failed"}),
        obj(*PV, {"phase": "Failed"}),
        id="failed wins over everything",
    ),
    pytest.param(
        obj(*PV),
        items({"phase": "Available"}, {"phase": "Pending"}),
        obj(*PV, {"phase": "Pending"}),
        id="pending wins over available",
    ),
    pytest.param(
        obj(*PV, {"phase": "Available"}),
        items({"phase": "Available"}, {"phase": "Available"}),
        obj(*PV, {"phase": "Available"}),
        id="an up-to-date volume status is left alone",
    ),
    pytest.param(
        obj(*PDB, PDB_ONE),
        items(PDB_ONE, PDB_ONE),
        obj(*PDB, PDB_TWO),
        id="disruption budget counters are summed over the members",
    ),
    pytest.param(
        obj(*PDB, PDB_ONE),
        items(PDB_SICK, PDB_SICK),
        obj(*PDB, PDB_SICK_SUM),
        id="disrupted pods are listed per member cluster",
    ),
    pytest.param(
        obj(*PDB, PDB_TWO),
        items(PDB_ONE, PDB_ONE),
        obj(*PDB, PDB_TWO),
        id="an up-to-date disruption budget status is left alone",
    ),
    pytest.param(
        obj("batch/v1", "CronJob", {"active": []}),
        items(
            {"active": [ACTIVE_JOB], "lastScheduleTime": START, "lastSuccessfulTime": None},
            {
                "active": [ACTIVE_JOB],
                "lastScheduleTime": "2023-02-08T07:17:00Z",
                "lastSuccessfulTime": "2023-02-08T07:17:00Z",
            },
        ),
        obj(
            "batch/v1",
            "CronJob",
            {
                "active": [ACTIVE_JOB, ACTIVE_JOB],
                "lastScheduleTime": "2023-02-08T07:17:00Z",
                "lastSuccessfulTime": "2023-02-08T07:17:00Z",
            },
        ),
        id="a cronjob lists every member's active jobs and the latest times",
    ),
    pytest.param(
        obj(*HPA, {"currentReplicas": 0, "desiredReplicas": 0}),
        items(
            {"currentReplicas": 2, "desiredReplicas": 2}, {"currentReplicas": 4, "desiredReplicas": 4}, None
        ),
        obj(*HPA, {"currentReplicas": 6, "desiredReplicas": 6}),
        id="autoscaler replicas are summed, members without status skipped",
    ),
    pytest.param(
        obj(*HPA, {"currentReplicas": 6, "desiredReplicas": 6}),
        items(
            {"currentReplicas": 2, "desiredReplicas": 2}, {"currentReplicas": 4, "desiredReplicas": 4}, None
        ),
        obj(*HPA, {"currentReplicas": 6, "desiredReplicas": 6}),
        id="an up-to-date autoscaler status is left alone",
    ),
]


@pytest.mark.parametrize(("template", "members", "expected"), CASES)
def test_native_aggregate_status(
    template: dict[str, Any], members: list[dict[str, Any]], expected: dict[str, Any]
) -> None:
    before = copy.deepcopy(template)
    got = native.aggregate_status((template["apiVersion"], template["kind"]), template, members, NOW)
    assert typed(got) == typed(expected)
    assert template == before, "the template must not be modified"


def generations(observed: int, generation: int, template: int) -> dict[str, Any]:
    return {
        **DEPLOY_MEMBER,
        "observedGeneration": observed,
        "generation": generation,
        "resourceTemplateGeneration": template,
    }


@pytest.mark.parametrize(
    ("members", "observed"),
    [
        pytest.param(
            items(generations(3, 3, 2), generations(5, 5, 2)),
            2,
            id="observedGeneration advances when every member runs the latest template",
        ),
        pytest.param(
            items(generations(3, 3, 2), generations(4, 5, 2)),
            1,
            id="observedGeneration holds while a member has not seen its latest spec",
        ),
        pytest.param(
            items(generations(3, 3, 2), generations(5, 5, 1)),
            1,
            id="observedGeneration holds while a member runs an older template",
        ),
        pytest.param(
            items(generations(3, 3, 2), None), 1, id="observedGeneration holds while a member has no status"
        ),
        pytest.param([], 2, id="observedGeneration advances when there are no members"),
    ],
)
def test_the_observed_generation_rule(members: list[dict[str, Any]], observed: int) -> None:
    template = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"generation": 2},
        "status": {"observedGeneration": 1},
    }
    got = native.aggregate_status(D, template, members, NOW)
    assert got["status"]["observedGeneration"] == observed


def test_a_pod_with_no_items_at_all_is_left_alone() -> None:
    pod = obj(*POD, {"phase": "Running"})
    assert native.aggregate_status(POD, pod, None, NOW) == pod


@pytest.mark.parametrize(
    ("ingresses", "expected"),
    [
        pytest.param(
            [{"ip": "2.2.2.2"}, {"hostname": "b.example"}, {"ip": "1.1.1.1"}, {"hostname": "a.example"}],
            [{"hostname": "a.example"}, {"hostname": "b.example"}, {"ip": "1.1.1.1"}, {"ip": "2.2.2.2"}],
            id="hostnames sort first, then addresses",
        ),
        pytest.param(
            [
                {"ip": "1.1.1.1", "ports": [{"port": 80, "protocol": "TCP"}]},
                {
                    "ip": "1.1.1.1",
                    "ports": [{"port": 443, "protocol": "TCP"}, {"port": 80, "protocol": "TCP"}],
                },
            ],
            [{"ip": "1.1.1.1", "ports": [{"port": 80, "protocol": "TCP"}, {"port": 443, "protocol": "TCP"}]}],
            id="entries with one address merge their ports",
        ),
        pytest.param(
            [{"ip": "1.1.1.1", "ipMode": "Proxy"}, {"ip": "1.1.1.1"}, {"ip": "1.1.1.1", "ipMode": "VIP"}],
            [{"ip": "1.1.1.1", "ipMode": "Proxy"}, {"ip": "1.1.1.1", "ipMode": "VIP"}, {"ip": "1.1.1.1"}],
            id="a service entry without ipMode sorts after those with one",
        ),
        pytest.param(
            [
                {
                    "ip": "1.1.1.1",
                    "ports": [
                        {"port": 80, "protocol": "TCP", "error": "b"},
                        {"port": 80, "protocol": "TCP"},
                        {"port": 80, "protocol": "TCP", "error": "a"},
                    ],
                }
            ],
            [
                {
                    "ip": "1.1.1.1",
                    "ports": [
                        {"port": 80, "protocol": "TCP"},
                        {"port": 80, "protocol": "TCP", "error": "a"},
                        {"port": 80, "protocol": "TCP", "error": "b"},
                    ],
                }
            ],
            id="ports without an error sort before ports with one",
        ),
    ],
)
def test_load_balancer_entries_are_deduplicated_and_sorted(
    ingresses: list[dict[str, Any]], expected: list[dict[str, Any]]
) -> None:
    service = obj("v1", "Service", type="LoadBalancer")
    half = len(ingresses) // 2 or 1
    members = items(
        {"loadBalancer": {"ingress": ingresses[:half]}}, {"loadBalancer": {"ingress": ingresses[half:]}}
    )
    got = native.aggregate_status(("v1", "Service"), service, members, NOW)
    assert got["status"] == {"loadBalancer": {"ingress": expected}}


def test_the_native_aggregate_registry_holds_exactly_karmadas_kinds() -> None:
    assert native.kinds(Operation.AGGREGATE_STATUS) == sorted(
        [
            D,
            ("apps/v1", "ReplicaSet"),
            STS,
            ("batch/v1", "Job"),
            POD,
            ("v1", "Service"),
            ("networking.k8s.io/v1", "Ingress"),
            ("batch/v1", "CronJob"),
            DS,
            PV,
            PVC,
            PDB,
            HPA,
        ]
    )
