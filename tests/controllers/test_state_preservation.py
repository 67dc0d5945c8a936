"""State preservation: extraction from a reflected status, and Karmada's injection rules."""

from __future__ import annotations

from typing import Any

import pytest

from fleetkeeper.api.policy import StatePreservationRule
from fleetkeeper.api.work import ResourceBindingSpec, ResourceBindingStatus
from fleetkeeper.controllers.state_preservation import (
    ExtractionError,
    cluster_rules,
    inject,
    labels_to_inject,
    preserved_label_state,
    preserved_on_taint,
)

JOB = "failover.example.io/job-id"


def rules(*pairs: tuple[str, str]) -> list[StatePreservationRule]:
    return [StatePreservationRule(alias_label_name=a, json_path=p) for a, p in pairs]


# --- extraction (Karmada's Test_BuildPreservedLabelState) -------------------------------------------


def test_every_rule_is_evaluated_against_the_status() -> None:
    got = preserved_label_state(rules(("key-a", "{ .replicas }"), ("key-b", "{ .health }")),
                                {"replicas": 2, "health": True})
    assert got == {"key-a": "2", "key-b": "true"}


@pytest.mark.parametrize(("pairs", "status", "message"), [
    pytest.param((("key-a", "{ .replicas }"), ("key-b", "{ .notfound }")), {"replicas": 2},
                 "key-b.*notfound is not found", id="one rule naming a missing field fails the extraction"),
    pytest.param((("key-a", "{ .replicas }"), ("key-b", "{ %health }")), {"replicas": 2},
                 "key-b.*unrecognized character", id="one rule with an invalid path fails the extraction"),
    pytest.param(((JOB, "{ .jobId }"),), None, "no status", id="a cluster that reported no status fails"),
    pytest.param(((JOB, "{ .jobId }"),), {}, "no status", id="an empty status fails"),
])
def test_extraction_failures_name_the_rule(pairs: tuple[tuple[str, str], ...], status: dict[str, Any] | None,
                                           message: str) -> None:
    with pytest.raises(ExtractionError, match=message):
        preserved_label_state(rules(*pairs), status)


# --- injection (spec §4.12.4) --------------------------------------------------------------------


def spec(clusters: list[str], tasks: list[dict[str, Any]],
         required_by: list[str] | None = None) -> ResourceBindingSpec:
    doc: dict[str, Any] = {
        "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default", "name": "flink"},
        "clusters": [{"name": c, "replicas": 1} for c in clusters],
        "gracefulEvictionTasks": tasks,
    }
    if required_by:
        doc["requiredBy"] = [{"name": "parent", "namespace": "default",
                              "clusters": [{"name": c} for c in required_by]}]
    return ResourceBindingSpec.model_validate(doc)


def task(from_cluster: str, mode: str = "Directly", *, state: dict[str, str] | None = None,
         before: list[str] | None = None) -> dict[str, Any]:
    preserved = state if state is not None else {JOB: "job-" + from_cluster}
    out: dict[str, Any] = {"fromCluster": from_cluster, "purgeMode": mode, "reason": "ApplicationFailure",
                           "producer": "resource-binding-application-failover-controller",
                           "preservedLabelState": preserved}
    if before is not None:
        out["clustersBeforeFailover"] = before
    return out


@pytest.mark.parametrize(("binding", "cluster", "expected"), [
    pytest.param(spec(["member2"], [task("member1", before=["member1"])]), "member2", {JOB: "job-member1"},
                 id="the new cluster of a Directly application failover gets the preserved labels"),
    pytest.param(spec(["member2"], [task("member1")]), "member2", {JOB: "job-member1"},
                 id="a task without clustersBeforeFailover (taint eviction) injects into its target"),
    pytest.param(spec(["member1"], [task("member1", before=["member1"])]), "member1", {},
                 id="a cluster the workload ran in before the failover is not new"),
    pytest.param(spec(["member2"], [task("member1", "Gracefully", before=["member1"])]), "member2", {},
                 id="a Gracefully task records the state but never injects it"),
    pytest.param(spec(["member2"], [task("member1", "Never", before=["member1"])]), "member2", {},
                 id="a Never task records the state but never injects it"),
    pytest.param(spec(["member2", "member3"], [task("member1", before=["member1"])]), "member2", {},
                 id="a workload spread over several clusters gets no injection"),
    pytest.param(spec(["member2"], [task("member1", before=["member1"])], required_by=["member3"]), "member2",
                 {}, id="clusters required by another binding count as targets"),
    pytest.param(spec(["member2"], []), "member2", {}, id="no task, no injection"),
    pytest.param(spec(["member3"], [task("member1", state={JOB: "old"}, before=["member1"]),
                                    task("member2", state={JOB: "new"}, before=["member2"])]),
                 "member3", {JOB: "new"}, id="the last task is the one that counts"),
    pytest.param(spec(["member3"], [task("member1", before=["member1"]),
                                    task("member2", "Gracefully", before=["member2"])]),
                 "member3", {}, id="an earlier Directly task does not count when the last is not Directly"),
])
def test_labels_to_inject(binding: ResourceBindingSpec, cluster: str, expected: dict[str, str]) -> None:
    assert labels_to_inject(binding, cluster) == expected


def test_inject_merges_labels_into_a_copy() -> None:
    manifest: dict[str, Any] = {"apiVersion": "apps/v1", "kind": "Deployment",
                                "metadata": {"name": "flink", "labels": {"a": "1"}}}
    out = inject(manifest, {JOB: "job-member1", "a": "2"})
    assert out["metadata"]["labels"] == {"a": "2", JOB: "job-member1"}
    assert manifest["metadata"]["labels"] == {"a": "1"}


def test_inject_without_labels_returns_the_manifest_itself() -> None:
    manifest: dict[str, Any] = {"metadata": {"name": "flink"}}
    assert inject(manifest, {}) is manifest


# --- cluster failover: what the taint-manager preserves ------------------------------------------


def failed_binding(rules_: list[dict[str, str]] | None, reported: dict[str, Any] | None
                   ) -> tuple[ResourceBindingSpec, ResourceBindingStatus]:
    failover: dict[str, Any] = {"cluster": {"purgeMode": "Directly"}}
    if rules_ is not None:
        failover["cluster"]["statePreservation"] = {"rules": rules_}
    doc = spec(["member1"], []).model_dump(by_alias=True, exclude_none=True)
    items = [{"clusterName": "member1", "status": reported}] if reported is not None else []
    return (ResourceBindingSpec.model_validate({**doc, "failover": failover}),
            ResourceBindingStatus.model_validate({"aggregatedStatus": items}))


def test_a_taint_eviction_preserves_what_the_failed_cluster_reported() -> None:
    binding, status = failed_binding([{"aliasLabelName": "test-alias", "jsonPath": "{.replicas}"}],
                                     {"replicas": 3, "readyReplicas": 0})
    assert cluster_rules(binding) == rules(("test-alias", "{.replicas}"))
    assert preserved_on_taint(binding, status, "member1") == {"test-alias": "3"}


def test_a_taint_eviction_without_rules_preserves_nothing_and_reads_nothing() -> None:
    binding, status = failed_binding(None, None)
    assert cluster_rules(binding) == []
    assert preserved_on_taint(binding, status, "member1") == {}


def test_a_taint_eviction_with_rules_needs_a_reported_status() -> None:
    binding, status = failed_binding([{"aliasLabelName": "test-alias", "jsonPath": "{.replicas}"}], None)
    with pytest.raises(ExtractionError, match="no status"):
        preserved_on_taint(binding, status, "member1")
