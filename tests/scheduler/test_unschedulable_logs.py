"""A binding no placement can satisfy is an expected outcome, not a bug: when the only
cluster of one region fails and the policy spreads over two regions (``minGroups: 2``),
the scheduler says so at warning, without a traceback, and says it again only once a
minute of (virtual) time while the retries go on."""

from __future__ import annotations

from typing import Any

from structlog.testing import capture_logs

from fleetkeeper.clock import VirtualClock
from fleetkeeper.cmd.simulate import PlaneFactory
from fleetkeeper.simulation import scenario
from fleetkeeper.simulation.driver import run_scenario

RB = {"apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding", "namespace": "default",
      "name": "nginx-deployment"}
STORY: dict[str, Any] = {
    "apiVersion": "fleetkeeper.io/v1alpha1", "kind": "Scenario", "metadata": {"name": "two-regions-one-down"},
    "spec": {
        "clusters": [{"name": "member1", "region": "eu"}, {"name": "member2", "region": "eu"},
                     {"name": "member3", "region": "us"}],
        "resources": [
            {"apiVersion": "apps/v1", "kind": "Deployment",
             "metadata": {"name": "nginx", "namespace": "default"},
             "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "nginx"}},
                      "template": {"metadata": {"labels": {"app": "nginx"}},
                                   "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]}}}},
            {"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
             "metadata": {"name": "nginx-propagation", "namespace": "default"},
             "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx"}],
                      "placement": {
                          "spreadConstraints": [{"spreadByField": "region", "minGroups": 2, "maxGroups": 2},
                                                {"spreadByField": "cluster", "minGroups": 2}],
                          "replicaScheduling": {"replicaSchedulingType": "Duplicated"}}}},
        ],
        "timeline": [
            {"at": "30s", "expect": [{"object": RB, "path": "spec.clusters", "count": 2}]},
            {"at": "60s", "do": [{"clusterDown": "member3"}]},
            {"at": "400s", "expect": [{"object": RB, "path": "spec.clusters[name=member3]", "absent": True}]},
        ],
    },
}


def test_an_unschedulable_binding_logs_no_traceback_and_repeats_rarely() -> None:
    with capture_logs() as logs:
        outcome = run_scenario(scenario.parse(STORY), PlaneFactory("memory://"), clock=VirtualClock())
    assert outcome.passed, [f.message() for f in outcome.failures]
    assert not [entry for entry in logs if entry.get("exc_info")], "a traceback for an expected outcome"
    assert not [entry for entry in logs if entry["log_level"] in ("error", "critical")]
    said = [entry for entry in logs if entry.get("controller") == "scheduler"
            and entry["event"] == "reconcile failed; retrying with backoff"]
    assert said, "the failure is said"
    assert all(entry["log_level"] == "warning" for entry in said)
    assert "minGroups" in said[0]["error"] or "MinGroups" in said[0]["error"], said[0]["error"]
    # 340 s of retries with backoff: the first, then about once a minute, with what was held back
    assert len(said) <= 7, [entry.get("suppressed") for entry in said]
    assert any(entry.get("suppressed", 0) > 0 for entry in said[1:])
