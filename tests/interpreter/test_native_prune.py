"""Prune: Karmada's prune_test.go cases, as data (input → expected output)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fleetkeeper.interpreter import native

SA_UID = "kubernetes.io/service-account.uid"

CASES = [
    pytest.param(
        {
            "metadata": {
                "name": "x",
                "creationTimestamp": "2023-03-13T05:00:41Z",
                "deletionTimestamp": "2023-03-13T06:00:41Z",
                "deletionGracePeriodSeconds": 10,
                "generation": 2,
                "managedFields": [{"apiVersion": "v1", "manager": "name"}],
                "resourceVersion": "22222",
                "selfLink": "http://example.com",
                "uid": "db56a4a6-0dff-465a-b046-2c1dea42a42b",
                "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "foo"}],
                "finalizers": ["foregroundDeletion"],
                "labels": {"keep": "me"},
            },
            "status": {},
        },
        {"metadata": {"name": "x", "labels": {"keep": "me"}}},
        False,
        id="control-plane bookkeeping and the status are removed from every object",
    ),
    pytest.param(
        {"kind": "Service", "spec": {"clusterIP": "10.10.10.10", "clusterIPs": ["10.10.10.10"]}},
        {"kind": "Service", "spec": {}},
        False,
        id="a service loses the cluster IPs the control plane allocated",
    ),
    pytest.param(
        {"kind": "Service", "spec": {"clusterIP": "None", "clusterIPs": ["None"]}},
        {"kind": "Service", "spec": {"clusterIP": "None", "clusterIPs": ["None"]}},
        False,
        id="a headless service keeps clusterIP None",
    ),
    pytest.param(
        {
            "kind": "Job",
            "spec": {
                "selector": {"matchLabels": {"foo": "bar", "controller-uid": "ab11"}},
                "template": {
                    "metadata": {
                        "labels": {
                            "controller-uid": "ab11",
                            "job-name": "test-job",
                            "foo": "bar",
                            "batch.kubernetes.io/job-name": "test-job",
                        }
                    }
                },
                "ttlSecondsAfterFinished": 10,
            },
        },
        {
            "kind": "Job",
            "spec": {
                "selector": {"matchLabels": {"foo": "bar"}},
                "template": {"metadata": {"labels": {"foo": "bar"}}},
            },
        },
        True,
        id="a job loses its generated selector labels and, on request, its TTL",
    ),
    pytest.param(
        {
            "kind": "Job",
            "spec": {"manualSelector": True, "selector": {"matchLabels": {"controller-uid": "ab11"}}},
        },
        {
            "kind": "Job",
            "spec": {"manualSelector": True, "selector": {"matchLabels": {"controller-uid": "ab11"}}},
        },
        False,
        id="a job with a manual selector keeps its labels",
    ),
    pytest.param(
        {
            "kind": "ServiceAccount",
            "metadata": {"name": "foo"},
            "secrets": [{"name": "foo-token-6pgxf"}, {"name": "foo-dockercfg-zdr2j"}],
        },
        {"kind": "ServiceAccount", "metadata": {"name": "foo"}, "secrets": [{"name": "foo-dockercfg-zdr2j"}]},
        False,
        id="a service account loses its token secrets and keeps the others",
    ),
    pytest.param(
        {
            "kind": "Secret",
            "metadata": {"annotations": {SA_UID: "123", "keep": "me"}},
            "type": "kubernetes.io/service-account-token",
            "data": {"token": "abc"},
        },
        {
            "kind": "Secret",
            "metadata": {"annotations": {"keep": "me"}},
            "type": "kubernetes.io/service-account-token",
            "data": None,
        },
        False,
        id="a service account token secret loses its uid annotation and token data",
    ),
    pytest.param(
        {
            "kind": "Secret",
            "metadata": {"foo": "bar"},
            "type": "kubernetes.io/basic-auth",
            "data": {"username": "foo", "password": "bar"},
        },
        {
            "kind": "Secret",
            "metadata": {"foo": "bar"},
            "type": "kubernetes.io/basic-auth",
            "data": {"username": "foo", "password": "bar"},
        },
        False,
        id="a basic-auth secret keeps its data",
    ),
    pytest.param(
        {
            "kind": "PersistentVolumeClaim",
            "metadata": {"annotations": {"volume.kubernetes.io/selected-node": "node1"}},
        },
        {"kind": "PersistentVolumeClaim", "metadata": {"annotations": {}}},
        False,
        id="a claim loses the node the member's scheduler selected",
    ),
    pytest.param(
        {"kind": "Deployment", "metadata": {"annotations": {"deployment.kubernetes.io/revision": 1}}},
        {"kind": "Deployment", "metadata": {"annotations": {}}},
        False,
        id="a deployment loses its revision annotation",
    ),
    pytest.param(
        {
            "kind": "Deployment",
            "metadata": {"annotations": {"deployment.kubernetes.io/revision-history": "1,2"}},
        },
        {"kind": "Deployment", "metadata": {"annotations": {}}},
        False,
        id="a deployment loses its revision history annotation",
    ),
]


@pytest.mark.parametrize(("obj", "expected", "remove_ttl"), CASES)
def test_prune(obj: dict[str, Any], expected: dict[str, Any], remove_ttl: bool) -> None:
    before = copy.deepcopy(obj)
    assert native.prune(obj, remove_job_ttl=remove_ttl) == expected
    assert obj == before, "the input must not be modified"
