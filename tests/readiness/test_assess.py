"""Readiness verdicts as a table: each reason, from fleets written as the CLI's offline files."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from cli.test_whatif import PINNED, REGIONS, SEED, app_of, cluster, weighted
from fleetkeeper.cli.whatif import offline_fleet
from fleetkeeper.readiness import assess

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def fleet_of(tmp_path: Path, docs: list[dict[str, Any]], *, threshold: float = 0.55) -> Any:
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return offline_fleet([str(path)], threshold=threshold, now=NOW)


@pytest.mark.parametrize(("docs", "by", "status", "reason", "message"), [
    pytest.param([cluster("member1"), cluster("member2"), *app_of("web", 3, SEED)], "cluster", "True",
                 "SurvivesClusterLoss", "keeps all its replicas if any one cluster fails",
                 id="room to spare"),
    pytest.param([cluster("member1"), cluster("member2", cpu="600m", used="500m", pods=2),
                  *app_of("web", 3, SEED)], "cluster", "False", "NoSpareCapacity",
                 "if cluster member1 fails, 1 replica would stay Pending for lack of capacity",
                 id="member2 short of room"),
    pytest.param([cluster("member1"), cluster("member2"), *app_of("web", 3, PINNED)], "cluster", "False",
                 "PinnedToOneCluster",
                 "only cluster member1 can take it: if cluster member1 fails, its replicas have no placement",
                 id="pinned"),
    pytest.param([cluster("member1", region="eu"), cluster("member2", region="us"),
                  *app_of("web", 2, REGIONS)], "region", "False", "NoOtherClusterMatches",
                 "if region eu fails, no other cluster takes its replicas", id="two regions needed"),
    pytest.param([cluster("member1", region="eu"), cluster("member2", region="eu"),
                  cluster("member3", region="us"), *app_of("web", 2, weighted(member1=1, member2=1))],
                 "region", "False", "EvictionsWouldPause",
                 "if region eu fails, the circuit breaker pauses evictions", id="breaker"),
])
def test_condition_per_reason(tmp_path: Path, docs: list[dict[str, Any]], by: str, status: str, reason: str,
                              message: str) -> None:
    fleet = fleet_of(tmp_path, docs)
    result = assess.full_pass(fleet, by, NOW)
    [condition] = result.conditions.values()
    assert (condition.type, condition.status, condition.reason) == ("FailoverReady", status, reason)
    assert condition.message.startswith(message)


def test_equivalent_bindings_form_one_class(tmp_path: Path) -> None:
    docs = [cluster("member1"), cluster("member2")]
    for name in ("a", "b", "c"):
        docs += app_of(name, 3, SEED)
    result = assess.full_pass(fleet_of(tmp_path, docs), "cluster", NOW)
    assert len(result.conditions) == 3 and result.classes == 1


def test_bindings_scheduled_at_other_times_are_equivalent(tmp_path: Path) -> None:
    """The time a binding was last scheduled decides nothing unless a reschedule was asked for after it."""
    from datetime import timedelta

    from fleetkeeper.readiness.whatif import Fleet

    docs = [cluster("member1"), cluster("member2")]
    for name in ("a", "b", "c"):
        docs += app_of(name, 3, SEED)
    fleet = fleet_of(tmp_path, docs)
    a, b, c = fleet.bindings
    earlier = b.status.model_copy(update={"last_scheduled_time": NOW - timedelta(hours=1)})
    b = b.model_copy(update={"status": earlier})
    asked = c.spec.model_copy(update={"reschedule_triggered_at": NOW - timedelta(minutes=30)})
    c = c.model_copy(update={"spec": asked, "status": b.status})
    again = Fleet(fleet.clusters.values(), (a, b, c), fleet.policies, threshold=fleet.threshold)
    assert again.class_of(a) == again.class_of(b) != again.class_of(c)
    assert assess.full_pass(again, "cluster", NOW).classes == 2


def test_domains_by_zone_and_region() -> None:
    from fleetkeeper.api.cluster import Cluster

    clusters = [Cluster.from_dict({**cluster(n), "spec": {"syncMode": "Push", "region": r, "zone": z}})
                for n, r, z in (("a", "eu", "eu-1"), ("b", "eu", "eu-2"), ("c", "us", ""))]
    assert assess.domains(clusters, "region") == {"eu": ["a", "b"], "us": ["c"]}
    assert assess.domains(clusters, "zone") == {"eu-1": ["a"], "eu-2": ["b"]}
    assert assess.domains(clusters, "cluster") == {"a": ["a"], "b": ["b"], "c": ["c"]}


def test_a_domain_is_assessed_a_workload_at_a_time(tmp_path: Path) -> None:
    """The controller gives the event loop a turn between workloads: the steps yield once per
    workload on the lost domain and end with what the whole assessment finds."""
    docs = [cluster("member1"), cluster("member2", cpu="600m", used="500m", pods=2)]
    for name in ("a", "b", "c"):
        docs += app_of(name, 3, SEED)
    fleet = fleet_of(tmp_path, docs)
    steps = assess.assess_steps(fleet, "cluster", "member1", ["member1"], NOW)
    yielded = 0
    while True:
        try:
            next(steps)
        except StopIteration as end:
            report, risks = end.value
            break
        yielded += 1
    assert yielded == 3
    assert (report, risks) == assess.assess_domain(fleet, "cluster", "member1", ["member1"], NOW)
    assert {risk.reason for risk in risks.values()} == {"NoSpareCapacity"}


def test_a_binding_class_is_worked_out_once_per_version(tmp_path: Path) -> None:
    """Fleets built one after another share what they worked out for a binding's unchanged version."""
    from fleetkeeper.readiness.whatif import Fleet

    docs = [cluster("member1"), cluster("member2"), *app_of("a", 3, SEED)]
    fleet = fleet_of(tmp_path, docs)
    [binding] = fleet.bindings
    binding.metadata.resource_version = "7"
    known: dict[str, Any] = {}

    def class_in_new_fleet(b: Any) -> Any:
        return Fleet(fleet.clusters.values(), (b,), fleet.policies, threshold=0.55, classes=known).class_of(b)

    first = class_in_new_fleet(binding)
    assert class_in_new_fleet(binding) is first
    newer = binding.model_copy(deep=True)
    newer.metadata.resource_version = "8"
    assert class_in_new_fleet(newer) is not first and class_in_new_fleet(newer) == first
    assert list(known.values()) == [("8", first)]
