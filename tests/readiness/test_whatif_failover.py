"""``whatif`` against the real failover, in the same scenario file.

Each case runs a scenario in virtual time: at 30 s, before anything fails, the what-if of
the failure is computed from the plane's state (what ``fleetkeeper whatif`` reads over
the API); then the clusters go down, the real control plane fails over, and once it has
run its course the real placements (``spec.clusters``) and the replicas running on the
live members must be what the what-if said.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import structlog
import yaml

from fleetkeeper.api.work import ResourceBinding
from fleetkeeper.clock import VirtualClock
from fleetkeeper.cmd import logs
from fleetkeeper.cmd.simulate import PlaneFactory
from fleetkeeper.members.interface import ObjectRef
from fleetkeeper.readiness.live import read_fleet
from fleetkeeper.readiness.whatif import Report, whatif
from fleetkeeper.simulation import scenario
from fleetkeeper.simulation.driver import Driver, run_scenario
from fleetkeeper.simulation.scenario import Step

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(autouse=True)
def quiet_logs() -> Any:
    """Plain log lines: a retried schedule failure is otherwise rendered as a rich traceback each time."""
    saved = structlog.get_config()
    logs.configure(level="error")
    yield
    structlog.configure(**saved)


def story(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((EXAMPLES / f"{name}.yaml").read_text())
    return loaded


def deployment(name: str, replicas: int, *, cpu: str = "250m", policy: dict[str, Any]
               ) -> list[dict[str, Any]]:
    """A Deployment and the PropagationPolicy that places it."""
    return [
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "default"},
         "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                  "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [
                      {"name": name, "image": "nginx:1.27",
                       "resources": {"requests": {"cpu": cpu, "memory": "128Mi"}}}]}}}},
        {"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
         "metadata": {"name": name, "namespace": "default"},
         "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": name}],
                  "placement": policy}},
    ]


def static(weights: dict[str, int]) -> dict[str, Any]:
    return {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted",
            "weightPreference": {"staticWeightList": [
                {"targetCluster": {"clusterNames": [name]}, "weight": w} for name, w in weights.items()]}}


def lacking_capacity() -> dict[str, Any]:
    """The seed story, with member2 a single node that holds its own two replicas and no more."""
    spec = copy.deepcopy(story("seed-blog-member1-down"))
    for cluster in spec["spec"]["clusters"]:
        if cluster["name"] == "member2":
            cluster.update(nodes=1, nodeResources={"cpu": "600m", "memory": "4Gi", "pods": "110"})
    return spec


def two_regions() -> dict[str, Any]:
    """One replica set per region, at least two regions: one region down leaves it no placement."""
    policy = {"spreadConstraints": [{"spreadByField": "cluster", "minGroups": 2, "maxGroups": 2},
                                    {"spreadByField": "region", "minGroups": 2, "maxGroups": 2}],
              "replicaScheduling": {"replicaSchedulingType": "Duplicated"}}
    return {"apiVersion": "fleetkeeper.io/v1alpha1", "kind": "Scenario", "metadata": {"name": "two-regions"},
            "spec": {"clusters": [{"name": "member1", "region": "eu"}, {"name": "member2", "region": "us"}],
                     "resources": deployment("web", 2, policy=policy)}}


def with_failure(spec: dict[str, Any], down: list[str], *, settle: str) -> dict[str, Any]:
    """The scenario's fleet and resources; its timeline replaced by: look at 30 s, fail at 60 s, look at
    ``settle``."""
    out = copy.deepcopy(spec)
    look = [{"object": {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "name": down[0]},
             "exists": True}]
    out["spec"]["timeline"] = [{"at": "30s", "expect": look},
                               {"at": "60s", "do": [{"clusterDown": n} for n in down]},
                               {"at": settle, "expect": look}]
    return out


def run(spec: dict[str, Any], down: list[str], *, settle: str
        ) -> tuple[Report, dict[str, dict[str, int]], dict[str, int]]:
    """(the what-if at 30 s, each binding's real placement at ``settle``, replicas running on live members
    per binding)."""
    found: dict[str, Any] = {}

    async def observe(driver: Driver, step: Step) -> None:
        client = driver.client
        if step.at == 30:
            threshold = driver.scenario.options.eviction_circuit_breaker_threshold
            found["report"] = whatif(await read_fleet(client, threshold=threshold), down, driver.clock.now())
        elif step.do == [] and step.at > 60:
            placed, running = {}, {}
            for rb in (await client.list(ResourceBinding)).items:
                key = f"{rb.metadata.namespace}/{rb.name}"
                placed[key] = {t.name: t.replicas for t in rb.spec.clusters or ()}
                ref = ObjectRef("apps/v1", rb.spec.resource.kind, rb.spec.resource.namespace or "",
                                rb.spec.resource.name)
                running[key] = sum(((driver.fleet[name].peek(ref) or {}).get("status") or {}).get(
                    "readyReplicas", 0) for name in placed[key] if name not in down)
            found["placed"], found["running"] = placed, running

    outcome = run_scenario(scenario.parse(with_failure(spec, down, settle=settle)), PlaneFactory("memory://"),
                           clock=VirtualClock(), observers=[observe])
    assert outcome.passed, [f.message() for f in outcome.failures]
    return found["report"], found["placed"], found["running"]


CASES = [
    pytest.param(story("seed-blog-member1-down"), ["member1"], "100s",
                 {"moved": 1, "homeless": 0, "short": 0, "blocked": 0},
                 {"default/nginx-deployment": {"member2": 3}}, id="the seed story: nginx all on member2"),
    pytest.param(lacking_capacity(), ["member1"], "100s",
                 {"moved": 1, "homeless": 0, "short": 1, "blocked": 0},
                 {"default/nginx-deployment": {"member2": 3}},
                 id="member2 lacks capacity: one replica stays Pending"),
    pytest.param(story("no-homeless-workload"), ["member1"], "100s",
                 {"moved": 1, "homeless": 1, "short": 0, "blocked": 0},
                 {"default/web-deployment": {}}, id="pinned to member1 by affinity: homeless"),
    pytest.param(story("toleration-120s"), ["member1"], "250s",
                 {"moved": 1, "homeless": 0, "short": 0, "blocked": 0},
                 {"default/web-deployment": {"member2": 3}}, id="a toleration of 120s: moves after 120s"),
    pytest.param(story("partition-circuit-breaker"), ["member1", "member2", "member3"], "150s",
                 {"moved": 0, "homeless": 0, "short": 0, "blocked": 1},
                 {"default/web-deployment": {"member1": 1, "member2": 1, "member3": 1, "member4": 1}},
                 id="3 of 4 clusters down: blocked by the circuit breaker"),
    pytest.param(two_regions(), ["member1"], "100s",
                 {"moved": 1, "homeless": 1, "short": 0, "blocked": 0},
                 {"default/web-deployment": {"member2": 2}},
                 id="spread over 2 regions, one down: homeless"),
]


@pytest.mark.parametrize(("spec", "down", "settle", "summary", "after"), CASES)
def test_whatif_says_what_the_real_failover_does(spec: dict[str, Any], down: list[str], settle: str,
                                                 summary: dict[str, int], after: dict[str, dict[str, int]]
                                                 ) -> None:
    report, placed, running = run(spec, down, settle=settle)
    assert report.summary() == summary
    predicted = {w.binding: dict(w.after) for w in report.workloads}
    assert predicted == after
    assert placed == after, "the real failover placed the workloads elsewhere"
    for w in report.workloads:
        if not w.blocked and not w.homeless:
            assert sum(w.after.values()) - w.pending_replicas == running[w.binding]


def test_a_toleration_says_when_the_workload_moves() -> None:
    report, _, _ = run(story("toleration-120s"), ["member1"], settle="250s")
    assert [w.as_dict()["movesAfterSeconds"] for w in report.workloads] == [120]


def test_the_seed_story_in_the_json_shape() -> None:
    report, _, _ = run(story("seed-blog-member1-down"), ["member1"], settle="100s")
    assert report.as_dict() == {
        "down": ["member1"],
        "workloads": [{"binding": "default/nginx-deployment", "before": {"member1": 1, "member2": 2},
                       "after": {"member2": 3}, "pendingReplicas": 0, "homeless": False, "blocked": False,
                       "movesAfterSeconds": 0}],
        "summary": {"moved": 1, "homeless": 0, "short": 0, "blocked": 0}}
