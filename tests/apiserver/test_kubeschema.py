"""Kubernetes' kinds' schemas from lightkube's models: the annotation grammar they are read with,
and which kinds have one."""

from __future__ import annotations

import pytest

from fleetkeeper.apiserver.kubeschema import kind_schemas, parse_annotation


def test_annotations_are_read_without_evaluating_them() -> None:
    assert parse_annotation("Optional[List[core_v1.Container]]") == \
        ("Optional", (("List", (("core_v1.Container", ()),)),))
    assert parse_annotation("Dict[str, int]") == ("Dict", (("str", ()), ("int", ())))
    for bad in ("List[str", "Optional[]", "a b", ""):
        with pytest.raises(ValueError, match="unexpected annotation"):
            parse_annotation(bad)


def test_only_the_built_in_kinds_have_a_schema_here() -> None:
    found = kind_schemas("apps", "v1", "Deployment")
    assert found is not None and found[0] == "io.k8s.api.apps.v1.Deployment"
    assert "io.k8s.api.core.v1.PodSpec" in found[1]  # everything it refers to comes along
    assert kind_schemas("apps", "v1", "ControllerRevision") is None  # lightkube has it; not served
    assert kind_schemas("policy.karmada.io", "v1alpha1", "PropagationPolicy") is None
