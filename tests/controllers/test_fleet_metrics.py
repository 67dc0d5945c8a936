"""Fleet metrics through a whole failover (the seed story, virtual time): /metrics's
cluster and binding gauges follow member1 going NotReady, its NoExecute taint, the
graceful eviction and the recovery."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from prometheus_client import REGISTRY, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from fleetkeeper.clock import VirtualClock
from fleetkeeper.cmd.simulate import PlaneFactory
from fleetkeeper.controllers.fleet_metrics import COLLECTOR
from fleetkeeper.simulation import scenario
from fleetkeeper.simulation.driver import Driver, run_scenario
from fleetkeeper.simulation.scenario import Step

STORY = Path(__file__).resolve().parents[2] / "examples" / "seed-blog-member1-down.yaml"
RB = {"apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding", "namespace": "default",
      "name": "nginx-deployment"}


def scrape() -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Our gauges as (name, labels) → value, from the exposition text /metrics serves."""
    out = {}
    for family in text_string_to_metric_families(generate_latest(REGISTRY).decode()):
        if family.name.startswith(("fleetkeeper_cluster_", "fleetkeeper_bindings")):
            for sample in family.samples:
                out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


def test_the_gauges_follow_a_cluster_failover() -> None:
    story: dict[str, Any] = yaml.safe_load(STORY.read_text())
    # one more look, while the old copy is kept for its replacement to become healthy
    story["spec"]["timeline"].append({"at": "91s", "expect": [
        {"object": RB, "path": "spec.gracefulEvictionTasks", "count": 1}]})
    story["spec"]["timeline"].sort(key=lambda step: float(str(step["at"]).rstrip("s")))
    seen: dict[float, dict[tuple[str, tuple[tuple[str, str], ...]], float]] = {}

    async def observe(driver: Driver, step: Step) -> None:
        seen[step.at] = scrape()

    outcome = run_scenario(scenario.parse(story), PlaneFactory("memory://"), clock=VirtualClock(),
                           observers=[observe])
    assert outcome.passed, [f.message() for f in outcome.failures]
    assert COLLECTOR.planes == [], "a stopped plane's caches are still exported"

    def ready(t: float, cluster: str, status: str) -> float:
        return seen[t][("fleetkeeper_cluster_ready", (("cluster", cluster), ("status", status)))]

    def no_execute(t: float, cluster: str) -> float:
        return seen[t][("fleetkeeper_cluster_taints", (("cluster", cluster), ("effect", "NoExecute")))]

    def bindings(t: float, state: str) -> float:
        return seen[t][("fleetkeeper_bindings", (("state", state),))]

    assert [ready(t, "member1", "True") for t in (30, 85, 91, 100, 260)] == [1, 1, 0, 0, 1]
    assert [ready(t, "member1", "False") for t in (30, 85, 91, 100, 260)] == [0, 0, 1, 1, 0]
    assert [no_execute(t, "member1") for t in (85, 91, 260)] == [0, 1, 0]
    assert ready(91, "member2", "True") == 1 and no_execute(91, "member2") == 0
    assert [bindings(t, "evicting") for t in (85, 91, 100)] == [0, 1, 0]
    states = ("total", "scheduled", "fully_applied", "unhealthy")
    assert [bindings(30, state) for state in states] == [1, 1, 1, 0]
