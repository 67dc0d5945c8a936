"""Server-side apply to a simulated member: ownership per manager and per leaf field, removal,
conflicts, status and server-set metadata left alone, no write for a repeated apply."""

from __future__ import annotations

from typing import Any

import pytest

from fleetkeeper import errors
from fleetkeeper.api import managedfields
from fleetkeeper.clock import VirtualClock
from fleetkeeper.members.simulated import SimulatedCluster

from .helpers import on_cluster, pod, ref, workload


def cm(labels: dict[str, str] | None = None, data: dict[str, str] | None = None,
       **extra: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "cm", "namespace": "default"}
    if labels is not None:
        meta["labels"] = labels
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, **extra}
    if data is not None:
        obj["data"] = data
    return obj


def applied(*steps: tuple[dict[str, Any], str]) -> dict[str, Any]:
    """The live object after each (manifest, manager) is applied in turn, forced."""

    async def main(cluster: SimulatedCluster, _clock: VirtualClock) -> dict[str, Any]:
        live: dict[str, Any] = {}
        for manifest, manager in steps:
            live = await cluster.apply(manifest, field_manager=manager, force=True)
        return live

    return on_cluster(main)


def owners(obj: dict[str, Any]) -> dict[str, set[managedfields.Path]]:
    entries = obj["metadata"]["managedFields"]
    return {e["manager"]: managedfields.from_fields_v1(e["fieldsV1"]) for e in entries}


@pytest.mark.parametrize("second, labels_after", [
    (cm({"x": "1"}, {"k": "v"}), {"x": "1", "y": "2"}),
    (cm(None, {"k": "v"}), {"y": "2"}),
    (cm({"x": "changed"}, {"k": "v"}), {"x": "changed", "y": "2"}),
], ids=[
    "re-applying the same fields keeps both managers' labels",
    "dropping a label removes only the applier's own",
    "changing an owned label changes only it",
])
def test_managers_own_their_labels(second: dict[str, Any], labels_after: dict[str, str]) -> None:
    live = applied((cm({"x": "1"}, {"k": "v"}), "a"), (cm({"y": "2"}), "b"), (second, "a"))
    assert live["metadata"].get("labels") == labels_after


def test_a_field_two_managers_own_survives_one_of_them_dropping_it() -> None:
    live = applied((cm({"x": "1"}), "a"), (cm({"x": "1"}), "b"), (cm({}), "a"))
    assert live["metadata"]["labels"] == {"x": "1"}


def test_dropping_a_field_removes_it() -> None:
    first = cm(None, {"k": "v", "old": "o"}, binaryData={"b": "AA=="})
    live = applied((first, "a"), (cm(None, {"k": "v"}), "a"))
    assert not live.get("binaryData") and live["data"] == {"k": "v"}


def test_two_managers_own_different_fields_of_one_spec() -> None:
    """A replicas manager (an autoscaler, ``kubectl scale --server-side``) beside the manifest's owner."""
    manifest = workload("Deployment", "web", replicas=None)
    meta = {"name": "web", "namespace": "default"}
    scale = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta, "spec": {"replicas": 4}}

    async def main(cluster: SimulatedCluster, _clock: VirtualClock) -> dict[str, Any]:
        await cluster.apply(manifest, field_manager="deployer", force=False)
        await cluster.apply(scale, field_manager="scaler", force=False)
        changed = workload("Deployment", "web", replicas=None, image="app:v2")
        return await cluster.apply(changed, field_manager="deployer", force=False)

    live = on_cluster(main)
    assert live["spec"]["replicas"] == 4
    assert live["spec"]["template"]["spec"]["containers"][0]["image"] == "app:v2"
    scaler = next(e for e in live["metadata"]["managedFields"] if e["manager"] == "scaler")
    assert scaler["fieldsV1"] == {"f:spec": {"f:replicas": {}}}
    assert ("spec", "replicas") not in owners(live)["deployer"]


def test_two_managers_own_different_fields_of_one_bare_pod() -> None:
    manifest = pod("solo")
    meta = {"name": "solo", "namespace": "default"}
    deadline = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"activeDeadlineSeconds": 60}}

    async def main(cluster: SimulatedCluster, _clock: VirtualClock) -> tuple[dict[str, Any], dict[str, Any]]:
        await cluster.apply(manifest, field_manager="maker", force=False)
        await cluster.apply(deadline, field_manager="limiter", force=False)
        once = await cluster.apply(manifest, field_manager="maker", force=False)
        return once, await cluster.apply(manifest, field_manager="maker", force=False)

    once, again = on_cluster(main)
    assert once["spec"]["activeDeadlineSeconds"] == 60 and once["spec"]["containers"][0]["name"] == "main"
    assert owners(once)["limiter"] == {("spec", "activeDeadlineSeconds")}
    assert again["metadata"]["resourceVersion"] == once["metadata"]["resourceVersion"]


def test_status_is_never_applied() -> None:
    manifest = {**workload("Deployment", "web", replicas=2), "status": {"replicas": 99}}

    async def main(cluster: SimulatedCluster, _clock: VirtualClock) -> dict[str, Any]:
        await cluster.apply(manifest, field_manager="a", force=True)
        return await cluster.apply(manifest, field_manager="a", force=True)

    live = on_cluster(main)
    assert live["status"].get("replicas") != 99
    assert all(path[0] != "status" for path in owners(live)["a"])


def test_server_set_metadata_is_neither_applied_nor_owned() -> None:
    manifest = cm(None, {"k": "v"})
    manifest["metadata"].update(creationTimestamp="2001-01-01T00:00:00Z", generation=7, managedFields=[])
    live = applied((manifest, "a"))
    assert live["metadata"]["generation"] == 1
    assert live["metadata"]["creationTimestamp"] != "2001-01-01T00:00:00Z"
    assert owners(live) == {"a": {("data", "k")}}


def test_conflicts_name_the_field_and_the_owner_unless_forced() -> None:
    async def main(cluster: SimulatedCluster, _clock: VirtualClock) -> tuple[errors.Conflict, dict[str, Any]]:
        await cluster.apply(cm({"team": "a"}), field_manager="first", force=False)
        with pytest.raises(errors.Conflict) as caught:
            await cluster.apply(cm({"team": "b"}), field_manager="second", force=False)
        return caught.value, await cluster.apply(cm({"team": "b"}), field_manager="second", force=True)

    refused, forced = on_cluster(main)
    causes = [(c.field, c.message) for c in refused.causes]
    assert causes == [(".metadata.labels.team", 'conflict with "first"')]
    assert owners(forced) == {"second": {("metadata", "labels", "team")}}


@pytest.mark.parametrize("second, same_version, generation", [
    (workload("Deployment", "web", replicas=2), True, 1),
    ({**workload("Deployment", "web", replicas=2), "metadata": {
        "name": "web", "namespace": "default", "labels": {"x": "1"}}}, False, 1),
    (workload("Deployment", "web", replicas=3), False, 2),
], ids=["the same manifest is no write", "a label change is a write of metadata",
        "a spec change is a new generation"])
def test_change_detection(second: dict[str, Any], same_version: bool, generation: int) -> None:
    first = workload("Deployment", "web", replicas=2)

    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> tuple[dict[str, Any], dict[str, Any]]:
        await cluster.apply(first, field_manager="a", force=True)
        await clock.sleep(60)  # the controller has written its status
        before = await cluster.get(ref(first))
        assert before is not None
        await clock.sleep(60)
        return before, await cluster.apply(second, field_manager="a", force=True)

    before, after = on_cluster(main)
    assert (after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]) is same_version
    assert after["metadata"]["generation"] == generation


def test_managed_fields_times_are_to_the_second_as_kubernetes_stamps_them() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> list[str]:
        await clock.sleep(1.25)
        made = await cluster.apply(cm(data={"k": "v"}), field_manager="deployer")
        bare = await cluster.apply(pod("solo"), field_manager="deployer")
        return [e["time"] for obj in (made, bare) for e in obj["metadata"]["managedFields"]]

    times = on_cluster(main)
    assert times and all(t.endswith(":01Z") for t in times), times
