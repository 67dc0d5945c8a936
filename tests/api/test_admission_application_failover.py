"""Admission of application failover settings: every invalid combination names its field."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from fleetkeeper import errors
from fleetkeeper.api import SCHEME, admission

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
APP = "spec.failover.application"
RULES = f"{APP}.statePreservation.rules"


def policy(kind: str = "PropagationPolicy", **application: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "flink-propagation"}
    if kind == "PropagationPolicy":
        meta["namespace"] = "default"
    return {"apiVersion": "policy.karmada.io/v1alpha1", "kind": kind, "metadata": meta,
            "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "flink"}],
                     "propagateDeps": True,
                     "failover": {"application": {"decisionConditions": {}, **application}}}}


def admit(doc: dict[str, Any]) -> dict[str, Any]:
    return admission.admit(SCHEME.decode(doc), None, operation="CREATE", now=NOW).to_dict()


def causes(doc: dict[str, Any]) -> dict[str, str]:
    with pytest.raises(errors.Invalid) as caught:
        admit(doc)
    return {c.field: c.message for c in caught.value.causes}


def rule(alias: str = "failover.example.io/job-id", path: str = "{ .jobId }") -> dict[str, str]:
    return {"aliasLabelName": alias, "jsonPath": path}


@pytest.mark.parametrize(("application", "field", "message"), [
    pytest.param({"purgeMode": "Directly", "gracePeriodSeconds": 30}, f"{APP}.gracePeriodSeconds",
                 "only takes effect when purgeMode is Gracefully", id="a grace period with Directly"),
    pytest.param({"purgeMode": "Never", "gracePeriodSeconds": 30}, f"{APP}.gracePeriodSeconds",
                 "only takes effect when purgeMode is Gracefully", id="a grace period with Never"),
    pytest.param({"purgeMode": "Immediately", "gracePeriodSeconds": 30}, f"{APP}.gracePeriodSeconds",
                 "only takes effect", id="a grace period with the legacy spelling of Directly"),
    pytest.param({"gracePeriodSeconds": -1}, f"{APP}.gracePeriodSeconds", "greater than 0",
                 id="a negative grace period"),
    pytest.param({"decisionConditions": {"tolerationSeconds": -1}},
                 f"{APP}.decisionConditions.tolerationSeconds", "greater than or equal to 0",
                 id="a negative toleration"),
    pytest.param({"preConditions": {"delaySeconds": -5}}, f"{APP}.preConditions.delaySeconds",
                 "greater than or equal to 0", id="a negative delay"),
    pytest.param({"blockPredecessorSeconds": -1}, f"{APP}.blockPredecessorSeconds",
                 "greater than or equal to 0", id="a negative block"),
    pytest.param({"statePreservation": {"rules": []}}, f"{APP}.statePreservation.rules", "at least one rule",
                 id="state preservation without any rule"),
    pytest.param({"statePreservation": {"rules": [rule(path=" ")]}}, f"{RULES}[0].jsonPath", "Required",
                 id="state preservation without a jsonPath"),
    pytest.param({"statePreservation": {"rules": [rule(alias="")]}}, f"{RULES}[0].aliasLabelName", "Required",
                 id="state preservation without a label name"),
    pytest.param({"statePreservation": {"rules": [rule(alias="not a label")]}}, f"{RULES}[0].aliasLabelName",
                 "", id="a label name that is not a qualified name"),
    pytest.param({"statePreservation": {"rules": [rule(path="{ %jobId }")]}}, f"{RULES}[0].jsonPath",
                 "unrecognized character", id="a jsonPath that does not parse"),
    pytest.param({"statePreservation": {"rules": [rule(path="{ .jobId")]}}, f"{RULES}[0].jsonPath",
                 "unclosed action", id="a jsonPath with an unclosed action"),
    pytest.param({"statePreservation": {"rules": [rule(), rule(path="{ .other }")]}},
                 f"{RULES}[1].aliasLabelName", "used by an earlier rule",
                 id="two rules writing the same label"),
])
def test_invalid_application_failover_is_rejected_naming_the_field(application: dict[str, Any], field: str,
                                                                    message: str) -> None:
    found = causes(policy(**application))
    assert field in found, found
    assert message in found[field]


def test_cluster_policies_are_checked_the_same_way() -> None:
    found = causes(policy("ClusterPropagationPolicy", statePreservation={"rules": [rule(path="{ %x }")]}))
    assert f"{RULES}[0].jsonPath" in found


def test_never_is_not_a_cluster_failover_purge_mode() -> None:
    doc = policy()
    doc["spec"]["failover"] = {"cluster": {"purgeMode": "Never"}}
    with pytest.raises(errors.Invalid, match=r"spec\.failover\.cluster\.purgeMode"):
        admit(doc)


def test_healthy_state_accepts_only_healthy() -> None:
    with pytest.raises(errors.Invalid, match=r"preConditions\.healthyState"):
        admit(policy(preConditions={"healthyState": "Unhealthy"}))


def test_a_full_application_failover_is_admitted_with_its_defaults() -> None:
    out = admit(policy(preConditions={"delaySeconds": 600, "healthyState": "Healthy"},
                       statePreservation={"rules": [rule(), rule("failover.example.io/epoch", "{.epoch}")]}))
    app = out["spec"]["failover"]["application"]
    assert app["decisionConditions"] == {"tolerationSeconds": 300}
    assert app["purgeMode"] == "Gracefully"
    assert app["gracePeriodSeconds"] == 600
    assert "blockPredecessorSeconds" not in app, "an additive field left unset keeps the policy Karmada's"
    assert app["preConditions"] == {"delaySeconds": 600, "healthyState": "Healthy"}


@pytest.mark.parametrize("path", [
    pytest.param("{ .jobStatus.jobId }", id="Karmada's documented example"),
    pytest.param("{.items[?(@.name==\"a\")].id}", id="a filter"),
    pytest.param("{range .jobs[*]}{.id},{end}", id="a range"),
])
def test_valid_json_paths_are_admitted(path: str) -> None:
    admit(policy(purgeMode="Directly", statePreservation={"rules": [rule(path=path)]}))
