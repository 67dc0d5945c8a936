"""A simulated cluster refuses what kube-apiserver refuses, and survives an object it cannot handle.

Work manifests reach a member without the control plane's template admission, so the simulated
API server checks what is applied (metadata types, ``status``, the pods a workload describes) and
answers ``Invalid`` naming the field. An object that got in anyway (stored before these checks)
makes its controller fail once, said once; the cluster goes on with everything else."""

from __future__ import annotations

import copy
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from fleetkeeper import errors
from fleetkeeper.clock import VirtualClock
from fleetkeeper.members.simulated import SimulatedCluster
from fleetkeeper.members.simulated.objects import ObjectKey
from fleetkeeper.members.simulated.validate import check

from .helpers import every_log, on_cluster, pod, ref, status, workload


def changed(doc: dict[str, Any], change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    change(out)
    return out


def pod_of(doc: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = doc["spec"]["template"]["spec"] if doc["kind"] != "Pod" else doc["spec"]
    return spec


def first_container(doc: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = pod_of(doc)["containers"][0]
    return found


def set_cpu(doc: dict[str, Any], cpu: Any) -> None:
    first_container(doc)["resources"] = {"requests": {"cpu": cpu}}


DEPLOYMENT = workload("Deployment", "web")
STATEFULSET = workload("StatefulSet", "db")

REFUSED = [
    pytest.param(changed(DEPLOYMENT, lambda d: d["spec"]["template"]["spec"].update(containers=[None])),
                 "spec.template.spec.containers[0]", id="a Deployment whose container is null"),
    pytest.param(changed(DEPLOYMENT, lambda d: first_container(d).update(name=1)),
                 "spec.template.spec.containers[0].name", id="a container name that is a number"),
    pytest.param(changed(DEPLOYMENT, lambda d: first_container(d).pop("image")),
                 "spec.template.spec.containers[0].image", id="a container without an image"),
    pytest.param(changed(DEPLOYMENT, lambda d: first_container(d).update(resources="big")),
                 "spec.template.spec.containers[0].resources", id="resources that are a string"),
    pytest.param(changed(DEPLOYMENT, lambda d: set_cpu(d, "x")),
                 "spec.template.spec.containers[0].resources.requests[cpu]",
                 id="a quantity that does not parse"),
    pytest.param(changed(DEPLOYMENT, lambda d: d["spec"].update(replicas="three")), "spec.replicas",
                 id="replicas that are a string"),
    pytest.param(changed(DEPLOYMENT, lambda d: d["spec"].update(selector="app=web")), "spec.selector",
                 id="a selector that is a string"),
    pytest.param(changed(DEPLOYMENT, lambda d: d["spec"]["template"].update(spec="web")),
                 "spec.template.spec",
                 id="a pod spec that is a string"),
    pytest.param(changed(DEPLOYMENT, lambda d: pod_of(d).update(priorityClassName={"a": 1})),
                 "spec.template.spec.priorityClassName", id="a priority class name that is an object"),
    pytest.param(changed(DEPLOYMENT, lambda d: d["metadata"].update(ownerReferences=[None])),
                 "metadata.ownerReferences[0]", id="an owner reference that is null"),
    pytest.param(changed(STATEFULSET, lambda d: first_container(d).update(env=[{"value": 1}])),
                 "spec.template.spec.containers[0].env[0].value",
                 id="a StatefulSet env value that is a number"),
    pytest.param(changed(workload("Job", "batch"), lambda d: pod_of(d).update(containers=[])),
                 "spec.template.spec.containers", id="a Job without containers"),
    pytest.param(changed(pod("solo"), lambda d: first_container(d).update(image="")),
                 "spec.containers[0].image",
                 id="a bare Pod without an image"),
    pytest.param({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": "default",
                                                                        "labels": {"a": 1}}},
                 "metadata.labels.a", id="a ConfigMap label that is a number"),
    pytest.param(changed(DEPLOYMENT, lambda d: d["spec"].update(replicas=True)), "spec.replicas",
                 id="replicas that are a boolean"),
]


@pytest.mark.parametrize(("manifest", "field"), REFUSED)
def test_an_object_kubernetes_would_refuse_is_refused_and_not_stored(manifest: dict[str, Any],
                                                                     field: str) -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> tuple[errors.Invalid, Any]:
        with pytest.raises(errors.Invalid) as refused:
            await cluster.apply(manifest)
        return refused.value, cluster.peek(ref(manifest))

    refusal, stored = on_cluster(main)
    assert field in [c.field for c in refusal.causes], refusal
    assert stored is None


def test_a_change_that_would_break_a_stored_workload_changes_nothing() -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> tuple[Any, Any]:
        await cluster.apply(DEPLOYMENT)
        await clock.sleep(5)
        before = cluster.peek(ref(DEPLOYMENT))
        with pytest.raises(errors.Invalid):
            await cluster.apply(changed(DEPLOYMENT, lambda d: first_container(d).update(name=1)))
        return before, cluster.peek(ref(DEPLOYMENT))

    before, after = on_cluster(main)
    assert after == before


@pytest.mark.parametrize("obj", [
    {**DEPLOYMENT, "status": "running"}, {**pod("solo"), "status": ["Running"]},
    {**workload("Job", "batch"), "status": 1},
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": "default"},
     "status": "x"},
], ids=["a Deployment's that is a string", "a Pod's that is a list", "a Job's that is a number",
        "a ConfigMap's that is a string"])
def test_a_status_that_is_not_an_object_is_refused_whatever_the_kind(obj: dict[str, Any]) -> None:
    """What the server stores is checked so (a written manifest's status is never applied)."""
    with pytest.raises(errors.Invalid) as refused:
        check(obj, now=datetime(2026, 1, 1, tzinfo=UTC))
    assert [c.field for c in refused.value.causes] == ["status"]
    assert refused.value.causes[0].message.endswith("must be an object"), refused.value
    assert refused.value.code == 422 and refused.value.kind == obj["kind"]


@pytest.mark.parametrize("replicas", [True, False], ids=["true over 1", "false over 0"])
def test_a_boolean_count_equal_to_the_stored_one_is_refused_not_ignored(replicas: bool) -> None:
    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> tuple[errors.Invalid, Any, Any]:
        await cluster.apply(workload("Deployment", "web", replicas=int(replicas)))
        before = cluster.peek(ref(DEPLOYMENT))
        with pytest.raises(errors.Invalid) as refused:
            await cluster.apply(changed(DEPLOYMENT, lambda d: d["spec"].update(replicas=replicas)))
        return refused.value, before, cluster.peek(ref(DEPLOYMENT))

    refusal, before, after = on_cluster(main)
    assert refusal.code == 422 and after == before
    assert [(c.field, c.message) for c in refusal.causes] == [
        ("spec.replicas", f"Invalid value: {str(replicas).lower()}: must be an integer")]


def test_an_object_stored_before_the_checks_fails_its_controller_once_and_the_cluster_goes_on() -> None:
    bad = changed(DEPLOYMENT, lambda d: d["spec"]["template"]["spec"].update(containers=[None]))
    good = workload("Deployment", "api", replicas=2)

    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> tuple[list[Any], dict[str, Any]]:
        with every_log() as logs:
            cluster.engine.store.create(copy.deepcopy(bad))  # past the API server's checks
            cluster.engine.drain()
            cluster.engine.wake(ObjectKey("apps", "Deployment", "default", "web"))  # nothing changed
            await cluster.apply(good)
            await clock.sleep(5)
        return logs, await status(cluster, good)

    logs, running = on_cluster(main)
    (said,) = [e for e in logs if e["log_level"] in ("warning", "error")]
    assert said["event"] == "workload controller cannot handle the object; leaving it until it changes"
    assert said["kind"] == "ReplicaSet" and said["name"].startswith("web-"), "the Deployment's ReplicaSet"
    assert "AttributeError" in said["error"]
    assert running.get("readyReplicas") == 2, "the other workloads ran as usual"
