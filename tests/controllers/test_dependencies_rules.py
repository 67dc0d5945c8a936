"""Dependency propagation rules: snapshots, labels and the attached binding (spec §4.16)."""

from __future__ import annotations

from typing import Any

import pytest

from fleetkeeper.api import constants
from fleetkeeper.api.builtin import ConfigMap
from fleetkeeper.api.work import BindingSnapshot, ResourceBinding, ResourceBindingSpec
from fleetkeeper.controllers import dependencies_rules as rules
from fleetkeeper.controllers.templates import TemplateRef, parse_template_request, template_request

CONFIG = ConfigMap.from_dict({"metadata": {"name": "cfg", "namespace": "default", "uid": "uid-cfg",
                                           "resourceVersion": "3"}, "data": {"a": "b"}})


def snap(name: str, *clusters: str) -> BindingSnapshot:
    return BindingSnapshot.from_dict({"namespace": "default", "name": name,
                                      "clusters": [{"name": c} for c in clusters] or None})


def independent(name: str, *clusters: str, **fields: Any) -> ResourceBinding:
    return ResourceBinding.from_dict({
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name.split("-")[0]},
                 "clusters": [{"name": c, "replicas": 1} for c in clusters], **fields},
    })


def test_the_depended_by_label_is_stable_and_prefixed() -> None:
    label = rules.depended_by_label("default", "nginx-deployment")
    assert label.startswith(constants.DEPENDED_BY_LABEL_PREFIX)
    assert label == rules.depended_by_label("default", "nginx-deployment")
    assert label != rules.depended_by_label("default", "other-deployment")


def test_the_dependencies_annotation_is_sorted_json_that_parses_back() -> None:
    deps = [{"apiVersion": "v1", "kind": "Secret", "namespace": "d", "name": "s"},
            {"apiVersion": "v1", "kind": "ConfigMap", "namespace": "d", "name": "c"}]
    value = rules.dependencies_annotation(deps)
    assert [d["kind"] for d in rules.parse_dependencies(value)] == ["ConfigMap", "Secret"]
    assert rules.parse_dependencies("not json") == [] and rules.parse_dependencies(None) == []


@pytest.mark.parametrize(("current", "snapshot", "remove", "expected"), [
    pytest.param(None, snap("a", "m1"), None, [snap("a", "m1")], id="the first snapshot"),
    pytest.param([snap("b", "m2")], snap("a", "m1"), None, [snap("a", "m1"), snap("b", "m2")],
                 id="snapshots are sorted by binding"),
    pytest.param([snap("a", "m1")], snap("a", "m2"), None, [snap("a", "m2")],
                 id="a binding's snapshot is replaced, not added"),
    pytest.param([snap("a", "m1"), snap("b")], None, ("default", "a"), [snap("b")],
                 id="a snapshot is removed"),
])
def test_merge_required_by(current: list[BindingSnapshot] | None, snapshot: BindingSnapshot | None,
                           remove: tuple[str, str] | None, expected: list[BindingSnapshot]) -> None:
    assert rules.merge_required_by(current, snapshot, remove=remove) == expected


def spec(conflict: str = "Abort", preserve: bool | None = None) -> ResourceBindingSpec:
    return ResourceBindingSpec.from_dict({
        "resource": {"apiVersion": "v1", "kind": "X", "name": "x"},
        "conflictResolution": conflict, "preserveResourcesOnDeletion": preserve})


@pytest.mark.parametrize(("specs", "expected"), [
    pytest.param([spec(), spec()], ("Abort", False), id="all defaults"),
    pytest.param([spec(), spec("Overwrite")], ("Overwrite", False), id="any Overwrite wins"),
    pytest.param([spec(preserve=True), spec(preserve=False)], ("Abort", True), id="any preservation wins"),
])
def test_effective_policy(specs: list[ResourceBindingSpec], expected: tuple[str, bool]) -> None:
    assert rules.effective_policy(specs) == expected


def test_an_attached_binding_is_owned_by_the_dependency_and_never_scheduled() -> None:
    rb = independent("nginx-deployment", "m1", "m2")
    required = [rules.snapshot_of(rb)]
    labels = rules.depended_by_labels(required, {("default", "nginx-deployment"): "rb-id"})
    attached = rules.attached_binding(CONFIG, required, labels, "Abort", False, None)
    assert (attached.namespace, attached.name) == ("default", "cfg-configmap")
    assert attached.labels()[rules.depended_by_label("default", "nginx-deployment")] == "rb-id"
    assert constants.RB_PERMANENT_ID_LABEL in attached.labels()
    assert not rules.is_claimed(attached)
    assert attached.metadata.finalizers == [constants.BINDING_CONTROLLER_FINALIZER]
    assert (attached.metadata.owner_references or [])[0].uid == "uid-cfg"
    assert attached.spec.placement is None and attached.spec.clusters is None
    assert [c.name for c in (attached.spec.required_by or [])[0].clusters or []] == ["m1", "m2"]
    again = rules.attached_binding(CONFIG, required, labels, "Abort", False, attached)
    assert not rules.attached_differs(attached, again)
    moved = rules.attached_binding(CONFIG, [snap("nginx-deployment", "m3")], labels, "Abort", False, attached)
    assert rules.attached_differs(attached, moved)


def test_template_keys_round_trip() -> None:
    for ref in (TemplateRef("apps/v1", "Deployment", "default", "nginx"),
                TemplateRef("v1", "ConfigMap", "default", "system:cfg"),
                TemplateRef("rbac.authorization.k8s.io/v1", "ClusterRole", "", "reader")):
        assert parse_template_request(template_request(ref)) == ref
