"""Name rules of the wire contract (spec §3.4)."""

from __future__ import annotations

import pytest

from fleetkeeper.api import constants


@pytest.mark.parametrize(("kind", "name", "namespace", "expected"), [
    pytest.param("Deployment", "nginx", "default", "nginx-687f7fb96f",
                 id="the documented Deployment default/nginx vector"),
    pytest.param("ClusterRole", "system:controller:tom", "", None,
                 id="a cluster-scoped name with colons keeps dots in its prefix"),
])
def test_work_name(kind: str, name: str, namespace: str, expected: str | None) -> None:
    got = constants.work_name(kind, name, namespace)
    if expected is not None:
        assert got == expected
    else:
        assert got.startswith("system.controller.tom-")
        assert set(got.rpartition("-")[2]) <= set("bcdfghjklmnpqrstvwxz2456789")


def test_work_name_hashes_the_lowercased_namespace_name_and_kind() -> None:
    key = b"default-nginx-deployment"
    assert constants.fnv1a_32(key) == 2439396529
    assert constants.work_name("Deployment", "NGINX", "default") == constants.work_name(
        "deployment", "nginx", "default")


def test_work_name_differs_between_namespaces() -> None:
    assert constants.work_name("Deployment", "nginx", "a") != constants.work_name("Deployment", "nginx", "b")


@pytest.mark.parametrize(("kind", "name", "expected"), [
    pytest.param("Deployment", "nginx", "nginx-deployment", id="name and lowercased kind"),
    pytest.param("ClusterRole", "system:controller:tom", "system.controller.tom-clusterrole",
                 id="colons in the name become dots"),
    pytest.param("Role", "Tom", "tom-role", id="the whole name is lowercased"),
])
def test_binding_name(kind: str, name: str, expected: str) -> None:
    assert constants.binding_name(kind, name) == expected


def test_execution_namespace_round_trips_to_its_cluster() -> None:
    assert constants.execution_namespace("member1") == "karmada-es-member1"
    assert constants.cluster_of_execution_namespace("karmada-es-member1") == "member1"


@pytest.mark.parametrize("namespace", [
    pytest.param("default", id="a namespace without the prefix"),
    pytest.param("karmada-es-", id="the bare prefix"),
])
def test_cluster_of_a_namespace_that_is_not_an_execution_namespace_is_an_error(namespace: str) -> None:
    with pytest.raises(ValueError, match="not an execution namespace"):
        constants.cluster_of_execution_namespace(namespace)


@pytest.mark.parametrize(("namespace", "reserved"), [
    pytest.param("karmada-system", True, id="karmada-system is reserved"),
    pytest.param("karmada-cluster", True, id="karmada-cluster is reserved"),
    pytest.param("karmada-es-member1", True, id="execution namespaces are reserved"),
    pytest.param("default", False, id="default is not reserved"),
    pytest.param("karmada-apps", False, id="other karmada- namespaces are not reserved"),
])
def test_reserved_namespaces(namespace: str, reserved: bool) -> None:
    assert constants.is_reserved_namespace(namespace) is reserved


def test_legacy_purge_modes_map_to_the_current_names() -> None:
    assert dict(constants.LEGACY_PURGE_MODES) == {"Immediately": "Directly", "Graciously": "Gracefully"}
