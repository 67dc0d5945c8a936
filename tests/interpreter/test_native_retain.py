"""Native Retain: Karmada's retain_test.go and lifted retain cases, as data."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fleetkeeper import errors
from fleetkeeper.interpreter import native
from fleetkeeper.interpreter.operation import Operation

RETAIN_LABEL = {"resourcetemplate.karmada.io/retain-replicas": "true"}


def deploy(replicas: int | None, labels: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "nginx", **({"labels": labels} if labels else {})}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta,
        "spec": {} if replicas is None else {"replicas": replicas},
    }


def secret(kind: str, key: str, value: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {}, "data": {key: value}, "type": kind}


def pv(claim: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": "pv"},
        "spec": {"claimRef": {"name": claim, "namespace": "default"}},
    }


def pvc(volume: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "pvc"},
        "spec": {"volumeName": volume},
    }


def job(selector: dict[str, str] | None, template: dict[str, str] | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"replicas": 2}
    if selector is not None:
        spec["selector"] = {"matchLabels": selector}
    if template is not None:
        spec["template"] = {"metadata": {"labels": template}}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "nginx"}, "spec": spec}


def container(name: str, mount: str, path: str, read_only: bool) -> dict[str, Any]:
    return {"name": name, "volumeMounts": [{"name": mount, "readOnly": read_only, "mountPath": path}]}


def pod(side: str, second: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "spec": {
            "nodeName": "node2" if side == "desired" else "node1",
            "serviceAccountName": f"fake-{side}-sa",
            "volumes": [{"name": f"fake-{side}-volume", "secret": {"secretName": f"fake-{side}-secret"}}],
            "initContainers": [
                container("test", f"fake-{side}-config", f"/etc/etcd/{side}", False),
                container(second, f"fake-{side}-config-2", f"/etc/etcd/{side}2", False),
            ],
            "containers": [
                container("test", f"fake-{side}-cert", f"/etc/karmada/{side}", True),
                container(second, f"fake-{side}-cert-2", f"/etc/karmada/{side}2", True),
            ],
        },
    }


RETAINED_POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "spec": {
        "nodeName": "node1",
        "serviceAccountName": "fake-observed-sa",
        "volumes": [{"name": "fake-observed-volume", "secret": {"secretName": "fake-observed-secret"}}],
        "initContainers": [
            container("test", "fake-observed-config", "/etc/etcd/observed", False),
            container("test-3", "fake-desired-config-2", "/etc/etcd/desired2", False),
        ],
        "containers": [
            container("test", "fake-observed-cert", "/etc/karmada/observed", True),
            container("test-3", "fake-desired-cert-2", "/etc/karmada/desired2", True),
        ],
    },
}

SA = ("v1", "ServiceAccount")
SVC = ("v1", "Service")
TOKEN = "kubernetes.io/service-account-token"

CASES = [
    pytest.param(
        deploy(2, RETAIN_LABEL),
        deploy(4),
        deploy(4, RETAIN_LABEL),
        id="a deployment labelled retain-replicas keeps the member's replicas",
    ),
    pytest.param(deploy(2), deploy(4), deploy(2), id="a deployment without the label keeps its own replicas"),
    pytest.param(
        secret(TOKEN, "token", "desired-token"),
        secret(TOKEN, "token", "observed-token"),
        secret(TOKEN, "token", "observed-token"),
        id="a service account token secret keeps the token the member minted",
    ),
    pytest.param(
        {"type": TOKEN},
        {"type": TOKEN},
        {"type": TOKEN},
        id="a service account token secret without data stays as it is",
    ),
    pytest.param(
        secret("kubernetes.io/tls", "tls.crt", "desired-cert"),
        secret("kubernetes.io/tls", "tls.crt", "observed-cert"),
        secret("kubernetes.io/tls", "tls.crt", "desired-cert"),
        id="a tls secret keeps the desired data",
    ),
    pytest.param(
        secret("kubernetes.io/basic-auth", "username", "desired-user"),
        secret("kubernetes.io/basic-auth", "username", "observed-user"),
        secret("kubernetes.io/basic-auth", "username", "desired-user"),
        id="a basic-auth secret keeps the desired data",
    ),
    pytest.param(
        secret("kubernetes.io/dockercfg", ".dockercfg", "desired-docker-cfg"),
        secret("kubernetes.io/dockercfg", ".dockercfg", "observed-docker-cfg"),
        secret("kubernetes.io/dockercfg", ".dockercfg", "desired-docker-cfg"),
        id="a dockercfg secret keeps the desired data",
    ),
    pytest.param(
        pv("pvc-1"), pv("pvc-2"), pv("pvc-2"), id="a persistent volume keeps the member's claim reference"
    ),
    pytest.param(
        pvc("desired-volume-name"),
        pvc("observed-volume-name"),
        pvc("observed-volume-name"),
        id="a claim keeps the volume the member bound it to",
    ),
    pytest.param(
        job({"app": "nginx_v1"}, {"app": "nginx_v1"}),
        job({"name": "nginx"}, {"name": "nginx"}),
        job({"name": "nginx"}, {"name": "nginx"}),
        id="a job keeps the member's generated selector and template labels",
    ),
    pytest.param(
        job(None, {"app": "nginx_v1"}),
        job(None, {"name": "nginx"}),
        job(None, {"name": "nginx"}),
        id="a job without a selector keeps the member's template labels",
    ),
    pytest.param(
        job({"app": "nginx_v1"}, None),
        job({"name": "nginx"}, None),
        job({"name": "nginx"}, None),
        id="a job without template labels keeps the member's selector",
    ),
    pytest.param(
        pod("desired", "test-3"),
        pod("observed", "test-2"),
        RETAINED_POD,
        id="a pod keeps its node, service account, volumes and the mounts of matching containers",
    ),
]


@pytest.mark.parametrize(("desired", "observed", "expected"), CASES)
def test_native_retain(desired: dict[str, Any], observed: dict[str, Any], expected: dict[str, Any]) -> None:
    key = (str(desired.get("apiVersion", "v1")), str(desired.get("kind", "Secret")))
    before = copy.deepcopy(desired)
    assert native.retain(key, desired, observed) == expected
    assert desired == before, "the desired object must not be modified"


def test_a_deployment_labelled_retain_replicas_needs_the_members_replicas() -> None:
    with pytest.raises(errors.InterpreterError, match=r"failed to get spec\.replicas from Deployment /nginx"):
        native.retain(("apps/v1", "Deployment"), deploy(2, RETAIN_LABEL), deploy(None))


@pytest.mark.parametrize(
    ("observed", "expected"),
    [
        pytest.param({}, {}, id="a member service without a health check port adds none"),
        pytest.param({"spec": {"healthCheckNodePort": 0}}, {}, id="a zero health check port is not retained"),
        pytest.param(
            {"spec": {"healthCheckNodePort": 1000}},
            {"spec": {"healthCheckNodePort": 1000}},
            id="a positive health check port is retained",
        ),
        pytest.param(
            {"spec": {"clusterIP": "1.2.3.4"}},
            {"spec": {"clusterIP": "1.2.3.4"}},
            id="the member's cluster IP is retained",
        ),
    ],
)
def test_native_service_retain(observed: dict[str, Any], expected: dict[str, Any]) -> None:
    assert native.retain(SVC, {}, observed) == expected


@pytest.mark.parametrize(
    "observed",
    [
        pytest.param(
            {"spec": {"healthCheckNodePort": "invalid string"}}, id="a health check port that is a string"
        ),
        pytest.param({"spec": {"clusterIP": -1000}}, id="a cluster IP that is a number"),
    ],
)
def test_native_service_retain_refuses_malformed_members(observed: dict[str, Any]) -> None:
    with pytest.raises(errors.InterpreterError):
        native.retain(SVC, {}, observed)


@pytest.mark.parametrize(
    ("desired", "observed", "secrets", "pull_secrets"),
    [
        pytest.param({}, {}, None, None, id="no secrets on either side write both fields as null"),
        pytest.param(
            {"secrets": [{"name": "test"}]},
            {"secrets": [{"name": "test"}]},
            [{"name": "test"}],
            None,
            id="the same secret on both sides appears once",
        ),
        pytest.param(
            {"secrets": [{"name": "test"}]},
            {"secrets": [{"name": "test"}, {"name": "test-token"}]},
            [{"name": "test"}, {"name": "test-token"}],
            None,
            id="the member's extra secrets follow the desired ones",
        ),
        pytest.param(
            {"secrets": [{"name": "test"}]},
            {"secrets": [{"name": "test"}], "imagePullSecrets": [{"name": "foo"}]},
            [{"name": "test"}],
            [{"name": "foo"}],
            id="the member's image pull secrets are kept",
        ),
    ],
)
def test_native_service_account_retain(
    desired: dict[str, Any], observed: dict[str, Any], secrets: Any, pull_secrets: Any
) -> None:
    retained = native.retain(SA, desired, observed)
    assert retained["secrets"] == secrets
    assert retained["imagePullSecrets"] == pull_secrets


def test_the_native_retain_registry_holds_exactly_karmadas_kinds() -> None:
    assert native.kinds(Operation.RETAIN) == sorted(
        [
            ("apps/v1", "Deployment"),
            ("v1", "Pod"),
            SVC,
            SA,
            ("v1", "PersistentVolumeClaim"),
            ("v1", "PersistentVolume"),
            ("batch/v1", "Job"),
            ("v1", "Secret"),
        ]
    )
