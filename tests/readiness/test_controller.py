"""The failover-readiness controller on the real plane, in virtual time: the seed story's nginx
keeps a ``FailoverReady`` condition that follows member2's room — False with
``NoSpareCapacity`` (naming member1, whose loss would leave a replica Pending) while member2
is down to one node, True again when its nodes return — and ``/metrics`` counts it."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import structlog
import yaml
from prometheus_client import REGISTRY, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from fleetkeeper.clock import VirtualClock
from fleetkeeper.cmd import logs
from fleetkeeper.cmd.simulate import PlaneFactory
from fleetkeeper.readiness.controller import COLLECTOR
from fleetkeeper.simulation import scenario
from fleetkeeper.simulation.driver import Driver, run_scenario
from fleetkeeper.simulation.scenario import Step

STORY = Path(__file__).resolve().parents[2] / "examples" / "seed-blog-member1-down.yaml"
RB = {"apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding", "namespace": "default",
      "name": "nginx-deployment"}
READY = "status.conditions[type=FailoverReady]"


@pytest.fixture(autouse=True)
def quiet_logs() -> Any:
    saved = structlog.get_config()
    logs.configure(level="error")
    yield
    structlog.configure(**saved)


def story(*, readiness: bool = True) -> dict[str, Any]:
    """The seed story's fleet (member2: three nodes of 600m), readiness on, and a timeline of member2
    losing two nodes at 60 s and getting them back at 120 s."""
    spec: dict[str, Any] = copy.deepcopy(yaml.safe_load(STORY.read_text()))
    for cluster in spec["spec"]["clusters"]:
        if cluster["name"] == "member2":
            cluster["nodeResources"] = {"cpu": "600m", "memory": "4Gi", "pods": "110"}
    spec["spec"]["settings"] = {"failoverReadiness": readiness}
    spec["spec"]["timeline"] = [
        {"at": "50s", "expect": [{"object": RB, "path": READY,
                                  "contains": {"status": "True", "reason": "SurvivesClusterLoss"}}]},
        {"at": "60s", "do": [{"setNodes": {"cluster": "member2", "nodes": 1}}]},
        {"at": "100s", "expect": [{"object": RB, "path": READY,
                                   "contains": {"status": "False", "reason": "NoSpareCapacity"}}]},
        {"at": "120s", "do": [{"setNodes": {"cluster": "member2", "nodes": 3}}]},
        {"at": "160s", "expect": [{"object": RB, "path": READY,
                                   "contains": {"status": "True", "reason": "SurvivesClusterLoss"}}]},
    ]
    return spec


def failover_ready() -> dict[str, float]:
    out = {}
    for family in text_string_to_metric_families(generate_latest(REGISTRY).decode()):
        if family.name == "fleetkeeper_bindings_failover_ready":
            out.update({sample.labels["status"]: sample.value for sample in family.samples})
    return out


def test_the_condition_follows_the_room_member1_s_replicas_would_need() -> None:
    seen: dict[float, dict[str, Any]] = {}

    async def observe(driver: Driver, step: Step) -> None:
        seen[step.at] = failover_ready()

    outcome = run_scenario(scenario.parse(story()), PlaneFactory("memory://"), clock=VirtualClock(),
                           observers=[observe])
    assert outcome.passed, [f.message() for f in outcome.failures]
    assert seen[50] == {"True": 1, "False": 0}
    assert seen[100] == {"True": 0, "False": 1}
    assert COLLECTOR.planes == []


def test_the_message_names_the_domain_that_breaks_it() -> None:
    spec = story()
    spec["spec"]["timeline"][2]["expect"][0]["contains"]["message"] = (
        "if cluster member1 fails, 1 replica would stay Pending for lack of capacity")
    outcome = run_scenario(scenario.parse(spec), PlaneFactory("memory://"), clock=VirtualClock())
    assert outcome.passed, [f.message() for f in outcome.failures]


def test_off_by_default_no_condition_is_written() -> None:
    spec = story(readiness=False)
    spec["spec"]["timeline"] = [{"at": "50s", "expect": [{"object": RB, "path": READY, "absent": True}]}]
    outcome = run_scenario(scenario.parse(spec), PlaneFactory("memory://"), clock=VirtualClock())
    assert outcome.passed, [f.message() for f in outcome.failures]


def test_it_stands_back_while_a_failover_runs() -> None:
    """member1 is lost at about 90 s: until FAILOVER_QUIET seconds after that nothing is assessed (the
    condition is the one from before), then the fleet left (member2 alone) is."""
    from fleetkeeper.readiness.controller import FAILOVER_QUIET

    spec: dict[str, Any] = copy.deepcopy(yaml.safe_load(STORY.read_text()))
    spec["spec"]["settings"] = {"failoverReadiness": True}
    timeline = [step for step in spec["spec"]["timeline"] if step["at"] in ("60s", "100s")]
    assert FAILOVER_QUIET >= 25
    timeline += [
        {"at": "115s", "expect": [{"object": RB, "path": READY,
                                   "contains": {"status": "True", "reason": "SurvivesClusterLoss"}}]},
        {"at": "160s", "expect": [{"object": RB, "path": f"{READY}.status", "equals": "False"}]},
    ]
    spec["spec"]["timeline"] = timeline
    outcome = run_scenario(scenario.parse(spec), PlaneFactory("memory://"), clock=VirtualClock())
    assert outcome.passed, [f.message() for f in outcome.failures]
