"""Built-in workload kinds are defaulted and checked as kube-apiserver does before they are stored."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from fleetkeeper import errors
from fleetkeeper.api import admission
from fleetkeeper.api.builtin import BUILTIN
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.policy import ClusterPropagationPolicy, PropagationPolicy
from fleetkeeper.api.scheme import SCHEME

NOW = datetime(2026, 1, 1, tzinfo=UTC)
LABELS = {"app": "web"}
TEMPLATE = {"metadata": {"labels": LABELS}, "spec": {"containers": [{"name": "web", "image": "nginx"}]}}


def admit(doc: dict[str, Any]) -> dict[str, Any]:
    return admission.admit(SCHEME.decode(doc), None, operation="CREATE", now=NOW).to_dict()  # type: ignore[arg-type]


def workload(
    kind: str, spec: dict[str, Any] | None = None, *, name: str = "web", api_version: str = "apps/v1"
) -> dict[str, Any]:
    body: dict[str, Any] = {"selector": {"matchLabels": LABELS}, "template": TEMPLATE}
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"name": name, "namespace": "default"},
        "spec": {**body, **(spec or {})},
    }


def causes(doc: dict[str, Any]) -> dict[str, str]:
    with pytest.raises(errors.Invalid) as caught:
        admit(doc)
    return {c.field: c.message for c in caught.value.causes}


def test_a_deployment_without_replicas_has_one_and_kubernetes_rollout_defaults() -> None:
    spec = admit(workload("Deployment"))["spec"]
    assert spec["replicas"] == 1
    assert spec["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"},
    }
    assert (spec["revisionHistoryLimit"], spec["progressDeadlineSeconds"]) == (10, 600)


def test_given_values_are_kept() -> None:
    spec = admit(
        workload("Deployment", {"replicas": 0, "strategy": {"type": "Recreate"}, "revisionHistoryLimit": 2})
    )["spec"]
    assert (spec["replicas"], spec["strategy"], spec["revisionHistoryLimit"]) == (0, {"type": "Recreate"}, 2)


def test_a_statefulset_replicaset_and_daemonset_get_their_defaults() -> None:
    sts = admit(workload("StatefulSet"))["spec"]
    assert (sts["replicas"], sts["podManagementPolicy"]) == (1, "OrderedReady")
    assert sts["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
    assert sts["persistentVolumeClaimRetentionPolicy"] == {"whenDeleted": "Retain", "whenScaled": "Retain"}
    assert admit(workload("ReplicaSet"))["spec"]["replicas"] == 1
    ds = admit(workload("DaemonSet"))["spec"]
    assert ds["updateStrategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0},
    }
    assert "replicas" not in ds


@pytest.mark.parametrize(
    ("given", "completions", "parallelism"),
    [
        pytest.param({}, 1, 1, id="neither: one pod to one completion"),
        pytest.param({"parallelism": 3}, None, 3, id="parallelism alone: a work queue"),
        pytest.param({"completions": 5}, 5, 1, id="completions alone: one at a time"),
    ],
)
def test_a_job_runs_one_pod_unless_told_otherwise(
    given: dict[str, Any], completions: int | None, parallelism: int
) -> None:
    doc = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "pi", "namespace": "default"},
        "spec": {"template": {"spec": {"restartPolicy": "Never", **TEMPLATE["spec"]}}, **given},
    }
    spec = admit(doc)["spec"]
    assert (spec.get("completions"), spec["parallelism"]) == (completions, parallelism)
    assert (spec["backoffLimit"], spec["completionMode"], spec["suspend"]) == (6, "NonIndexed", False)


def test_cronjob_service_and_hpa_defaults() -> None:
    cron = admit(
        {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "metadata": {"name": "tick", "namespace": "default"},
            "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": TEMPLATE}}},
        }
    )["spec"]
    assert (
        cron["concurrencyPolicy"],
        cron["suspend"],
        cron["successfulJobsHistoryLimit"],
        cron["failedJobsHistoryLimit"],
    ) == ("Allow", False, 3, 1)
    svc = admit(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"ports": [{"port": 80}, {"port": 443, "targetPort": 8443, "protocol": "TCP"}]},
        }
    )["spec"]
    assert (svc["type"], svc["sessionAffinity"]) == ("ClusterIP", "None")
    assert svc["ports"] == [
        {"port": 80, "protocol": "TCP", "targetPort": 80},
        {"port": 443, "targetPort": 8443, "protocol": "TCP"},
    ]
    hpa = admit(
        {
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"maxReplicas": 5, "scaleTargetRef": {"kind": "Deployment", "name": "web"}},
        }
    )["spec"]
    assert hpa["minReplicas"] == 1


@pytest.mark.parametrize(
    ("doc", "field", "message"),
    [
        pytest.param(
            workload("Deployment", {"replicas": "three"}),
            "spec.replicas",
            'Invalid value: "three": must be an integer',
            id="replicas must be an integer",
        ),
        pytest.param(
            workload("StatefulSet", {"replicas": -1}),
            "spec.replicas",
            "Invalid value: -1: must be greater than or equal to 0",
            id="replicas are not negative",
        ),
        pytest.param(
            workload("ReplicaSet", {"replicas": True}),
            "spec.replicas",
            "must be an integer",
            id="a boolean is not a count",
        ),
        pytest.param(
            workload("Deployment", {"selector": None}),
            "spec.selector",
            "Required value",
            id="a Deployment needs a selector",
        ),
        pytest.param(
            workload("DaemonSet", {"selector": {}}),
            "spec.selector",
            "empty selector is invalid for daemonset",
            id="an empty selector selects nothing on purpose",
        ),
        pytest.param(
            workload("Deployment", {"selector": {"matchLabels": {"app": "other"}}}),
            "spec.template.metadata.labels",
            "`selector` does not match template `labels`",
            id="the selector must match the pod template",
        ),
        pytest.param(
            workload("Deployment", {"selector": {"matchExpressions": [{"key": "app", "operator": "Bad"}]}}),
            "spec.selector.matchExpressions[0].operator",
            'Unsupported value: "Bad"',
            id="a selector that does not parse",
        ),
        pytest.param(
            workload("Deployment", name="Web_App"),
            "metadata.name",
            "RFC 1123 subdomain",
            id="workload names are DNS subdomains",
        ),
        pytest.param(
            {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "1web", "namespace": "default"}},
            "metadata.name",
            "DNS-1035 label",
            id="a Service name starts with a letter",
        ),
        pytest.param(
            {
                "apiVersion": "batch/v1",
                "kind": "CronJob",
                "metadata": {"name": "c" * 53, "namespace": "default"},
                "spec": {},
            },
            "metadata.name",
            "must be no more than 52 characters",
            id="a CronJob name leaves room for its Jobs' suffix",
        ),
        pytest.param(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "Bad_Name", "namespace": "default"},
            },
            "metadata.name",
            "RFC 1123 subdomain",
            id="ConfigMap names too",
        ),
        pytest.param(
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {"name": "pi", "namespace": "default"},
                "spec": {"parallelism": 2.5},
            },
            "spec.parallelism",
            "must be an integer",
            id="a Job's counts",
        ),
        pytest.param(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "web", "namespace": "default"},
                "spec": ["not", "an", "object"],
            },
            "spec",
            "must be an object",
            id="a spec that is not an object",
        ),
    ],
)
def test_bad_workloads_are_refused_naming_the_field(doc: dict[str, Any], field: str, message: str) -> None:
    found = causes(doc)
    assert field in found, found
    assert message in found[field]


def test_every_problem_is_reported_at_once() -> None:
    doc = workload("Deployment", {"replicas": "three", "selector": {"matchLabels": {"app": "x"}}}, name="Web")
    assert {"metadata.name", "spec.replicas", "spec.template.metadata.labels"} <= set(causes(doc))


def test_the_stored_object_is_not_the_given_one() -> None:
    obj = SCHEME.decode(workload("Deployment"))
    admitted = admission.admit(obj, None, operation="CREATE", now=NOW)
    assert admitted is not obj and "replicas" not in obj.to_dict()["spec"]


def test_only_kinds_whose_rules_compare_with_the_stored_object_have_it_read() -> None:
    assert admission.reads_old(PropagationPolicy) and admission.reads_old(ClusterPropagationPolicy)
    assert admission.reads_old(BUILTIN["CustomResourceDefinition"])
    assert not admission.reads_old(BUILTIN["Deployment"]), "defaults and checks of a workload never look back"
    assert not admission.reads_old(Cluster)
