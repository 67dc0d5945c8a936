"""The Interpreter façade: layer order, defaults, hooks and the customization registry."""

from __future__ import annotations

from typing import Any

import pytest

from fleetkeeper import errors
from fleetkeeper.interpreter import Interpreter, InvalidCustomization, Operation, conflicts
from fleetkeeper.interpreter.customization import Customization

from .conftest import FAST, FixedClock


def ric(name: str, api_version: str, kind: str, **scripts: str) -> dict[str, Any]:
    return {
        "apiVersion": "config.karmada.io/v1alpha1",
        "kind": "ResourceInterpreterCustomization",
        "metadata": {"name": name},
        "spec": {
            "target": {"apiVersion": api_version, "kind": kind},
            "customizations": {field: {"luaScript": text} for field, text in scripts.items()},
        },
    }


def deployment(ready: bool) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "generation": 1},
        "spec": {"replicas": 2},
        "status": {"observedGeneration": 1, "updatedReplicas": 2, "availableReplicas": 2 if ready else 0},
    }


CONFIGMAP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"a": "b"}}
ALWAYS_UNHEALTHY = "function InterpretHealth(obj) return false end"


def test_a_customization_answers_before_the_native_rule(interp: Interpreter) -> None:
    assert interp.interpret_health(deployment(ready=True)) is True
    interp.add_customization(ric("strict", "apps/v1", "Deployment", healthInterpretation=ALWAYS_UNHEALTHY))
    assert interp.interpret_health(deployment(ready=True)) is False


def test_a_customization_error_is_final_and_never_falls_through_to_native(interp: Interpreter) -> None:
    interp.add_customization(
        ric(
            "broken",
            "apps/v1",
            "Deployment",
            healthInterpretation="function InterpretHealth(obj) return nil end",
        )
    )
    message = r"broken\.healthInterpretation: result type nil is not bool"
    with pytest.raises(errors.ScriptError, match=message):
        interp.interpret_health(deployment(ready=True))


def test_customizations_match_the_exact_api_version(interp: Interpreter) -> None:
    interp.add_customization(ric("beta", "apps/v1beta1", "Deployment", healthInterpretation=ALWAYS_UNHEALTHY))
    assert interp.interpret_health(deployment(ready=True)) is True


@pytest.mark.parametrize(
    ("operation", "call", "expected"),
    [
        pytest.param(
            Operation.INTERPRET_HEALTH,
            lambda i, o: i.interpret_health(o),
            True,
            id="a kind without a health rule is healthy",
        ),
        pytest.param(
            Operation.INTERPRET_REPLICA,
            lambda i, o: i.get_replicas(o),
            (0, None),
            id="a kind without a replica rule has no replicas",
        ),
        pytest.param(
            Operation.REVISE_REPLICA,
            lambda i, o: i.revise_replica(o, 3),
            CONFIGMAP,
            id="a kind without a revise rule is returned unchanged",
        ),
        pytest.param(
            Operation.RETAIN,
            lambda i, o: i.retain(o, {**o, "data": {}}),
            CONFIGMAP,
            id="a kind without a retain rule keeps the desired object",
        ),
        pytest.param(
            Operation.AGGREGATE_STATUS,
            lambda i, o: i.aggregate_status(o, [{"clusterName": "m1"}]),
            CONFIGMAP,
            id="a kind without an aggregation rule is returned unchanged",
        ),
        pytest.param(
            Operation.INTERPRET_DEPENDENCY,
            lambda i, o: i.get_dependencies(o),
            [],
            id="a kind without a dependency rule depends on nothing",
        ),
        pytest.param(
            Operation.INTERPRET_STATUS,
            lambda i, o: i.reflect_status(o),
            None,
            id="a kind without status reflects nothing",
        ),
    ],
)
def test_defaults_when_no_layer_has_a_rule(
    interp: Interpreter, operation: Operation, call: Any, expected: Any
) -> None:
    assert call(interp, CONFIGMAP) == expected


@pytest.mark.parametrize(
    ("api_version", "kind", "operation", "enabled"),
    [
        pytest.param(
            "apps/v1", "Deployment", "InterpretHealth", True, id="deployments have a native health rule"
        ),
        pytest.param("v1", "ConfigMap", "InterpretHealth", False, id="configmaps have no health rule"),
        pytest.param("v1", "ConfigMap", "InterpretStatus", True, id="every kind reflects status natively"),
        pytest.param(
            "batch/v1", "Job", "interpretReplica", True, id="operation names are matched case-insensitively"
        ),
        pytest.param(
            "apps.example.io/v1",
            "Workload",
            "InterpretHealth",
            True,
            id="a customization enables its operations",
        ),
        pytest.param(
            "apps.example.io/v1",
            "Workload",
            "InterpretReplica",
            False,
            id="a customization does not enable operations it lacks",
        ),
    ],
)
def test_hook_enabled(
    interp: Interpreter, api_version: str, kind: str, operation: str, enabled: bool
) -> None:
    interp.add_customization(
        ric("w", "apps.example.io/v1", "Workload", healthInterpretation=ALWAYS_UNHEALTHY)
    )
    assert interp.hook_enabled(api_version, kind, operation) is enabled


def test_has_health_rule_tells_admission_whether_failover_can_fire(interp: Interpreter) -> None:
    assert interp.has_health_rule("apps/v1", "Deployment")
    assert not interp.has_health_rule("apps.example.io/v1", "Workload")
    interp.add_customization(
        ric("w", "apps.example.io/v1", "Workload", healthInterpretation=ALWAYS_UNHEALTHY)
    )
    assert interp.has_health_rule("apps.example.io/v1", "Workload")
    assert interp.remove_customization("w")
    assert not interp.has_health_rule("apps.example.io/v1", "Workload")
    assert not interp.remove_customization("w")


def test_the_first_customization_by_name_with_a_script_wins(interp: Interpreter) -> None:
    interp.set_customizations(
        [
            ric(
                "c-late",
                "v1",
                "ConfigMap",
                healthInterpretation="function InterpretHealth(o) return true end",
            ),
            ric("a-empty", "v1", "ConfigMap", healthInterpretation=""),
            ric("b-first", "v1", "ConfigMap", healthInterpretation=ALWAYS_UNHEALTHY),
        ]
    )
    assert interp.interpret_health(CONFIGMAP) is False
    interp.remove_customization("b-first")
    assert interp.interpret_health(CONFIGMAP) is True


def test_set_customizations_replaces_the_whole_set(interp: Interpreter) -> None:
    interp.add_customization(ric("old", "v1", "ConfigMap", healthInterpretation=ALWAYS_UNHEALTHY))
    interp.set_customizations([])
    assert interp.interpret_health(CONFIGMAP) is True
    assert interp.customizations == []


DEPS = """function GetDependencies(obj)
  return {{apiVersion = "v1", kind = "%s", namespace = obj.metadata.namespace, name = "%s"}}
end"""


def test_every_dependency_script_runs_and_results_are_merged_and_sorted(interp: Interpreter) -> None:
    interp.set_customizations(
        [
            ric("b", "v1", "ConfigMap", dependencyInterpretation=DEPS % ("Secret", "s")),
            ric("a", "v1", "ConfigMap", dependencyInterpretation=DEPS % ("ConfigMap", "z")),
            ric("c", "v1", "ConfigMap", dependencyInterpretation=DEPS % ("Secret", "s")),
        ]
    )
    obj = {**CONFIGMAP, "metadata": {"name": "cm", "namespace": "ns"}}
    assert interp.get_dependencies(obj) == [
        {"apiVersion": "v1", "kind": "ConfigMap", "namespace": "ns", "name": "z"},
        {"apiVersion": "v1", "kind": "Secret", "namespace": "ns", "name": "s"},
    ]


def test_a_dependency_without_name_or_selector_is_refused(interp: Interpreter) -> None:
    interp.add_customization(
        ric(
            "d",
            "v1",
            "ConfigMap",
            dependencyInterpretation=(
                'function GetDependencies(obj) return {{apiVersion = "v1", kind = "Secret"}} end'
            ),
        )
    )
    with pytest.raises(errors.ScriptError, match="can not leave name and labelSelector all empty"):
        interp.get_dependencies(CONFIGMAP)


@pytest.mark.parametrize(
    ("obj", "field"),
    [
        pytest.param({"metadata": {}, "spec": {}}, "metadata.name", id="a customization without a name"),
        pytest.param({"metadata": {"name": "x"}}, "spec", id="a customization without a spec"),
        pytest.param(
            {"metadata": {"name": "x"}, "spec": {"target": {"kind": "K"}}},
            "spec.target.apiVersion",
            id="a target without apiVersion",
        ),
        pytest.param(
            {
                "metadata": {"name": "x"},
                "spec": {
                    "target": {"apiVersion": "v1", "kind": "K"},
                    "customizations": {"healthInterpretaton": {}},
                },
            },
            "spec.customizations.healthInterpretaton",
            id="a misspelled rule",
        ),
        pytest.param(
            {
                "metadata": {"name": "x"},
                "spec": {
                    "target": {"apiVersion": "v1", "kind": "K"},
                    "customizations": {"retention": {"luaScript": 3}},
                },
            },
            "spec.customizations.retention.luaScript",
            id="a script that is not text",
        ),
        pytest.param(
            {"kind": "ConfigMap", "metadata": {"name": "x"}}, "kind", id="an object of another kind"
        ),
    ],
)
def test_a_malformed_customization_names_the_field(
    interp: Interpreter, obj: dict[str, Any], field: str
) -> None:
    with pytest.raises(InvalidCustomization) as caught:
        interp.add_customization(obj)
    assert caught.value.field == field


def test_a_customization_with_a_syntax_error_is_refused_when_loaded(interp: Interpreter) -> None:
    with pytest.raises(errors.ScriptError, match=r"bad\.healthInterpretation:1:"):
        interp.add_customization(
            ric("bad", "v1", "ConfigMap", healthInterpretation="function InterpretHealth(")
        )
    assert interp.customizations == []


def test_a_customization_model_is_accepted_through_to_dict(clock: FixedClock) -> None:
    config = pytest.importorskip("fleetkeeper.api.config")
    model = config.ResourceInterpreterCustomization.from_dict(
        ric("model", "v1", "ConfigMap", healthInterpretation=ALWAYS_UNHEALTHY)
    )
    interp = Interpreter([model], clock=clock, limits=FAST)
    assert interp.interpret_health(CONFIGMAP) is False


def test_conflicting_customizations_are_reported_except_for_dependencies() -> None:
    existing = Customization.parse(
        ric(
            "one",
            "v1",
            "ConfigMap",
            healthInterpretation=ALWAYS_UNHEALTHY,
            dependencyInterpretation=DEPS % ("Secret", "s"),
        )
    )
    new = Customization.parse(
        ric(
            "two",
            "v1",
            "ConfigMap",
            healthInterpretation=ALWAYS_UNHEALTHY,
            dependencyInterpretation=DEPS % ("Secret", "t"),
        )
    )
    assert conflicts(new, [existing]) == [
        "conflicting with InterpreterOperation(InterpretHealth) of existing "
        "ResourceInterpreterCustomization(one)"
    ]


def test_prune_strips_bookkeeping(interp: Interpreter) -> None:
    obj = {**deployment(ready=True), "metadata": {"name": "web", "uid": "u", "resourceVersion": "7"}}
    assert interp.prune(obj) == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {"replicas": 2},
    }


def test_the_native_job_aggregation_is_stamped_by_the_injected_clock(interp: Interpreter) -> None:
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}}
    items = [{"clusterName": "m1", "status": {"conditions": [{"type": "Failed", "status": "True"}]}}]
    (condition,) = interp.aggregate_status(job, items)["status"]["conditions"]
    assert condition["lastTransitionTime"] == "2026-01-01T00:00:00Z"


def test_an_object_without_kind_is_an_error(interp: Interpreter) -> None:
    with pytest.raises(errors.InterpreterError, match="apiVersion/kind"):
        interp.interpret_health({"metadata": {"name": "x"}})
