"""The binding controller's pure decisions (ports of Karmada's binding helper tests, spec §7.7)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from fleetkeeper.api import constants
from fleetkeeper.api.work import BindingSuspension, ResourceBindingSpec, TargetCluster, Work
from fleetkeeper.controllers import binding_rules as rules


def spec(**fields: Any) -> ResourceBindingSpec:
    return ResourceBindingSpec.from_dict({
        "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default", "name": "nginx"},
        **fields,
    })


def task(cluster: str, mode: str | None = None) -> dict[str, Any]:
    out = {"fromCluster": cluster, "reason": "TaintUntolerated", "producer": "TaintManager"}
    return {**out, "purgeMode": mode} if mode else out


def work(cluster: str, *, deleting: bool = False) -> Work:
    meta: dict[str, Any] = {"name": "nginx-687f7fb96f", "namespace": f"karmada-es-{cluster}"}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
        meta["finalizers"] = [constants.EXECUTION_CONTROLLER_FINALIZER]
    return Work.from_dict({"metadata": meta})


def test_target_clusters_follow_the_schedule_then_required_by() -> None:
    s = spec(clusters=[{"name": "m1", "replicas": 1}, {"name": "m2", "replicas": 2}],
             requiredBy=[{"name": "a", "clusters": [{"name": "m2", "replicas": 9}, {"name": "m3"}]},
                         {"name": "b", "clusters": [{"name": "m3"}, {"name": "m4"}]}])
    assert [(t.name, t.replicas) for t in rules.target_clusters(s)] == [("m1", 1), ("m2", 2), ("m3", 0),
                                                                        ("m4", 0)]


@pytest.mark.parametrize(("fields", "existing"), [
    pytest.param({"clusters": [{"name": "m1"}]}, {"m1"}, id="the scheduled clusters"),
    pytest.param({"clusters": [{"name": "m1"}], "requiredBy": [{"name": "x", "clusters": [{"name": "m2"}]}]},
                 {"m1", "m2"}, id="plus the clusters of requiring bindings"),
    pytest.param({"clusters": [{"name": "m2"}], "gracefulEvictionTasks": [task("m1", "Gracefully")]},
                 {"m1", "m2"}, id="plus clusters of graceful eviction tasks"),
    pytest.param({"gracefulEvictionTasks": [task("m1")]}, {"m1"},
                 id="a task without purge mode counts as graceful"),
    pytest.param({"clusters": [{"name": "m2"}], "gracefulEvictionTasks": [task("m1", "Never")]},
                 {"m1", "m2"}, id="Never tasks keep their cluster"),
    pytest.param({"clusters": [{"name": "m2"}], "gracefulEvictionTasks": [task("m1", "Directly")]},
                 {"m2"}, id="Directly tasks do not keep their cluster"),
])
def test_existing_clusters(fields: dict[str, Any], existing: set[str]) -> None:
    assert rules.existing_clusters(spec(**fields)) == existing


def test_directly_clusters_are_those_of_directly_tasks() -> None:
    s = spec(gracefulEvictionTasks=[task("m1", "Directly"), task("m2", "Gracefully"), task("m3", "Directly")])
    assert rules.directly_clusters(s) == {"m1", "m3"}


def test_orphans_are_live_works_outside_the_existing_clusters() -> None:
    works = [work("m1"), work("m2"), work("m3", deleting=True)]
    assert [w.namespace for w in rules.orphan_works(works, {"m1"})] == ["karmada-es-m2"]
    assert [w.namespace for w in rules.works_in(works, {"m3"})] == ["karmada-es-m3"]


@pytest.mark.parametrize(("suspension", "cluster", "suspended"), [
    pytest.param(None, "m1", False, id="no suspension dispatches"),
    pytest.param(BindingSuspension(dispatching=False), "m1", False, id="dispatching false dispatches"),
    pytest.param(BindingSuspension(dispatching=True), "m1", True,
                 id="dispatching true suspends every cluster"),
    pytest.param(BindingSuspension.from_dict({"dispatchingOnClusters": {"clusterNames": ["m1"]}}), "m1", True,
                 id="a listed cluster is suspended"),
    pytest.param(BindingSuspension.from_dict({"dispatchingOnClusters": {"clusterNames": ["m1"]}}), "m2",
                 False, id="an unlisted cluster is not"),
    pytest.param(BindingSuspension(scheduling=True), "m1", False,
                 id="scheduling suspension does not hold dispatch"),
])
def test_dispatch_suspended(suspension: BindingSuspension | None, cluster: str, suspended: bool) -> None:
    assert rules.dispatch_suspended(suspension, cluster) is suspended


@pytest.mark.parametrize(("annotation", "binding", "expected"), [
    pytest.param(None, "Abort", "abort", id="default is abort"),
    pytest.param(None, "Overwrite", "overwrite", id="the binding's Overwrite"),
    pytest.param("overwrite", "Abort", "overwrite", id="the template annotation wins over the binding"),
    pytest.param("abort", "Overwrite", "abort", id="an abort annotation wins too"),
    pytest.param("bogus", "Overwrite", "overwrite", id="an invalid annotation is ignored"),
])
def test_conflict_resolution(annotation: str | None, binding: str, expected: str) -> None:
    annotations = {constants.CONFLICT_RESOLUTION_ANNOTATION: annotation} if annotation else {}
    assert rules.conflict_resolution(annotations, binding) == expected


@pytest.mark.parametrize(("fields", "workload"), [
    pytest.param({"replicas": 2}, True, id="replicas make a workload"),
    pytest.param({"replicaRequirements": {"resourceRequest": {"cpu": "1"}}}, True, id="requirements do too"),
    pytest.param({}, False, id="a ConfigMap is not a workload"),
])
def test_is_workload(fields: dict[str, Any], workload: bool) -> None:
    assert rules.is_workload(spec(**fields)) is workload


def test_the_manifest_carries_karmadas_managed_metadata() -> None:
    manifest: dict[str, Any] = {"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "nginx", "namespace": "default", "labels": {"app": "nginx"},
                             "annotations": {"note": "x"}},
                "spec": {"replicas": 1}}
    refs = {constants.RB_NAMESPACE_ANNOTATION: "default", constants.RB_NAME_ANNOTATION: "nginx-deployment"}
    out = rules.render_manifest(
        manifest, id_label=constants.RB_PERMANENT_ID_LABEL, binding_permanent_id="rb-id", work_id="w-id",
        work_name="nginx-687f7fb96f", work_namespace="karmada-es-m1", template_uid="uid-1",
        template_generation=4, references=refs, conflict="abort")
    labels, annotations = out["metadata"]["labels"], out["metadata"]["annotations"]
    assert labels == {"app": "nginx", constants.RB_PERMANENT_ID_LABEL: "rb-id",
                      constants.WORK_PERMANENT_ID_LABEL: "w-id", constants.MANAGED_BY_KARMADA_LABEL: "true"}
    assert annotations[constants.RESOURCE_TEMPLATE_GENERATION_ANNOTATION] == "4"
    assert annotations[constants.RESOURCE_TEMPLATE_UID_ANNOTATION] == "uid-1"
    assert annotations[constants.WORK_NAME_ANNOTATION] == "nginx-687f7fb96f"
    assert annotations[constants.WORK_NAMESPACE_ANNOTATION] == "karmada-es-m1"
    assert annotations[constants.CONFLICT_RESOLUTION_ANNOTATION] == "abort"
    assert annotations[constants.MANAGED_LABELS_ANNOTATION] == ",".join(sorted(labels))
    managed = annotations[constants.MANAGED_ANNOTATIONS_ANNOTATION].split(",")
    assert managed == sorted(managed) and "note" in managed
    assert constants.MANAGED_ANNOTATIONS_ANNOTATION not in managed
    assert manifest["metadata"]["labels"] == {"app": "nginx"}, "the input is left alone"


def test_a_work_is_created_with_the_execution_finalizer_and_explicit_flags() -> None:
    plan = rules.WorkPlan(
        name="nginx-687f7fb96f", cluster="m1", manifest={"kind": "Deployment"},
        id_label=constants.RB_PERMANENT_ID_LABEL, binding_permanent_id="rb-id", work_id="w-id",
        references={constants.RB_NAME_ANNOTATION: "nginx-deployment"}, conflict="abort",
        suspend=False, preserve=False)
    assert plan.key == "karmada-es-m1/nginx-687f7fb96f"
    created = rules.desired_work(plan, None)
    assert (created.namespace, created.name) == ("karmada-es-m1", "nginx-687f7fb96f")
    assert created.metadata.finalizers == [constants.EXECUTION_CONTROLLER_FINALIZER]
    assert created.spec.suspend_dispatching is False and created.spec.preserve_resources_on_deletion is False
    assert created.labels() == {constants.RB_PERMANENT_ID_LABEL: "rb-id",
                                constants.WORK_PERMANENT_ID_LABEL: "w-id"}
    current = created.model_copy(deep=True)
    current.metadata.labels = {**current.labels(), "added-by": "someone"}
    assert not rules.work_differs(current, rules.desired_work(plan, current))
    suspended = rules.desired_work(dataclasses.replace(plan, suspend=True), current)
    assert rules.work_differs(current, suspended) and suspended.labels()["added-by"] == "someone"


def test_work_permanent_ids_are_stable_per_binding_and_cluster() -> None:
    assert rules.work_permanent_id("rb", "m1") == rules.work_permanent_id("rb", "m1")
    assert rules.work_permanent_id("rb", "m1") != rules.work_permanent_id("rb", "m2")


def test_the_work_name_of_the_seed_example() -> None:
    assert constants.work_name("Deployment", "nginx", "default") == "nginx-687f7fb96f"


@pytest.mark.parametrize(("completions", "replicas", "expected"), [
    pytest.param(10, {"m1": 1, "m2": 1}, {"m1": 5, "m2": 5}, id="an even split"),
    pytest.param(10, {"m1": 1, "m2": 2}, {"m1": 3, "m2": 7}, id="the heavier cluster takes the remainder"),
    pytest.param(5, {"m1": 2, "m2": 2, "m3": 2}, {"m1": 2, "m2": 2, "m3": 1},
                 id="equal weights: names break the tie"),
    pytest.param(4, {"m1": 0, "m2": 3}, {"m2": 4}, id="a cluster without replicas gets none"),
])
def test_divide_completions(completions: int, replicas: dict[str, int], expected: dict[str, int]) -> None:
    targets = [TargetCluster(name=n, replicas=r) for n, r in replicas.items()]
    assert rules.divide_completions(completions, targets) == expected


JOB = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "spec": {"completions": 6}}
DIVIDED = {"replicaScheduling": {"replicaSchedulingType": "Divided"}}


@pytest.mark.parametrize(("manifest", "placement", "expected"), [
    pytest.param(JOB, DIVIDED, {"m1": 2, "m2": 4}, id="a Divided Job splits its completions"),
    pytest.param(JOB, {}, {}, id="a Duplicated Job keeps them"),
    pytest.param({**JOB, "kind": "Deployment", "apiVersion": "apps/v1"}, DIVIDED, {}, id="only Jobs"),
    pytest.param({**JOB, "spec": {}}, DIVIDED, {}, id="a Job without completions"),
])
def test_job_completions(manifest: dict[str, Any], placement: dict[str, Any],
                        expected: dict[str, int]) -> None:
    targets = [TargetCluster(name="m1", replicas=1), TargetCluster(name="m2", replicas=2)]
    s = spec(replicas=3, placement=placement, clusters=[t.to_dict() for t in targets])
    assert rules.job_completions(manifest, s, targets) == expected
    if expected:
        assert rules.with_completions(manifest, 2)["spec"]["completions"] == 2
        assert manifest["spec"]["completions"] == 6, "the input is left alone"
