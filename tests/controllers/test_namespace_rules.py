"""The deletion conditions of a terminating Namespace, in Kubernetes' words (table tests)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from fleetkeeper.controllers import namespace_rules as rules

T0 = datetime(2026, 1, 1, 10, 0, tzinfo=UTC)
T1 = T0 + timedelta(seconds=30)
OKAY = [
    ("NamespaceDeletionDiscoveryFailure", "False", "ResourcesDiscovered",
     "All resources successfully discovered"),
    ("NamespaceDeletionGroupVersionParsingFailure", "False", "ParsedGroupVersions",
     "All legacy kube types successfully parsed"),
    ("NamespaceDeletionContentFailure", "False", "ContentDeleted",
     "All content successfully deleted, may be waiting on finalization"),
    ("NamespaceContentRemaining", "False", "ContentRemoved", "All content successfully removed"),
    ("NamespaceFinalizersRemaining", "False", "ContentHasNoFinalizers",
     "All content-preserving finalizers finished"),
]


def content(*objects: tuple[str, list[str]], failures: tuple[str, ...] = ()) -> rules.Content:
    out = rules.Content(failures=list(failures))
    for resource, finalizers in objects:
        out.left(resource, finalizers)
    return out


def shape(conditions: list[dict[str, Any]]) -> list[tuple[str, str, str, str]]:
    return [(c["type"], c["status"], c["reason"], c["message"]) for c in conditions]


def test_nothing_left_is_five_false_conditions_in_kubernetes_order() -> None:
    got = rules.deletion_conditions(None, content(), T0)
    assert shape(got) == OKAY
    assert {c["lastTransitionTime"] for c in got} == {"2026-01-01T10:00:00Z"}


@pytest.mark.parametrize(("left", "remaining", "finalizers"), [
    ([("works.work.karmada.io", ["karmada.io/execution-controller"])],
     "Some resources are remaining: works.work.karmada.io has 1 resource instances",
     "Some content in the namespace has finalizers remaining: "
     "karmada.io/execution-controller in 1 resource instances"),
    ([("pods.", ["b/x"]), ("configmaps.", ["b/x", "a/y"]), ("configmaps.", [])],
     "Some resources are remaining: configmaps. has 2 resource instances, pods. has 1 resource instances",
     "Some content in the namespace has finalizers remaining: a/y in 1 resource instances, "
     "b/x in 2 resource instances"),
], ids=["one work held by the execution controller", "sorted, counted per resource and per finalizer"])
def test_what_is_left_and_what_holds_it(left: list[tuple[str, list[str]]], remaining: str,
                                        finalizers: str) -> None:
    got = {c["type"]: c for c in rules.deletion_conditions(None, content(*left), T0)}
    assert (got["NamespaceContentRemaining"]["status"], got["NamespaceContentRemaining"]["reason"],
            got["NamespaceContentRemaining"]["message"]) == ("True", "SomeResourcesRemain", remaining)
    assert (got["NamespaceFinalizersRemaining"]["status"], got["NamespaceFinalizersRemaining"]["reason"],
            got["NamespaceFinalizersRemaining"]["message"]) == ("True", "SomeFinalizersRemain", finalizers)
    assert got["NamespaceDeletionContentFailure"]["status"] == "False"


def test_objects_left_without_finalizers_name_no_finalizer() -> None:
    got = {c["type"]: c for c in rules.deletion_conditions(None, content(("configmaps.", [])), T0)}
    assert got["NamespaceContentRemaining"]["status"] == "True"
    assert got["NamespaceFinalizersRemaining"]["reason"] == "ContentHasNoFinalizers"


def test_failed_deletes_are_a_content_failure() -> None:
    failed = content(("secrets.", []), failures=('secrets "s" is forbidden: no', 'configmaps "c": boom'))
    got = {c["type"]: c for c in rules.deletion_conditions(None, failed, T0)}
    assert got["NamespaceDeletionContentFailure"] == {
        "type": "NamespaceDeletionContentFailure", "status": "True",
        "lastTransitionTime": "2026-01-01T10:00:00Z",
        "reason": "ContentDeletionFailed",
        "message": 'Failed to delete all resource types, 2 remaining: secrets "s" is forbidden: no, '
                   'configmaps "c": boom'}


def test_a_transition_time_moves_only_with_its_status() -> None:
    first = rules.deletion_conditions(None, content(("pods.", ["x"])), T0)
    still = rules.deletion_conditions(first, content(("pods.", ["x"]), ("pods.", ["x"])), T1)
    assert {c["lastTransitionTime"] for c in still} == {"2026-01-01T10:00:00Z"}
    assert "has 2 resource instances" in still[3]["message"], "the message follows the content"
    done = {c["type"]: c for c in rules.deletion_conditions(still, content(), T1)}
    assert done["NamespaceContentRemaining"]["lastTransitionTime"] == "2026-01-01T10:00:30Z"
    assert done["NamespaceFinalizersRemaining"]["lastTransitionTime"] == "2026-01-01T10:00:30Z"
    assert done["NamespaceDeletionDiscoveryFailure"]["lastTransitionTime"] == "2026-01-01T10:00:00Z"


def test_conditions_of_other_types_are_kept_after_the_five() -> None:
    other = {"type": "example.com/Audit", "status": "True", "reason": "Kept", "message": "mine"}
    got = rules.deletion_conditions([other], content(), T0)
    assert [c["type"] for c in got][-1] == "example.com/Audit" and got[-1] == other and len(got) == 6


def test_a_resource_is_named_plural_dot_group() -> None:
    assert rules.resource_name("deployments", "apps") == "deployments.apps"
    assert rules.resource_name("pods", "") == "pods."
