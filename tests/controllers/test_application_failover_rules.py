"""Application failover decisions (pure): the unhealthy clock, preconditions, tasks, history."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from fleetkeeper.api.policy import ApplicationFailoverBehavior
from fleetkeeper.api.work import (
    BindingSuspension,
    EvictionRecord,
    GracefulEvictionTask,
    ResourceBindingSpec,
    ResourceBindingStatus,
)
from fleetkeeper.controllers import application_failover_rules as rules
from fleetkeeper.controllers.application_failover_rules import Observation, Settings

T0 = datetime(2026, 1, 1, 10, 0, tzinfo=UTC)
PRODUCER = "resource-binding-application-failover-controller"
JOB = "failover.example.io/job-id"


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def walk(steps: Sequence[tuple[float, str | None]], settings: Settings) -> Observation | None:
    """Observe each (second, health) in turn."""
    obs: Observation | None = None
    for second, health in steps:
        obs = rules.observe(obs, health, settings, at(second))
    return obs


# --- the unhealthy clock -------------------------------------------------------------------------

T300 = Settings(toleration=300)


@pytest.mark.parametrize(
    ("steps", "settings", "deadline"),
    [
        pytest.param([(0, "Unhealthy")], T300, 300, id="a first Unhealthy observation starts the clock"),
        pytest.param(
            [(0, "Unhealthy"), (200, "Unknown"), (250, "Unhealthy")],
            T300,
            350,
            id="an Unknown gap pauses the clock without resetting it (the flapping guard)",
        ),
        pytest.param(
            [(0, "Unhealthy"), (200, None), (250, "Unhealthy")],
            T300,
            350,
            id="a missing status item counts as Unknown",
        ),
        pytest.param(
            [(0, "Unhealthy"), (100, "Healthy"), (150, "Unhealthy")],
            T300,
            450,
            id="only Healthy resets the clock",
        ),
        pytest.param(
            [(0, "Unhealthy"), (100, "Unhealthy"), (200, "Unhealthy")],
            T300,
            300,
            id="repeated Unhealthy observations keep the first start",
        ),
        pytest.param(
            [
                (0, "Unhealthy"),
                (100, "Unknown"),
                (150, "Unknown"),
                (160, "Unhealthy"),
                (200, "Unknown"),
                (260, "Unhealthy"),
            ],
            T300,
            420,
            id="several gaps add up: 100 + 40 counted, 160 to go from 260",
        ),
        pytest.param(
            [(0, "Unhealthy"), (200, "Unknown"), (250, "Unhealthy")],
            Settings(toleration=300, count_unknown=True),
            300,
            id="with healthyState [Unhealthy, Unknown] an Unknown gap counts too",
        ),
        pytest.param(
            [(0, "Healthy"), (100, "Unknown")],
            Settings(toleration=300, count_unknown=True),
            400,
            id="with Unknown counted, a workload gone silent starts the clock",
        ),
        pytest.param([(0, "Unhealthy")], Settings(toleration=0), 0, id="toleration 0 is due at once"),
        pytest.param(
            [(0, "Unhealthy")],
            Settings(toleration=300, delay=600),
            900,
            id="delaySeconds holds the clock until the delay since the first collection",
        ),
        pytest.param(
            [(0, "Healthy"), (700, "Unhealthy")],
            Settings(toleration=300, delay=600),
            1000,
            id="after the delay the clock counts from the Unhealthy observation",
        ),
        pytest.param(
            [(0, "Unhealthy"), (500, "Unknown"), (800, "Unhealthy")],
            Settings(toleration=300, delay=600),
            1100,
            id="time Unhealthy before the delay ran out is not counted",
        ),
        pytest.param(
            [(0, "Healthy"), (10, "Unhealthy")],
            Settings(toleration=300, require_healthy=True),
            310,
            id="healthyState Healthy: a workload that was Healthy is failed over",
        ),
        pytest.param(
            [(0, "Unhealthy")],
            Settings(toleration=300, require_healthy=True),
            None,
            id="healthyState Healthy: a workload never Healthy there is not",
        ),
        pytest.param([(0, "Unknown")], T300, None, id="nothing collected yet: no observation"),
        pytest.param([(0, "Healthy")], T300, None, id="a Healthy workload has no deadline"),
    ],
)
def test_deadlines(steps: list[tuple[float, str | None]], settings: Settings, deadline: float | None) -> None:
    obs = walk(steps, settings)
    due = rules.deadline(obs, settings) if obs is not None else None
    assert due == (at(deadline) if deadline is not None else None)


def test_decision_conditions_healthy_state_from_the_proposal_sets_what_counts() -> None:
    app = ApplicationFailoverBehavior.from_dict(
        {"decisionConditions": {"tolerationSeconds": 200, "healthyState": ["Unhealthy", "Unknown"]}}
    )
    assert Settings.of(app).count_unknown is True
    plain = ApplicationFailoverBehavior.from_dict({"decisionConditions": {"healthyState": ["Unhealthy"]}})
    assert Settings.of(plain).count_unknown is False


def test_a_pause_keeps_exactly_what_was_counted() -> None:
    obs = walk([(0, "Unhealthy"), (200, "Unknown")], T300)
    assert obs == Observation(first_seen=T0, counted=200.0)
    assert rules.unhealthy_seconds(obs, T300, at(240)) == 200.0


def test_the_first_collection_time_is_kept_across_resets() -> None:
    obs = walk([(5, "Unhealthy"), (50, "Healthy"), (60, "Unhealthy")], T300)
    assert obs is not None and obs.first_seen == at(5) and obs.healthy_seen


# --- bookkeeping ---------------------------------------------------------------------------------


def test_observations_round_trip_through_the_annotation() -> None:
    observations = {
        "member1": Observation(first_seen=at(0), healthy_seen=True, unhealthy_since=at(12.25), counted=37.5),
        "member2": Observation(first_seen=at(1)),
    }
    text = rules.encode(observations)
    assert text is not None
    assert rules.decode({rules.OBSERVATIONS_ANNOTATION: text}) == observations


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("not json", id="text that is not JSON"),
        pytest.param('{"clusters": {"member1": {}}}', id="an entry without firstSeen"),
        pytest.param('["member1"]', id="JSON of another shape"),
    ],
)
def test_unreadable_bookkeeping_counts_as_none(text: str) -> None:
    assert rules.decode({rules.OBSERVATIONS_ANNOTATION: text}) == {}


def test_no_observations_drop_the_annotation() -> None:
    annotations = {"keep": "me", rules.OBSERVATIONS_ANNOTATION: "{}"}
    assert rules.annotations_with(annotations, {}) == {"keep": "me"}


# --- decide --------------------------------------------------------------------------------------


def binding(
    *,
    clusters: dict[str, int] | None = None,
    health: dict[str, str] | None = None,
    tasks: list[str] | None = None,
    status: dict[str, dict[str, Any]] | None = None,
    **app: Any,
) -> tuple[ResourceBindingSpec, ResourceBindingStatus]:
    clusters = clusters if clusters is not None else {"member1": 2, "member2": 2}
    spec = ResourceBindingSpec.model_validate(
        {
            "resource": {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "namespace": "default",
                "name": "web",
            },
            "replicas": sum(clusters.values()),
            "propagateDeps": True,
            "clusters": [{"name": n, "replicas": r} for n, r in clusters.items()],
            "failover": {"application": {"decisionConditions": {}, **app}},
            "gracefulEvictionTasks": [
                {"fromCluster": c, "reason": "TaintUntolerated", "producer": "TaintManager"}
                for c in tasks or ()
            ]
            or None,
        }
    )
    items = [
        {"clusterName": n, "applied": True, "health": h, "status": (status or {}).get(n)}
        for n, h in (health or {}).items()
    ]
    return spec, ResourceBindingStatus.model_validate({"aggregatedStatus": items})


def annotated(observations: dict[str, Observation]) -> dict[str, str]:
    return rules.annotations_with({}, observations)


def test_a_new_unhealthy_cluster_starts_its_clock_and_goes_on_the_timeline_after_ten_seconds() -> None:
    spec, status = binding(health={"member1": "Unhealthy", "member2": "Healthy"})
    plan = rules.decide(spec, status, {}, at(0))
    assert plan.evict == [] and plan.notes == []
    assert plan.observations["member1"].unhealthy_since == at(0)
    assert plan.observations["member2"].healthy_seen
    assert plan.requeue_after == rules.ANNOUNCE_AFTER
    later = rules.decide(spec, status, annotated(plan.observations), at(10))
    assert [n.message for n in later.notes] == [
        "Unhealthy in member1 for 10s: failover in 290s unless it recovers (tolerationSeconds 300s)"
    ]
    assert later.observations["member1"].announced and later.requeue_after == 290


def test_the_cluster_is_evicted_exactly_at_the_deadline() -> None:
    spec, status = binding(health={"member1": "Unhealthy", "member2": "Healthy"})
    stored = annotated({"member1": Observation(first_seen=at(0), unhealthy_since=at(0))})
    assert rules.decide(spec, status, stored, at(299.999)).evict == []
    plan = rules.decide(spec, status, stored, at(300))
    assert plan.evict == ["member1"]
    assert plan.unhealthy == {"member1": 300.0}
    assert "member1" not in plan.observations


def test_toleration_zero_evicts_at_the_first_unhealthy_observation() -> None:
    spec, status = binding(health={"member1": "Unhealthy"}, decisionConditions={"tolerationSeconds": 0})
    assert rules.decide(spec, status, {}, at(0)).evict == ["member1"]


def test_clusters_being_evicted_are_not_counted_and_their_clocks_are_dropped() -> None:
    spec, status = binding(
        clusters={"member2": 2}, health={"member1": "Unhealthy", "member2": "Healthy"}, tasks=["member1"]
    )
    stored = annotated({"member1": Observation(first_seen=at(0), unhealthy_since=at(0))})
    plan = rules.decide(spec, status, stored, at(1000))
    assert plan.evict == [] and set(plan.observations) == {"member2"}


def test_a_cluster_that_is_no_longer_a_target_is_forgotten() -> None:
    spec, status = binding(clusters={"member2": 4}, health={"member2": "Healthy"})
    stored = annotated({"member1": Observation(first_seen=at(0), unhealthy_since=at(0))})
    assert set(rules.decide(spec, status, stored, at(10)).observations) == {"member2"}


ANNOUNCED_RUN = Observation(first_seen=T0, unhealthy_since=T0, announced=True)
ANNOUNCED_PAUSE = Observation(first_seen=T0, counted=20, announced=True)


@pytest.mark.parametrize(
    ("before", "health", "kind"),
    [
        pytest.param(ANNOUNCED_RUN, "Unknown", "paused", id="Unknown pauses an announced episode"),
        pytest.param(ANNOUNCED_RUN, "Healthy", "recovered", id="Healthy ends an announced episode"),
        pytest.param(ANNOUNCED_PAUSE, "Healthy", "recovered", id="Healthy after a pause ends it too"),
        pytest.param(
            ANNOUNCED_PAUSE, "Unhealthy", "unhealthy", id="Unhealthy after a pause resumes the clock"
        ),
        pytest.param(ANNOUNCED_RUN, "Unhealthy", None, id="staying Unhealthy says nothing new"),
        pytest.param(
            Observation(first_seen=T0, unhealthy_since=at(55)),
            "Healthy",
            None,
            id="a blip shorter than ten seconds ends silently",
        ),
        pytest.param(
            Observation(first_seen=T0, unhealthy_since=at(55)),
            "Unknown",
            None,
            id="a blip shorter than ten seconds pauses silently",
        ),
        pytest.param(
            Observation(first_seen=T0, healthy_seen=True), "Healthy", None, id="staying Healthy says nothing"
        ),
    ],
)
def test_transitions_are_noted_once(before: Observation, health: str, kind: str | None) -> None:
    spec, status = binding(health={"member1": health})
    plan = rules.decide(spec, status, annotated({"member1": before}), at(60))
    assert [n.kind for n in plan.notes] == ([kind] if kind else [])


def test_a_workload_never_healthy_is_held_with_a_reason() -> None:
    spec, status = binding(health={"member1": "Unhealthy"}, preConditions={"healthyState": "Healthy"})
    plan = rules.decide(spec, status, {}, at(0))
    assert plan.evict == [] and plan.notes == []
    later = rules.decide(spec, status, annotated(plan.observations), at(10))
    assert later.requeue_after is None and later.evict == []
    assert later.notes[0].kind == "held" and "never been Healthy" in later.notes[0].message


def test_the_requeue_is_the_earliest_deadline() -> None:
    spec, status = binding(health={"member1": "Unhealthy", "member2": "Unhealthy"})
    stored = annotated(
        {
            "member1": Observation(first_seen=at(0), unhealthy_since=at(0)),
            "member2": Observation(first_seen=at(0), unhealthy_since=at(100)),
        }
    )
    assert rules.decide(spec, status, stored, at(150)).requeue_after == 150


# --- state preservation --------------------------------------------------------------------------

PRESERVE: dict[str, Any] = {
    "purgeMode": "Directly",
    "statePreservation": {"rules": [{"aliasLabelName": JOB, "jsonPath": "{ .jobId }"}]},
}


def test_the_state_is_extracted_from_the_failed_clusters_status() -> None:
    spec, status = binding(
        clusters={"member1": 1},
        health={"member1": "Unhealthy"},
        status={"member1": {"jobId": "job-member1"}},
        decisionConditions={"tolerationSeconds": 0},
        **PRESERVE,
    )
    assert rules.decide(spec, status, {}, at(0)).preserved == {"member1": {JOB: "job-member1"}}


def test_a_failed_extraction_holds_the_eviction_and_keeps_the_clock() -> None:
    spec, status = binding(
        clusters={"member1": 1},
        health={"member1": "Unhealthy"},
        status={"member1": {}},
        decisionConditions={"tolerationSeconds": 0},
        **PRESERVE,
    )
    plan = rules.decide(spec, status, {}, at(0))
    assert plan.evict == [] and "member1" in plan.failed and "member1" in plan.observations


def test_a_cluster_that_never_got_healthy_passes_on_the_state_it_was_started_with() -> None:
    spec, status = binding(
        clusters={"member2": 1},
        health={"member2": "Unhealthy"},
        status={"member2": {"jobId": "job-member2"}},
        decisionConditions={"tolerationSeconds": 0},
        **PRESERVE,
    )
    first = GracefulEvictionTask(
        from_cluster="member1",
        purge_mode="Directly",
        reason="ApplicationFailure",
        producer=PRODUCER,
        preserved_label_state={JOB: "job-member1"},
        clusters_before_failover=["member1"],
    )
    spec = spec.model_copy(update={"graceful_eviction_tasks": [first]})
    assert rules.decide(spec, status, {}, at(0)).preserved == {"member2": {JOB: "job-member1"}}
    healthy_once = annotated({"member2": Observation(first_seen=at(0), healthy_seen=True)})
    assert rules.decide(spec, status, healthy_once, at(1)).preserved == {"member2": {JOB: "job-member2"}}


# --- tasks and history ---------------------------------------------------------------------------


def app(**fields: Any) -> ApplicationFailoverBehavior:
    return ApplicationFailoverBehavior.model_validate({"decisionConditions": {}, **fields})


@pytest.mark.parametrize(
    ("fields", "grace", "suppress"),
    [
        pytest.param({}, 600, None, id="Gracefully gets the default grace period"),
        pytest.param({"gracePeriodSeconds": 120}, 120, None, id="Gracefully keeps its own grace period"),
        pytest.param({"purgeMode": "Never"}, None, True, id="Never suppresses deletion"),
        pytest.param({"purgeMode": "Directly"}, None, None, id="Directly adds nothing"),
        pytest.param({"purgeMode": "Graciously"}, 600, None, id="the legacy Graciously is Gracefully"),
    ],
)
def test_task_options_per_purge_mode(
    fields: dict[str, Any], grace: int | None, suppress: bool | None
) -> None:
    options = rules.task_options(app(**fields), producer=PRODUCER, now=T0)
    assert (options.grace_period_seconds, options.suppress_deletion) == (grace, suppress)
    assert (options.reason, options.producer) == ("ApplicationFailure", PRODUCER)
    assert options.creation_timestamp == T0


def record(cluster: str, second: float) -> EvictionRecord:
    return EvictionRecord(
        cluster_name=cluster, evicted_at=at(second), reason="ApplicationFailure", producer=PRODUCER
    )


@pytest.mark.parametrize(
    ("history", "block", "expected"),
    [
        pytest.param([], 600, ["member1@1000"], id="the first record"),
        pytest.param(
            [record("member1", 0)], 600, ["member1@1000"], id="a newer record replaces the cluster's older"
        ),
        pytest.param([record("member2", 0)], 600, ["member1@1000"], id="expired records are dropped"),
        pytest.param(
            [record("member2", 500)], 600, ["member2@500", "member1@1000"], id="active records stay"
        ),
        pytest.param(
            [record("member2", 0)], 0, ["member2@0", "member1@1000"], id="block 0 keeps every record"
        ),
    ],
)
def test_eviction_history(history: list[EvictionRecord], block: int, expected: list[str]) -> None:
    out = rules.record_eviction(history, record("member1", 1000), block_seconds=block, now=at(1000))
    assert [f"{r.cluster_name}@{(r.evicted_at - T0).total_seconds():g}" for r in out] == expected


def test_apply_plan_evicts_records_history_and_keeps_the_replicas() -> None:
    spec, _ = binding(
        health={"member1": "Unhealthy"},
        decisionConditions={"tolerationSeconds": 0},
        blockPredecessorSeconds=900,
        **PRESERVE,
    )
    plan = rules.Plan(observations={}, evict=["member1"], preserved={"member1": {JOB: "job-member1"}})
    out = rules.apply_plan(spec, plan, producer=PRODUCER, now=at(5))
    assert [t.name for t in out.clusters or ()] == ["member2"]
    (task,) = out.graceful_eviction_tasks or []
    assert (task.from_cluster, task.replicas, task.purge_mode, task.reason) == (
        "member1",
        2,
        "Directly",
        "ApplicationFailure",
    )
    assert task.preserved_label_state == {JOB: "job-member1"}
    assert task.clusters_before_failover == ["member1", "member2"]
    assert [(r.cluster_name, r.evicted_at) for r in out.eviction_history or ()] == [("member1", at(5))]


def test_without_state_preservation_no_clusters_before_failover_are_recorded() -> None:
    spec, _ = binding()
    out = rules.apply_plan(spec, rules.Plan(observations={}, evict=["member1"]), producer=PRODUCER, now=T0)
    (task,) = out.graceful_eviction_tasks or []
    assert task.clusters_before_failover is None and task.preserved_label_state is None


@pytest.mark.parametrize(
    ("health_rule", "namespaced", "deps", "reason"),
    [
        pytest.param(False, True, True, "can never fire", id="a kind without a health rule can never fire"),
        pytest.param(True, True, False, "propagateDeps", id="a ResourceBinding needs propagateDeps"),
        pytest.param(True, False, False, None, id="a ClusterResourceBinding does not"),
        pytest.param(True, True, True, None, id="otherwise it is watched"),
    ],
)
def test_eligibility(health_rule: bool, namespaced: bool, deps: bool, reason: str | None) -> None:
    spec, _ = binding()
    spec = spec.model_copy(update={"propagate_deps": deps})
    why = rules.ineligible(spec, has_health_rule=health_rule, namespaced=namespaced)
    assert (why is None) if reason is None else (why is not None and reason in why)


def test_a_status_gone_missing_pauses_the_clocks_instead_of_dropping_them() -> None:
    spec, status = binding(health={})
    stored = annotated({"member1": Observation(first_seen=at(0), unhealthy_since=at(0))})
    plan = rules.decide(spec, status, stored, at(100))
    assert plan.observations["member1"] == Observation(first_seen=at(0), counted=100.0)


@pytest.mark.parametrize(
    ("block", "text"),
    [
        pytest.param(600, "until 2026-01-01T10:10:00Z (blockPredecessorSeconds 600)", id="a timed block"),
        pytest.param(0, "for good", id="block 0 is for good"),
    ],
)
def test_blocked_message(block: int, text: str) -> None:
    assert text in rules.blocked_message("member1", T0, block)


def test_a_suspended_dispatch_holds_an_application_eviction_past_its_deadline() -> None:
    spec, status = binding(clusters={"member1": 1, "member2": 1}, health={"member1": "Unhealthy"})
    held = spec.model_copy(update={"suspension": BindingSuspension(dispatching=True)})
    first = rules.decide(held, status, {}, at(0))
    later = rules.decide(held, status, annotated(first.observations), at(400))
    assert later.evict == [], "the deadline passed, but nothing may be dispatched"
    assert later.requeue_after is None, "no hot loop: resuming the dispatch wakes the binding"
    resumed = rules.decide(spec, status, annotated(later.observations), at(400))
    assert resumed.evict == ["member1"]
