"""A custom kind taught to the interpreter by a Karmada-style customization (data/workload/)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from fleetkeeper.interpreter import Interpreter, Operation

from .conftest import FAST, FixedClock

DATA = Path(__file__).parent / "data" / "workload"
API, KIND = "apps.example.io/v1", "Workload"


def load(name: str) -> Any:
    docs = list(yaml.safe_load_all((DATA / name).read_text()))
    return docs[0] if len(docs) == 1 else docs


@pytest.fixture
def interp(clock: FixedClock) -> Interpreter:
    return Interpreter([load("customization.yaml")], clock=clock, limits=FAST)


def test_every_operation_of_the_customization_is_enabled(interp: Interpreter) -> None:
    enabled = {op for op in Operation if interp.hook_enabled(API, KIND, op)}
    assert enabled == set(Operation) - {Operation.INTERPRET_COMPONENT, Operation.PRUNE}
    assert interp.has_health_rule(API, KIND)


def test_replicas_and_requirements(interp: Interpreter) -> None:
    assert interp.get_replicas(load("desired.yaml")) == (
        4,
        {"resourceRequest": {"cpu": "250m", "memory": "512Mi"}},
    )


def test_a_workload_without_replicas_counts_one(interp: Interpreter) -> None:
    desired = load("desired.yaml")
    del desired["spec"]["replicas"]
    assert interp.get_replicas(desired)[0] == 1


def test_revise_replica_writes_the_clusters_share(interp: Interpreter) -> None:
    revised = interp.revise_replica(load("desired.yaml"), 1)
    assert revised["spec"]["replicas"] == 1
    assert revised["spec"]["template"] == load("desired.yaml")["spec"]["template"]


def test_retain_keeps_the_members_paused_flag(interp: Interpreter) -> None:
    retained = interp.retain(load("desired.yaml"), load("observed.yaml"))
    assert retained["spec"]["paused"] is True
    assert retained["spec"]["replicas"] == 4


def test_reflect_status(interp: Interpreter) -> None:
    assert interp.reflect_status(load("observed.yaml")) == {
        "readyReplicas": 1,
        "replicas": 2,
        "observedGeneration": 3,
        "generation": 3,
    }


@pytest.mark.parametrize(
    ("ready", "healthy"),
    [
        pytest.param(2, True, id="a workload with every replica ready is healthy"),
        pytest.param(1, False, id="a workload with a replica not ready is unhealthy"),
    ],
)
def test_health(interp: Interpreter, ready: int, healthy: bool) -> None:
    observed = load("observed.yaml")
    observed["status"]["readyReplicas"] = ready
    assert interp.interpret_health(observed) is healthy


def test_a_workload_without_status_is_unhealthy(interp: Interpreter) -> None:
    observed = load("observed.yaml")
    del observed["status"]
    assert interp.interpret_health(observed) is False


def test_aggregate_status_over_the_members(interp: Interpreter) -> None:
    aggregated = interp.aggregate_status(load("desired.yaml"), load("status.yaml"))
    assert aggregated["status"] == {"readyReplicas": 3, "replicas": 4, "clusters": "member1,member2,member3"}
    assert aggregated["metadata"] == load("desired.yaml")["metadata"]


def test_dependencies_of_the_pod_template(interp: Interpreter) -> None:
    assert interp.get_dependencies(load("desired.yaml")) == [
        {"apiVersion": "v1", "kind": "ConfigMap", "namespace": "retail", "name": "shop-config"},
        {"apiVersion": "v1", "kind": "ServiceAccount", "namespace": "retail", "name": "shop"},
    ]


def test_the_interpreter_is_usable_from_several_threads(interp: Interpreter) -> None:
    from concurrent.futures import ThreadPoolExecutor

    observed = load("observed.yaml")
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda _: interp.interpret_health(observed), range(40)))
    assert results == [False] * 40
