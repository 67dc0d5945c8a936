"""The execution controller's pure decisions: conditions, cleanup, conflicts, when to apply."""

from __future__ import annotations

from typing import Any

import pytest

from fleetkeeper.api import constants
from fleetkeeper.controllers import execution_rules as rules


@pytest.mark.parametrize(("preserve", "ready", "deleting", "action"), [
    pytest.param(False, True, False, rules.Cleanup.DELETE, id="a Ready cluster: delete the member object"),
    pytest.param(True, True, False, rules.Cleanup.PRESERVE, id="preserveResourcesOnDeletion: strip, keep"),
    pytest.param(False, False, False, rules.Cleanup.WAIT, id="a cluster that is not Ready: wait for it"),
    pytest.param(True, False, False, rules.Cleanup.WAIT, id="preserving waits too"),
    pytest.param(False, False, True, rules.Cleanup.SKIP, id="a dying cluster that is not Ready: skip"),
    pytest.param(False, True, True, rules.Cleanup.DELETE, id="a dying cluster still Ready: delete"),
])
def test_cleanup_action(preserve: bool, ready: bool, deleting: bool, action: rules.Cleanup) -> None:
    assert rules.cleanup_action(preserve=preserve, ready=ready, cluster_deleting=deleting) is action


def test_dispatching_condition_reads_as_karmadas() -> None:
    held = rules.dispatching_condition(True)
    assert (held.status, held.reason, held.message) == (
        "False", "SuspendDispatching", "Work dispatching is in a suspended state.")
    going = rules.dispatching_condition(False)
    assert (going.status, going.reason) == ("True", "Dispatching")


def test_applied_condition_counts_what_failed() -> None:
    ok = rules.applied_condition(1, 1, [])
    assert (ok.status, ok.reason, ok.message) == ("True", "AppliedSuccessful",
                                                  "Manifest has been successfully applied")
    failed = rules.applied_condition(0, 1, ["boom"])
    assert (failed.status, failed.reason) == ("False", "AppliedFailed")
    assert failed.message == "Failed to apply all manifests (0/1): boom"


def manifest(conflict: str = "abort") -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "nginx", "namespace": "default",
                         "annotations": {constants.CONFLICT_RESOLUTION_ANNOTATION: conflict}}}


MANAGED = {"metadata": {"labels": {constants.MANAGED_BY_KARMADA_LABEL: "true"}}}
UNMANAGED: dict[str, Any] = {"metadata": {"labels": {"app": "nginx"}}}


@pytest.mark.parametrize(("observed", "conflict", "refused"), [
    pytest.param(None, "abort", False, id="nothing there: create"),
    pytest.param(MANAGED, "abort", False, id="a managed object is ours to update"),
    pytest.param(UNMANAGED, "abort", True, id="an unmanaged object is not taken over by default"),
    pytest.param(UNMANAGED, "overwrite", False, id="overwrite takes an unmanaged object over"),
])
def test_conflict_problem(observed: dict[str, Any] | None, conflict: str, refused: bool) -> None:
    problem = rules.conflict_problem(observed, manifest(conflict))
    assert (problem is not None) is refused
    if problem:
        assert "Karmada will not manage this resource" in problem


@pytest.mark.parametrize(("observed", "desired", "holds"), [
    pytest.param({"a": 1, "b": 2}, {"a": 1}, True, id="extra observed fields are fine"),
    pytest.param({"a": 1}, {"a": 2}, False, id="a different value is not held"),
    pytest.param({"a": [{"x": 1, "y": 2}]}, {"a": [{"x": 1}]}, True, id="list items compare field by field"),
    pytest.param({"a": [{"x": 1}, {"x": 2}]}, {"a": [{"x": 1}]}, False, id="lists must have the same length"),
    pytest.param({}, {"a": None}, True, id="an absent field holds a null"),
])
def test_contains(observed: Any, desired: Any, holds: bool) -> None:
    assert rules.contains(observed, desired) is holds


@pytest.mark.parametrize(("observed", "last", "apply"), [
    pytest.param(None, {"spec": 1}, True, id="absent in the member: apply"),
    pytest.param({"spec": 1, "status": {}}, None, True, id="never applied by us (a restart): apply once"),
    pytest.param({"spec": 1, "status": {}}, {"spec": 0}, True, id="the manifest changed: apply"),
    pytest.param({"spec": 2, "status": {}}, {"spec": 1}, True, id="the member drifted: apply"),
    pytest.param({"spec": 1, "status": {}}, {"spec": 1}, False, id="held and unchanged: skip"),
])
def test_needs_apply(observed: dict[str, Any] | None, last: dict[str, Any] | None, apply: bool) -> None:
    assert rules.needs_apply({"spec": 1}, observed, last) is apply


def test_stripping_removes_karmadas_labels_and_annotations_only() -> None:
    obj: dict[str, Any] = {"kind": "Deployment", "metadata": {
        "name": "nginx",
        "labels": {"app": "nginx", constants.MANAGED_BY_KARMADA_LABEL: "true",
                   constants.PP_PERMANENT_ID_LABEL: "x", constants.WORK_PERMANENT_ID_LABEL: "y"},
        "annotations": {"note": "keep", constants.WORK_NAME_ANNOTATION: "w",
                        constants.MANAGED_LABELS_ANNOTATION: "app"}}}
    out = rules.stripped(obj)
    assert out["metadata"]["labels"] == {"app": "nginx"}
    assert out["metadata"]["annotations"] == {"note": "keep"}
    assert obj["metadata"]["labels"][constants.MANAGED_BY_KARMADA_LABEL] == "true", "the input is left alone"
