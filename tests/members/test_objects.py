"""Storage details: namespaces, scope, discovery of new kinds, bare pod apply, bad manifests."""

from __future__ import annotations

from typing import Any

import pytest

from fleetkeeper import errors
from fleetkeeper.clock import VirtualClock
from fleetkeeper.members.interface import ObjectRef
from fleetkeeper.members.simulated import SimulatedCluster

from .helpers import on_cluster, pod, ref


def served(summary_groups: list[dict[str, Any]], group_version: str) -> list[dict[str, str]]:
    return next((g["resources"] for g in summary_groups if g["groupVersion"] == group_version), [])


def test_a_namespaced_kind_without_namespace_goes_to_default_and_a_cluster_scoped_one_has_none() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> tuple[str, str | None]:
        cm = await cluster.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}})
        role = await cluster.apply({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                                    "metadata": {"name": "r", "namespace": "ignored"}, "rules": []})
        return cm["metadata"]["namespace"], role["metadata"].get("namespace")

    assert on_cluster(main) == ("default", None)


def test_applying_a_crd_serves_its_kind() -> None:
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.io"},
        "spec": {"group": "example.io", "scope": "Cluster",
                 "names": {"kind": "Widget", "plural": "widgets"},
                 "versions": [{"name": "v1", "served": True}, {"name": "v1beta1", "served": False}]},
    }

    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> None:
        assert served((await cluster.summary()).api_enablements, "example.io/v1") == []
        await cluster.apply(crd)
        groups = (await cluster.summary()).api_enablements
        assert served(groups, "example.io/v1") == [{"name": "widgets", "kind": "Widget"}]
        assert served(groups, "example.io/v1beta1") == []
        widget = await cluster.apply({"apiVersion": "example.io/v1", "kind": "Widget",
                                      "metadata": {"name": "w", "namespace": "dropped"}})
        assert "namespace" not in widget["metadata"]

    on_cluster(main)


def test_an_undeclared_kind_is_stored_and_served_from_then_on() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> list[dict[str, str]]:
        manifest = {"apiVersion": "example.io/v2", "kind": "Gadget",
                    "metadata": {"name": "g", "namespace": "lab"}, "spec": {"size": 3}}
        await cluster.apply(manifest)
        assert (await cluster.get(ref(manifest)) or {}).get("spec") == {"size": 3}
        return served((await cluster.summary()).api_enablements, "example.io/v2")

    assert on_cluster(main) == [{"name": "gadgets", "kind": "Gadget"}]


@pytest.mark.parametrize("manifest", [
    {"kind": "ConfigMap", "metadata": {"name": "x"}},
    {"apiVersion": "v1", "metadata": {"name": "x"}},
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "x-"}},
], ids=["without apiVersion", "without kind", "without a name"])
def test_incomplete_manifests_are_invalid(manifest: dict[str, Any]) -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> None:
        with pytest.raises(errors.Invalid):
            await cluster.apply(manifest)

    on_cluster(main)


def test_a_stale_resource_version_in_an_applied_manifest_conflicts() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> None:
        first = await cluster.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}})
        await cluster.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"},
                             "data": {"a": "b"}})
        stale = {"apiVersion": "v1", "kind": "ConfigMap",
                 "metadata": {"name": "x", "resourceVersion": first["metadata"]["resourceVersion"]}}
        with pytest.raises(errors.Conflict):
            await cluster.apply(stale)

    on_cluster(main)


def test_returned_objects_are_copies() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> dict[str, str]:
        manifest: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"},
                                    "data": {"a": "b"}}
        live = await cluster.apply(manifest)
        manifest["data"]["a"] = "changed by the caller"
        live["data"]["a"] = "changed too"
        fetched = await cluster.get(ObjectRef("v1", "ConfigMap", "default", "x"))
        assert fetched is not None
        fetched["data"]["a"] = "and again"
        again = await cluster.get(ObjectRef("v1", "ConfigMap", "default", "x"))
        assert again is not None
        result: dict[str, str] = again["data"]
        return result

    assert on_cluster(main) == {"a": "b"}


def test_relabelling_a_bare_pod_keeps_it_running_and_a_new_spec_starts_it_over() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> None:
        await cluster.apply(pod("solo"))
        await clock.sleep(3)
        labelled = pod("solo")
        labelled["metadata"]["labels"] = {"tier": "web"}
        live = await cluster.apply(labelled)
        assert (live["status"]["phase"], live["metadata"]["labels"]) == ("Running", {"tier": "web"})
        assert await cluster.apply(labelled) == live
        changed = pod("solo", cpu="1")
        changed["metadata"]["labels"] = {"tier": "web"}
        restarted = await cluster.apply(changed)
        assert restarted["status"]["phase"] == "Pending"
        assert (await cluster.summary()).resource_summary["allocated"]["cpu"] == "1"
        await clock.sleep(2)
        running = await cluster.get(ref(pod("solo")))
        assert running is not None and running["status"]["phase"] == "Running"

    on_cluster(main)
