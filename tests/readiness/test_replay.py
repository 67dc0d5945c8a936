"""A simulated failure from a snapshot of a running plane (``whatif --simulate``): the seed story's
plane is the "live" one; at 30 s its state becomes a scenario with member1 down, and that
run says when nginx is rescheduled and ready again — what the real failover of the story
then does, within a probe period (the two runs' probes are not in step)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import structlog
import yaml

from fleetkeeper.api import timeline
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.clock import VirtualClock
from fleetkeeper.cmd import logs
from fleetkeeper.cmd.simulate import PlaneFactory
from fleetkeeper.readiness import replay
from fleetkeeper.readiness.live import read_fleet, read_resources
from fleetkeeper.simulation import scenario
from fleetkeeper.simulation.driver import Driver, run_scenario
from fleetkeeper.simulation.scenario import Step

STORY = Path(__file__).resolve().parents[2] / "examples" / "seed-blog-member1-down.yaml"
KEY = "default/nginx-deployment"


@pytest.fixture(autouse=True)
def quiet_logs() -> Any:
    saved = structlog.get_config()
    logs.configure(level="error")
    yield
    structlog.configure(**saved)


def test_the_simulated_failure_of_a_live_snapshot_times_the_real_one() -> None:
    story: dict[str, Any] = yaml.safe_load(STORY.read_text())
    taken: dict[str, Any] = {}

    async def snapshot(driver: Driver, step: Step) -> None:
        if step.at == 30:
            fleet = await read_fleet(driver.client, threshold=0.55)
            resources = await read_resources(driver.client, fleet)
            taken["doc"] = replay.scenario_doc(fleet.clusters.values(), resources, ["member1"],
                                               threshold=0.55, horizon=120)
            taken["clusters"] = list(fleet.clusters.values())

    real = run_scenario(scenario.parse(story), PlaneFactory("memory://"), clock=VirtualClock(),
                        observers=[snapshot])
    assert real.passed, [f.message() for f in real.failures]
    [expected] = replay.outcomes(real.timeline, [KEY], down_at=60)

    doc = taken["doc"]
    assert [c["name"] for c in doc["spec"]["clusters"]] == ["member1", "member2", "member3"]
    assert doc["spec"]["clusters"][0]["nodes"] == 3
    kinds = sorted(r["kind"] for r in doc["spec"]["resources"])
    assert kinds == ["Deployment", "PropagationPolicy"]
    simulated = run_scenario(scenario.parse(doc), PlaneFactory("memory://"), clock=VirtualClock())
    assert simulated.passed, [f.message() for f in simulated.failures]
    [found] = replay.outcomes(simulated.timeline, [KEY])
    assert expected.rescheduled_after is not None and expected.ready_after is not None
    assert found.rescheduled_after is not None and found.ready_after is not None
    assert abs(found.rescheduled_after - expected.rescheduled_after) <= 10
    assert abs(found.ready_after - expected.ready_after) <= 10
    assert found.as_dict().keys() == {"binding", "rescheduledAfterSeconds", "readyAfterSeconds"}
    assert any(line.action == timeline.SCHEDULED for line in simulated.timeline)


def test_a_member_is_sized_like_the_real_one() -> None:
    cluster = Cluster.from_dict({
        "metadata": {"name": "m", "labels": {"env": "prod"}},
        "spec": {"syncMode": "Push", "region": "eu", "zones": ["eu-1"], "taints": [
            {"key": "cluster.karmada.io/not-ready", "effect": "NoExecute"},
            {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]},
        "status": {"nodeSummary": {"totalNum": 4, "readyNum": 4},
                   "resourceSummary": {"allocatable": {"cpu": "10", "memory": "16Gi", "pods": "440"}}}})
    assert replay.cluster_def(cluster) == {
        "name": "m", "labels": {"env": "prod"}, "region": "eu", "zone": "eu-1",
        "taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}],
        "nodes": 4, "nodeResources": {"cpu": "2500m", "memory": "4294967296", "pods": "110"}}
