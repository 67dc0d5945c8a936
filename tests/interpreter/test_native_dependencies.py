"""Native GetDependencies: Karmada's dependencies_test.go cases, as data (compared as sets)."""

from __future__ import annotations

from typing import Any

import pytest

from fleetkeeper import errors
from fleetkeeper.interpreter import native
from fleetkeeper.interpreter.operation import Operation

NS = "karmada-test"


def ref(kind: str, name: str) -> dict[str, str]:
    return {"apiVersion": "v1", "kind": kind, "namespace": NS, "name": name}


# Three pod specs and what they depend on (Karmada's testPairs).
VOLUMES = {
    "serviceAccountName": "test-serviceaccount",
    "volumes": [
        {"name": "initcontainer-volume-mount", "configMap": {"name": "test-configmap"}},
        {"name": "cloud-secret-volume", "secret": {"secretName": "cloud-secret"}},
        {"name": "container-volume-mount", "persistentVolumeClaim": {"claimName": "test-pvc"}},
    ],
}
VOLUMES_DEPS = [
    ref("ConfigMap", "test-configmap"),
    ref("Secret", "cloud-secret"),
    ref("ServiceAccount", "test-serviceaccount"),
    ref("PersistentVolumeClaim", "test-pvc"),
]
INIT_ENV = {
    "serviceAccountName": "test-serviceaccount",
    "imagePullSecrets": [{"name": "test-secret"}],
    "initContainers": [
        {
            "envFrom": [
                {
                    "configMapRef": {"name": "initcontainer-envfrom-configmap"},
                    "secretRef": {"name": "test-secret"},
                }
            ],
            "env": [{"valueFrom": {"secretKeyRef": {"name": "test-secret"}}}],
        }
    ],
}
INIT_ENV_DEPS = [
    ref("ConfigMap", "initcontainer-envfrom-configmap"),
    ref("Secret", "test-secret"),
    ref("ServiceAccount", "test-serviceaccount"),
]
CONTAINER_ENV = {
    "containers": [
        {
            "envFrom": [{"configMapRef": {"name": "test-configmap"}}],
            "env": [{"valueFrom": {"configMapKeyRef": {"name": "test-configmap"}}}],
        }
    ],
    "volumes": [
        {
            "name": "container-volume-mount",
            "persistentVolumeClaim": {"claimName": "test-pvc"},
            "azureFile": {"secretName": "test-secret"},
        }
    ],
}
CONTAINER_ENV_DEPS = [
    ref("ConfigMap", "test-configmap"),
    ref("Secret", "test-secret"),
    ref("PersistentVolumeClaim", "test-pvc"),
]
PAIRS: list[tuple[str, dict[str, Any], list[dict[str, str]]]] = [
    ("volumes, a service account and a claim", VOLUMES, VOLUMES_DEPS),
    ("init container environment and pull secrets", INIT_ENV, INIT_ENV_DEPS),
    ("container environment and a secret-backed volume", CONTAINER_ENV, CONTAINER_ENV_DEPS),
]
KINDS = {  # kind → (apiVersion, where the pod spec sits)
    "Deployment": ("apps/v1", ("spec", "template", "spec")),
    "ReplicaSet": ("apps/v1", ("spec", "template", "spec")),
    "DaemonSet": ("apps/v1", ("spec", "template", "spec")),
    "StatefulSet": ("apps/v1", ("spec", "template", "spec")),
    "Job": ("batch/v1", ("spec", "template", "spec")),
    "CronJob": ("batch/v1", ("spec", "jobTemplate", "spec", "template", "spec")),
    "Pod": ("v1", ("spec",)),
}


def workload(kind: str, pod_spec: dict[str, Any] | None) -> dict[str, Any]:
    api, path = KINDS[kind]
    obj: dict[str, Any] = {
        "apiVersion": api,
        "kind": kind,
        "metadata": {"name": "fake", "namespace": NS},
        "spec": {},
    }
    if pod_spec is not None:
        cur = obj
        for key in path[:-1]:
            cur = cur.setdefault(key, {})
        cur[path[-1]] = pod_spec
    return obj


def sort(refs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(refs, key=lambda r: (r["kind"], r.get("name", "")))


CASES = [
    pytest.param(workload(kind, None), [], id=f"a {kind.lower()} without a pod template depends on nothing")
    for kind in KINDS
]
CASES += [
    pytest.param(workload(kind, spec), deps, id=f"a {kind.lower()} depends on its pod's {what}")
    for kind in KINDS
    for what, spec, deps in PAIRS
]


@pytest.mark.parametrize(("obj", "expected"), CASES)
def test_pod_template_dependencies(obj: dict[str, Any], expected: list[dict[str, Any]]) -> None:
    assert sort(native.get_dependencies((obj["apiVersion"], obj["kind"]), obj)) == sort(expected)


def test_a_statefulset_does_not_depend_on_claims_from_its_own_templates() -> None:
    sts = workload("StatefulSet", VOLUMES)
    sts["spec"]["volumeClaimTemplates"] = [{"metadata": {"name": "test-pvc"}}]
    assert sort(native.get_dependencies(("apps/v1", "StatefulSet"), sts)) == sort(VOLUMES_DEPS[:3])


def test_a_service_import_depends_on_its_derived_service_and_endpoint_slices() -> None:
    obj = {
        "apiVersion": "multicluster.x-k8s.io/v1alpha1",
        "kind": "ServiceImport",
        "metadata": {"name": "fake-serviceImport", "namespace": NS},
        "spec": {"type": "ClusterSetIP", "ports": [{"port": 80, "protocol": "TCP"}]},
    }
    assert native.get_dependencies(("multicluster.x-k8s.io/v1alpha1", "ServiceImport"), obj) == [
        ref("Service", "derived-fake-serviceImport"),
        {
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "namespace": NS,
            "labelSelector": {"matchLabels": {"kubernetes.io/service-name": "derived-fake-serviceImport"}},
        },
    ]


def test_an_ingress_depends_on_each_of_its_tls_secrets() -> None:
    obj = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": "test-ingress", "namespace": NS},
        "spec": {
            "tls": [
                {"hosts": ["foo1.*.bar.com"], "secretName": "cloud-secret"},
                {"hosts": ["foo2.*.bar.com"], "secretName": "test-secret"},
            ]
        },
    }
    assert native.get_dependencies(("networking.k8s.io/v1", "Ingress"), obj) == [
        ref("Secret", "cloud-secret"),
        ref("Secret", "test-secret"),
    ]


def test_an_ingress_tls_entry_without_a_secret_name_fails_validation() -> None:
    obj = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": "i", "namespace": NS},
        "spec": {"tls": [{"hosts": ["a.example"]}]},
    }
    with pytest.raises(errors.InterpreterError, match="can not leave name and labelSelector all empty"):
        native.get_dependencies(("networking.k8s.io/v1", "Ingress"), obj)


@pytest.mark.parametrize(
    ("volume", "secret"),
    [
        pytest.param({"cephfs": {"secretRef": {"name": "s"}}}, "s", id="a cephfs volume names its secret"),
        pytest.param(
            {"csi": {"nodePublishSecretRef": {"name": "s"}}}, "s", id="a csi volume names its publish secret"
        ),
        pytest.param(
            {"projected": {"sources": [{"secret": {"name": "s"}}, {"configMap": {"name": "c"}}]}},
            "s",
            id="a projected volume names its secrets",
        ),
        pytest.param(
            {"secret": {"secretName": "s"}, "rbd": {"secretRef": {"name": "r"}}},
            "r",
            id="only the first volume source in Kubernetes order is inspected",
        ),
    ],
)
def test_secret_volume_sources(volume: dict[str, Any], secret: str) -> None:
    pod = workload("Pod", {"volumes": [{"name": "v", **volume}]})
    secrets = [d["name"] for d in native.get_dependencies(("v1", "Pod"), pod) if d["kind"] == "Secret"]
    assert secrets == [secret]


def test_the_default_service_account_is_not_a_dependency() -> None:
    assert native.get_dependencies(("v1", "Pod"), workload("Pod", {"serviceAccountName": "default"})) == []


def test_the_native_dependency_registry_holds_exactly_karmadas_kinds() -> None:
    expected = [(api, kind) for kind, (api, _) in KINDS.items()]
    expected += [("networking.k8s.io/v1", "Ingress"), ("multicluster.x-k8s.io/v1alpha1", "ServiceImport")]
    assert native.kinds(Operation.INTERPRET_DEPENDENCY) == sorted(expected)
