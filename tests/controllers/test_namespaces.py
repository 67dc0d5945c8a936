"""Deleting a Namespace deletes what was in it, down to the copies in the member clusters
(a whole plane on simulated members, virtual time); a namespace deleted and re-created
keeps its new objects."""

from __future__ import annotations

from typing import Any

from fleetkeeper.clock import VirtualClock
from fleetkeeper.cmd.simulate import PlaneFactory
from fleetkeeper.simulation import scenario
from fleetkeeper.simulation.driver import run_scenario

DEPLOY = {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "prod", "name": "web"}
CONFIG = {"apiVersion": "v1", "kind": "ConfigMap", "namespace": "prod", "name": "settings"}
POLICY = {"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy", "namespace": "prod",
          "name": "web"}
BINDING = {"apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding", "namespace": "prod",
           "name": "web-deployment"}
NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "name": "prod"}


TEMPLATE = {"metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "web", "image": "nginx"}]}}
RESOURCES: list[dict[str, Any]] = [
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "prod"}},
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": "prod"},
     "data": {"a": "b"}},
    {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "prod"},
     "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE}},
    {"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
     "metadata": {"name": "web", "namespace": "prod"},
     "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}],
              "placement": {"clusterAffinity": {"clusterNames": ["member1", "member2"]}}}},
]


def story(recreate: bool) -> dict[str, Any]:
    timeline: list[dict[str, Any]] = [
        {"at": "20s", "expect": [{"object": BINDING, "path": "spec.clusters", "count": 2},
                                 {"member": "member1", "object": DEPLOY, "exists": True}]},
        {"at": "30s", "do": [{"delete": NAMESPACE}]},
    ]
    if recreate:
        again = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "prod"}}
        timeline[1]["do"].append({"apply": again})
        timeline.append({"at": "60s", "expect": [{"object": CONFIG, "exists": True},
                                                 {"object": DEPLOY, "exists": True},
                                                 {"member": "member2", "object": DEPLOY, "exists": True}]})
    else:
        timeline.append({"at": "60s", "expect": [
            {"object": DEPLOY, "absent": True}, {"object": CONFIG, "absent": True},
            {"object": POLICY, "absent": True}, {"object": BINDING, "absent": True},
            {"member": "member1", "object": DEPLOY, "absent": True},
            {"member": "member2", "object": DEPLOY, "absent": True}]})
    return {"apiVersion": "fleetkeeper.io/v1alpha1", "kind": "Scenario",
            "metadata": {"name": "namespace-gone"},
            "spec": {"seed": 1, "clusters": [{"name": "member1"}, {"name": "member2"}],
                     "resources": RESOURCES, "timeline": timeline}}


def run(recreate: bool) -> list[str]:
    outcome = run_scenario(scenario.parse(story(recreate)), PlaneFactory("memory://"), clock=VirtualClock())
    assert outcome.expectations > 0
    return [failure.message() for failure in outcome.failures]


def test_a_deleted_namespace_takes_its_objects_and_their_copies_in_the_members_with_it() -> None:
    assert run(recreate=False) == []


def test_a_namespace_deleted_and_created_again_keeps_its_new_objects() -> None:
    assert run(recreate=True) == []
