"""Pods described by every built-in workload kind are checked as kube-apiserver checks them:
containers are objects with a name and an image, fields have their JSON types, quantities parse."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pytest

from fleetkeeper import errors
from fleetkeeper.api import admission
from fleetkeeper.api.scheme import SCHEME

NOW = datetime(2026, 1, 1, tzinfo=UTC)
LABELS = {"app": "web"}
CONTAINER: dict[str, Any] = {"name": "web", "image": "nginx:1.25"}


def pod_spec(**fields: Any) -> dict[str, Any]:
    return {"containers": [dict(CONTAINER)], **fields}


def container(**fields: Any) -> dict[str, Any]:
    """A pod spec whose one container has ``fields`` besides its name and image."""
    return {"containers": [{**CONTAINER, **fields}]}


def workload(kind: str, spec: Any) -> dict[str, Any]:
    """A ``kind`` object whose pods are described by ``spec`` (a pod spec), where the kind keeps it."""
    template = {"metadata": {"labels": LABELS}, "spec": spec}
    meta = {"name": "web", "namespace": "default"}
    if kind == "Pod":
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
    if kind == "CronJob":
        return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": meta,
                "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": template}}}}
    if kind == "Job":
        return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": {"template": template}}
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": meta,
            "spec": {"selector": {"matchLabels": LABELS}, "template": template}}


#: where each kind keeps the pod spec, as a field path
WHERE = {"Deployment": "spec.template.spec", "StatefulSet": "spec.template.spec",
         "ReplicaSet": "spec.template.spec", "DaemonSet": "spec.template.spec", "Job": "spec.template.spec",
         "CronJob": "spec.jobTemplate.spec.template.spec", "Pod": "spec"}


def admit(doc: dict[str, Any]) -> dict[str, Any]:
    return admission.admit(SCHEME.decode(doc), None, operation="CREATE", now=NOW).to_dict()  # type: ignore[arg-type]


def causes(doc: dict[str, Any]) -> dict[str, str]:
    with pytest.raises(errors.Invalid) as refused:
        admit(doc)
    return {c.field: c.message for c in refused.value.causes}


@pytest.mark.parametrize("kind", sorted(WHERE))
def test_every_kind_that_describes_pods_accepts_a_runnable_one(kind: str) -> None:
    admitted = admit(workload(kind, pod_spec()))
    assert admitted["metadata"]["name"] == "web"


@pytest.mark.parametrize("kind", sorted(WHERE))
@pytest.mark.parametrize(("spec", "field", "message"), [
    pytest.param(pod_spec(containers=[None]), "containers[0]", "Invalid value: null: must be an object",
                 id="a container that is null"),
    pytest.param(pod_spec(containers=[]), "containers", "Required value", id="no containers at all"),
    pytest.param({}, "containers", "Required value", id="a pod spec without containers"),
    pytest.param(pod_spec(containers={"web": CONTAINER}), "containers",
                 "Invalid value: object: must be a list",
                 id="containers that are not a list"),
    pytest.param(container(name=1), "containers[0].name", "Invalid value: 1: must be a string",
                 id="a container name that is a number"),
    pytest.param({"containers": [{"image": "nginx"}]}, "containers[0].name", "Required value",
                 id="a container without a name"),
    pytest.param({"containers": [{"name": "web"}]}, "containers[0].image", "Required value",
                 id="a container without an image"),
    pytest.param(container(image=""), "containers[0].image", "Required value", id="an empty image"),
    pytest.param(container(name="Web_1"), "containers[0].name", "RFC 1123 label",
                 id="a container name that is not a DNS label"),
    pytest.param({"containers": [CONTAINER, CONTAINER]}, "containers[1].name", 'Duplicate value: "web"',
                 id="two containers of one name"),
    pytest.param(pod_spec(initContainers=[CONTAINER]), "initContainers[0].name", 'Duplicate value: "web"',
                 id="an init container named as a container"),
    pytest.param(pod_spec(initContainers=[{"name": "init"}]), "initContainers[0].image", "Required value",
                 id="an init container without an image"),
    pytest.param(container(ports="80"), "containers[0].ports", 'Invalid value: "80": must be a list',
                 id="ports that are a string"),
    pytest.param(container(ports=["80"]), "containers[0].ports[0]", 'Invalid value: "80": must be an object',
                 id="a port that is a string"),
    pytest.param(container(ports=[{"name": "http"}]), "containers[0].ports[0].containerPort",
                 "Required value",
                 id="a port without a number"),
    pytest.param(container(ports=[{"containerPort": "80"}]), "containers[0].ports[0].containerPort",
                 'Invalid value: "80": must be an integer', id="a port number that is a string"),
    pytest.param(container(ports=[{"containerPort": 70000}]), "containers[0].ports[0].containerPort",
                 "must be between 1 and 65535, inclusive", id="a port number out of range"),
    pytest.param(container(ports=[{"containerPort": 80, "protocol": "HTTP"}]),
                 "containers[0].ports[0].protocol",
                 'Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"',
                 id="a protocol Kubernetes does not have"),
    pytest.param(container(env={"A": "1"}), "containers[0].env", "Invalid value: object: must be a list",
                 id="env that is a map"),
    pytest.param(container(env=[{"name": "A", "value": 1}]), "containers[0].env[0].value",
                 "Invalid value: 1: must be a string", id="an env value that is a number"),
    pytest.param(container(env=[{"value": "1"}]), "containers[0].env[0].name", "Required value",
                 id="an env variable without a name"),
    pytest.param(container(command="sleep 1"), "containers[0].command",
                 'Invalid value: "sleep 1": must be a list',
                 id="a command that is a string"),
    pytest.param(container(args=[1]), "containers[0].args[0]", "Invalid value: 1: must be a string",
                 id="an argument that is a number"),
    pytest.param(container(resources="big"), "containers[0].resources",
                 'Invalid value: "big": must be an object',
                 id="resources that are a string"),
    pytest.param(container(resources={"requests": "1"}), "containers[0].resources.requests",
                 'Invalid value: "1": must be an object', id="requests that are a string"),
    pytest.param(container(resources={"requests": {"cpu": "lots"}}), "containers[0].resources.requests[cpu]",
                 'Invalid value: "lots": quantities must match the regular expression',
                 id="a quantity that does not parse"),
    pytest.param(container(resources={"limits": {"memory": {"value": 1}}}),
                 "containers[0].resources.limits[memory]", "Invalid value: object: must be a quantity",
                 id="a quantity that is an object"),
    pytest.param(container(resources={"limits": {"cpu": float("nan")}}),
                 "containers[0].resources.limits[cpu]", "Invalid value: nan: quantities must match",
                 id="a quantity that is not a number (YAML's .nan)"),
    pytest.param(container(resources={"requests": {"cpu": "-1"}}), "containers[0].resources.requests[cpu]",
                 'Invalid value: "-1": must be greater than or equal to 0', id="a negative quantity"),
    pytest.param(container(resources={"requests": {"cpu": "2"}, "limits": {"cpu": "500m"}}),
                 "containers[0].resources.requests[cpu]", "must be less than or equal to cpu limit of 500m",
                 id="a request above its limit"),
    pytest.param(container(volumeMounts=[{"name": "data", "mountPath": 1}]),
                 "containers[0].volumeMounts[0].mountPath", "Invalid value: 1: must be a string",
                 id="a mount path that is a number"),
    pytest.param(pod_spec(volumes=[{"name": "data"}, {"name": "data"}]), "volumes[1].name",
                 'Duplicate value: "data"', id="two volumes of one name"),
    pytest.param(pod_spec(volumes=[{"emptyDir": {}}]), "volumes[0].name", "Required value",
                 id="a volume without a name"),
    pytest.param(pod_spec(nodeSelector={"zone": 1}), "nodeSelector[zone]",
                 "Invalid value: 1: must be a string",
                 id="a node selector value that is a number"),
    pytest.param(pod_spec(tolerations=[None]), "tolerations[0]", "Invalid value: null: must be an object",
                 id="a toleration that is null"),
    pytest.param(pod_spec(tolerations=[{"key": "k", "tolerationSeconds": "60"}]),
                 "tolerations[0].tolerationSeconds", 'Invalid value: "60": must be an integer',
                 id="toleration seconds that are a string"),
    pytest.param(pod_spec(priorityClassName={"name": "high"}), "priorityClassName",
                 "Invalid value: object: must be a string", id="a priority class name that is an object"),
    pytest.param(pod_spec(affinity="zone-a"), "affinity", 'Invalid value: "zone-a": must be an object',
                 id="affinity that is a string"),
    pytest.param(pod_spec(overhead={"cpu": "x"}), "overhead[cpu]", "quantities must match",
                 id="an overhead that does not parse"),
    pytest.param("nginx", "", 'Invalid value: "nginx": must be an object', id="a pod spec that is a string"),
])
def test_a_pod_kubernetes_would_not_run_is_refused_naming_the_field(kind: str, spec: Any, field: str,
                                                                   message: str) -> None:
    path = WHERE[kind] + (f".{field}" if field and not field.startswith("[") else field)
    found = causes(workload(kind, copy.deepcopy(spec)))
    assert path in found, found
    assert message in found[path]


@pytest.mark.parametrize(("doc", "field", "message"), [
    pytest.param({**workload("Deployment", pod_spec()), "spec": {"selector": {"matchLabels": LABELS},
                                                                 "template": "web"}},
                 "spec.template", 'Invalid value: "web": must be an object',
                 id="a template that is a string"),
    pytest.param({**workload("Deployment", pod_spec()), "spec": {"selector": {"matchLabels": LABELS}}},
                 "spec.template.spec.containers", "Required value", id="a Deployment without a template"),
    pytest.param({**workload("StatefulSet", pod_spec()), "spec": {
        "selector": {"matchLabels": LABELS},
        "template": {"metadata": {"labels": {"app": "web", "tier": 1}}, "spec": pod_spec()}}},
                 "spec.template.metadata.labels[tier]", "Invalid value: 1: must be a string",
                 id="a template label that is a number"),
    pytest.param({**workload("CronJob", pod_spec()), "spec": {"schedule": "@daily", "jobTemplate": "x"}},
                 "spec.jobTemplate", 'Invalid value: "x": must be an object',
                 id="a job template that is a string"),
    pytest.param({**workload("CronJob", pod_spec()), "spec": {"schedule": "@daily", "jobTemplate": {}}},
                 "spec.jobTemplate.spec.template.spec.containers", "Required value",
                 id="a CronJob that describes no pod"),
    pytest.param({**workload("Deployment", pod_spec()), "spec": {"selector": "app=web",
                                                                 "template": {"spec": pod_spec()}}},
                 "spec.selector", 'Invalid value: "app=web": must be an object',
                 id="a selector that is a string"),
])
def test_a_workload_whose_template_is_malformed_is_refused(doc: dict[str, Any], field: str,
                                                           message: str) -> None:
    found = causes(doc)
    assert field in found, found
    assert message in found[field]


def test_a_full_pod_spec_as_kubernetes_examples_write_it_is_kept_unchanged() -> None:
    spec = {
        "initContainers": [{"name": "init", "image": "busybox:1.36", "command": ["sh", "-c", "true"]}],
        "containers": [{
            "name": "web", "image": "nginx:1.25", "imagePullPolicy": "IfNotPresent",
            "args": ["-g", "daemon off;"],
            "ports": [{"containerPort": 80, "name": "http"}, {"containerPort": 53, "protocol": "UDP"}],
            "env": [{"name": "MODE", "value": "prod"},
                    {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
            "envFrom": [{"configMapRef": {"name": "settings"}}],
            "resources": {"requests": {"cpu": "250m", "memory": "64Mi"},
                          "limits": {"cpu": 1, "memory": "128Mi"}},
            "volumeMounts": [{"name": "data", "mountPath": "/data", "readOnly": True}],
            "livenessProbe": {"httpGet": {"path": "/", "port": 80}, "periodSeconds": 10},
        }],
        "volumes": [{"name": "data", "emptyDir": {}}],
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "tolerations": [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}],
        "terminationGracePeriodSeconds": 30, "restartPolicy": "Always", "priorityClassName": "high",
    }
    admitted = admit(workload("Deployment", copy.deepcopy(spec)))
    assert admitted["spec"]["template"]["spec"] == spec
