"""The general estimator: Karmada's ``general_test.go`` cases (resource summary and
resource models; the overcommit-protection gate is off, as by default)."""

from __future__ import annotations

from typing import Any

import pytest

from fleetkeeper.scheduler.estimator import (
    capacity_of,
    is_scalar_resource,
    max_available_replicas,
    request_of,
)

from .builders import cluster


def estimate(summary: dict[str, Any] | None, request: dict[str, str] | None,
             models: list[dict[str, Any]] | None = None) -> int:
    capacity = capacity_of(cluster("c", summary=summary, models=models))
    parsed = None if request is None else request_of(tuple(sorted(request.items())))
    return max_available_replicas(capacity, parsed)


@pytest.mark.parametrize(("summary", "request_", "expected"), [
    pytest.param(None, None, 0, id="no resource summary fits nothing"),
    pytest.param({"allocatable": {"pods": "10"}, "allocated": {"pods": "10"}}, None, 0,
                 id="no free pods fit nothing"),
    pytest.param({"allocatable": {"pods": "10"}}, None, 10, id="without requirements the free pods decide"),
    pytest.param({"allocatable": {"pods": "100", "cpu": "4", "memory": "8Gi"},
                  "allocated": {"pods": "20", "cpu": "1", "memory": "2Gi"}}, {"cpu": "500m",
                                                                              "memory": "1Gi"}, 6,
                 id="the scarcest requested resource decides"),
    pytest.param({"allocatable": {"pods": "100", "cpu": "4", "memory": "2Gi"},
                  "allocated": {"pods": "20", "cpu": "1", "memory": "1.5Gi"}}, {"cpu": "500m",
                                                                                "memory": "1Gi"}, 0,
                 id="insufficient memory fits nothing"),
    pytest.param({"allocatable": {"pods": "100", "cpu": "4"}}, {"nvidia.com/gpu": "1"}, 0,
                 id="a requested resource the cluster lacks fits nothing"),
    pytest.param({"allocatable": {"pods": "3", "cpu": "40"}}, {"cpu": "1"}, 3,
                 id="free pods bound the answer"),
])
def test_max_available_replicas_from_the_summary(summary: dict[str, Any] | None, request_: dict[str,
                                                                                                str] | None,
                                                 expected: int) -> None:
    assert estimate(summary, request_) == expected


@pytest.mark.parametrize(("summary", "expected"), [
    pytest.param({"allocatable": {"pods": "100"}, "allocated": {"pods": "40"}, "allocating": {"pods": "10"}},
                 50,
                 id="allocated and allocating pods are taken off"),
    pytest.param({"allocated": {"pods": "10"}}, 0, id="no allocatable pods"),
    pytest.param({"allocatable": {"pods": "100"}, "allocated": {"pods": "90"}, "allocating": {"pods": "20"}},
                 0,
                 id="over allocation counts as none"),
])
def test_allowed_pod_number(summary: dict[str, Any], expected: int) -> None:
    capacity = capacity_of(cluster("c", summary=summary))
    assert capacity is not None and capacity.allowed_pods == expected


def grades(*rows: dict[str, tuple[str, str]]) -> list[dict[str, Any]]:
    return [{"grade": i, "ranges": [{"name": n, "min": lo, "max": hi} for n, (lo, hi) in row.items()]}
            for i, row in enumerate(rows)]


CPU_GRADES = grades({"cpu": ("0", "1")}, {"cpu": ("1", "2")}, {"cpu": ("2", "4")})
CPU_MEM_GRADES = grades({"cpu": ("0", "1"), "memory": ("0", "1Gi")}, {"cpu": ("1", "2"), "memory": ("1Gi",
                                                                                                    "2Gi")},
                        {"cpu": ("2", "4"), "memory": ("2Gi", "4Gi")})
ONE_EACH = {"allocatable": {"pods": "1000"},
            "allocatableModelings": [{"grade": 0, "count": 1}, {"grade": 1, "count": 1}, {"grade": 2,
                                                                                          "count": 1}]}


@pytest.mark.parametrize(("models", "request_", "expected"), [
    pytest.param(CPU_GRADES, {"cpu": "1.5"}, 1, id="only the 2-cpu grade fits one 1.5-cpu replica"),
    pytest.param(CPU_GRADES, {"cpu": "3"}, 0, id="no grade fits a 3-cpu replica"),
    pytest.param(CPU_MEM_GRADES, {"cpu": "1", "memory": "1.5Gi"}, 1,
                 id="cpu and memory both have to fit one node"),
    pytest.param(CPU_MEM_GRADES, {"cpu": "1", "memory": "2.5Gi"}, 0,
                 id="a request above the highest grade fits none"),
])
def test_max_available_replicas_from_resource_models(models: list[dict[str, Any]], request_: dict[str, str],
                                                     expected: int) -> None:
    assert estimate(ONE_EACH, request_, models) == expected


def test_resource_models_replace_the_summary_answer() -> None:
    summary = {"allocatable": {"pods": "100", "cpu": "3"},
               "allocatableModelings": [{"grade": 0, "count": 0}, {"grade": 1, "count": 3}]}
    models = grades({"cpu": ("0", "1")}, {"cpu": ("1", "2")})
    assert estimate(summary, {"cpu": "500m"}, models) == 6


def test_without_models_the_summary_answers_even_with_modelings() -> None:
    summary = {"allocatable": {"pods": "100", "cpu": "3"}, "allocatableModelings": [{"grade": 1, "count": 3}]}
    assert estimate(summary, {"cpu": "500m"}) == 6


def test_a_negative_model_count_falls_back_to_the_summary() -> None:
    summary = {"allocatable": {"pods": "100", "cpu": "1"}, "allocatableModelings": [{"grade": 1,
                                                                                     "count": -1}]}
    assert estimate(summary, {"cpu": "500m"}, grades({"cpu": ("0", "1")}, {"cpu": ("8", "16")})) == 2


@pytest.mark.parametrize(("name", "scalar"), [
    pytest.param("nvidia.com/gpu", True, id="an extended resource"),
    pytest.param("hugepages-2Mi", True, id="huge pages"),
    pytest.param("kubernetes.io/batch-cpu", True, id="a prefixed native resource"),
    pytest.param("attachable-volumes-aws-ebs", True, id="attachable volumes"),
    pytest.param("cpu", False, id="cpu is not scalar"),
    pytest.param("requests.nvidia.com/gpu", False, id="a quota name is not a resource"),
])
def test_scalar_resources(name: str, scalar: bool) -> None:
    assert is_scalar_resource(name) is scalar
