"""Status rules: manifest identifiers, aggregated items and FullyApplied (spec §4.9, §4.10)."""

from __future__ import annotations

from typing import Any

import pytest

from fleetkeeper.api.work import AggregatedStatusItem, ManifestStatus, Work
from fleetkeeper.controllers import status_rules as rules

MANIFEST = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "nginx",
                                                                        "namespace": "default"}}
IDENT = rules.identifier(0, MANIFEST)


def work(cluster: str, *, applied: str | None = "True", message: str = "", health: str | None = "Healthy",
         deleting: bool = False, manifest: dict[str, Any] = MANIFEST) -> Work:
    status: dict[str, Any] = {}
    if applied is not None:
        status["conditions"] = [{"type": "Applied", "status": applied, "reason": "x", "message": message}]
    if health is not None:
        status["manifestStatuses"] = [{"identifier": IDENT.to_dict(), "status": {"readyReplicas": 1},
                                       "health": health}]
    meta: dict[str, Any] = {"name": "nginx-687f7fb96f", "namespace": f"karmada-es-{cluster}"}
    if deleting:
        meta.update(deletionTimestamp="2026-01-01T00:00:00Z", finalizers=["x"])
    return Work.from_dict({"metadata": meta, "spec": {"workload": {"manifests": [manifest]}},
                           "status": status})


def test_the_identifier_names_group_version_resource() -> None:
    assert IDENT.to_dict() == {"ordinal": 0, "group": "apps", "version": "v1", "kind": "Deployment",
                               "resource": "deployments", "namespace": "default", "name": "nginx"}
    custom = rules.identifier(1, {"apiVersion": "apps.example.io/v1", "kind": "Workload",
                                  "metadata": {"name": "w"}})
    assert (custom.group, custom.resource, custom.namespace) == ("apps.example.io", "workloads", None)


@pytest.mark.parametrize(("verdict", "health"), [
    pytest.param(True, "Healthy", id="a healthy verdict"),
    pytest.param(False, "Unhealthy", id="an unhealthy verdict"),
    pytest.param(None, "Unknown", id="a failed rule is Unknown"),
])
def test_health_of(verdict: bool | None, health: str) -> None:
    assert rules.health_of(verdict) == health


def test_unreachable_members_keep_the_status_but_not_the_health() -> None:
    entry = ManifestStatus(identifier=IDENT, status={"readyReplicas": 3}, health="Healthy")
    assert rules.unknown(entry) == ManifestStatus(identifier=IDENT, status={"readyReplicas": 3},
                                                  health="Unknown")


ITEM = {"cluster_name": "m1"}


@pytest.mark.parametrize(("w", "expected"), [
    pytest.param(work("m1", applied=None, health=None),
                 AggregatedStatusItem(**ITEM, applied=False, health="Unknown"), id="not applied yet"),
    pytest.param(work("m1", applied="False", message="boom", health=None),
                 AggregatedStatusItem(**ITEM, applied=False, applied_message="boom", health="Unknown"),
                 id="failed to apply keeps the message"),
    pytest.param(work("m1", applied="Unknown", message="?", health=None),
                 AggregatedStatusItem(**ITEM, applied=False, applied_message="?", health="Unknown"),
                 id="an Unknown Applied condition is not applied"),
    pytest.param(work("m1", health=None), AggregatedStatusItem(**ITEM, applied=True, health="Unknown"),
                 id="applied without a status yet is Unknown"),
    pytest.param(work("m1"), AggregatedStatusItem(**ITEM, applied=True, status={"readyReplicas": 1},
                                                 health="Healthy"), id="applied with a status"),
    pytest.param(work("m1", health="Unhealthy"),
                 AggregatedStatusItem(**ITEM, applied=True, status={"readyReplicas": 1}, health="Unhealthy"),
                 id="an unhealthy member is reported so"),
    pytest.param(work("m1", manifest={**MANIFEST, "metadata": {"name": "other", "namespace": "default"}}),
                 AggregatedStatusItem(**ITEM, applied=True, health="Unknown"),
                 id="a Work not holding the template has no status for it"),
])
def test_aggregated_item(w: Work, expected: AggregatedStatusItem) -> None:
    assert rules.aggregated_item(w, "apps/v1", "Deployment", "default", "nginx") == expected


def test_aggregated_status_skips_deleting_works_and_sorts_by_cluster() -> None:
    works = [work("m3"), work("m1"), work("m2", deleting=True)]
    items = rules.aggregated_status(works, "apps/v1", "Deployment", "default", "nginx")
    assert [i.cluster_name for i in items] == ["m1", "m3"]


def applied(*clusters: str, ok: bool = True) -> list[AggregatedStatusItem]:
    return [AggregatedStatusItem(cluster_name=c, applied=ok) for c in clusters]


@pytest.mark.parametrize(("items", "existing", "status"), [
    pytest.param(applied("m1", "m2"), {"m1", "m2"}, "True", id="every existing cluster applied"),
    pytest.param(applied("m1"), {"m1", "m2"}, "False", id="a missing item"),
    pytest.param(applied("m1", "m2", ok=False), {"m1", "m2"}, "False", id="an item not applied"),
    pytest.param(applied("m1", "m3"), {"m1", "m2"}, "False", id="an item of a cluster not existing"),
    pytest.param([], set(), "False", id="no clusters is never fully applied"),
    pytest.param(applied("m1", "m2", "m3"), {"m1", "m2"}, "False", id="too many items"),
])
def test_fully_applied(items: list[AggregatedStatusItem], existing: set[str], status: str) -> None:
    condition = rules.fully_applied(items, existing)
    assert condition.status == status
    assert condition.reason == ("FullyAppliedSuccess" if status == "True" else "FullyAppliedFailed")
