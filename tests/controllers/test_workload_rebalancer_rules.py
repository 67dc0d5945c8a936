"""WorkloadRebalancer rules: which workloads the status lists, when a binding is asked
again, when a finished rebalancer goes; and what admission refuses."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from fleetkeeper import errors
from fleetkeeper.api.admission import admit
from fleetkeeper.api.apps import ObjectReference, ObservedWorkload, WorkloadRebalancer
from fleetkeeper.controllers import workload_rebalancer_rules as rules

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def ref(name: str, namespace: str | None = "default") -> ObjectReference:
    return ObjectReference(api_version="apps/v1", kind="Deployment", name=name, namespace=namespace)


def test_the_status_follows_the_spec_and_keeps_what_was_rebalanced() -> None:
    observed = [ObservedWorkload(workload=ref("gone-done"), result="Successful"),
                ObservedWorkload(workload=ref("gone-failed"), result="Failed",
                                 reason="ReferencedBindingNotFound"),
                ObservedWorkload(workload=ref("kept"), result="Successful")]
    listed = rules.observed_workloads([ref("kept"), ref("new"), ref("cluster-wide", None)], observed)
    assert [(o.workload.name, o.result) for o in listed] == [
        ("cluster-wide", None), ("gone-done", "Successful"), ("kept", "Successful"), ("new", None)]


@pytest.mark.parametrize(("triggered", "again"), [
    (None, True), (T0 - timedelta(seconds=1), True), (T0, False), (T0 + timedelta(seconds=1), False)],
    ids=["never asked", "asked before", "asked by this one", "asked later"])
def test_a_binding_is_asked_again_only_when_the_rebalancer_is_newer(triggered: datetime | None,
                                                                     again: bool) -> None:
    assert rules.needs_trigger(T0, triggered) is again


def test_a_finished_rebalancer_goes_after_its_ttl() -> None:
    assert rules.time_left(T0, 60, T0 + timedelta(seconds=20)) == 40
    assert rules.time_left(T0, 0, T0 + timedelta(seconds=1)) == -1
    assert rules.time_left(None, 60, T0) is None and rules.time_left(T0, None, T0) is None


@pytest.mark.parametrize(("spec", "field"), [
    ({"workloads": []}, "spec.workloads"),
    ({"workloads": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": ""}]}, "spec.workloads[0].name"),
    ({"workloads": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "a"}],
      "ttlSecondsAfterFinished": -1}, "spec.ttlSecondsAfterFinished"),
], ids=["no workloads", "a workload without a name", "a negative TTL"])
def test_admission_names_the_field_of_a_bad_rebalancer(spec: dict[str, Any], field: str) -> None:
    rebalancer = WorkloadRebalancer.from_dict({"metadata": {"name": "r"}, "spec": spec})
    with pytest.raises(errors.Invalid) as caught:
        admit(rebalancer, None, operation="CREATE", now=T0)
    assert field in [cause.field for cause in caught.value.causes]
