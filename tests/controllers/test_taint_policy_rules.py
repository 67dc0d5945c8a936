"""ClusterTaintPolicy rules (spec §4.3; vectors of §7.1 ``TestConditionMatches``,
``TestAddTaintsOnCluster``, ``TestRemoveTaintsOnCluster``) and the default policy."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.core import Taint
from fleetkeeper.api.meta import Condition
from fleetkeeper.api.taintpolicy import ClusterTaintPolicy, MatchCondition, PolicyTaint
from fleetkeeper.controllers import default_policy
from fleetkeeper.controllers import taint_policy_rules as rules

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
EARLIER = datetime(2026, 1, 1, 11, 0, tzinfo=UTC)


def conds(**statuses: str) -> list[Condition]:
    return [Condition(type=t, status=s) for t, s in statuses.items()]  # type: ignore[arg-type]


def match(type_: str, operator: str, *values: str) -> MatchCondition:
    return MatchCondition(condition_type=type_, operator=operator, status_values=list(values))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("conditions", "matches", "expected"),
    [
        (conds(Ready="False"), [match("Ready", "In", "False")], True),
        (conds(Ready="True"), [match("Ready", "In", "False")], False),
        (conds(Ready="True"), [match("Ready", "NotIn", "False", "Unknown")], True),
        (conds(Ready="Unknown"), [match("Ready", "NotIn", "True")], True),
        (
            conds(Ready="False", NetworkReady="False"),
            [match("Ready", "In", "False"), match("NetworkReady", "In", "True")],
            False,
        ),
        (conds(Ready="False"), [], False),
        (conds(), [match("Ready", "NotIn", "True")], False),
        (conds(Ready="False"), [match("Ready", "Equals", "False")], False),
    ],
    ids=[
        "In matches a listed status",
        "In does not match an unlisted status",
        "NotIn matches an unlisted status",
        "NotIn True matches Unknown",
        "every match condition must hold",
        "an empty list never matches",
        "an absent condition fails even NotIn",
        "an unknown operator fails the match",
    ],
)
def test_condition_matches(
    conditions: list[Condition], matches: list[MatchCondition], expected: bool
) -> None:
    assert rules.condition_matches(conditions, matches) is expected


def t(key: str, effect: str, value: str | None = None, added: datetime | None = None) -> Taint:
    return Taint(key=key, effect=effect, value=value, time_added=added)  # type: ignore[arg-type]


def pt(key: str, effect: str, value: str | None = None) -> PolicyTaint:
    return PolicyTaint(key=key, effect=effect, value=value)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("current", "wanted", "expected"),
    [
        ([], [pt("a", "NoExecute")], [t("a", "NoExecute", added=NOW)]),
        (
            [t("a", "NoExecute", "old", EARLIER)],
            [pt("a", "NoExecute", "new")],
            [t("a", "NoExecute", "old", EARLIER)],
        ),
        (
            [t("a", "NoSchedule")],
            [pt("a", "NoExecute")],
            [t("a", "NoSchedule"), t("a", "NoExecute", added=NOW)],
        ),
        ([], [pt("cluster.karmada.io/not-ready", "NoSchedule")], []),
    ],
    ids=[
        "a missing taint is added with timeAdded now",
        "an existing key and effect is not refreshed (value and timeAdded kept)",
        "same key with another effect is another taint",
        "a policy never adds a system taint",
    ],
)
def test_add_taints(current: list[Taint], wanted: list[PolicyTaint], expected: list[Taint]) -> None:
    assert rules.add_taints(current, wanted, NOW) == expected


@pytest.mark.parametrize(
    ("current", "unwanted", "expected"),
    [
        (
            [t("a", "NoExecute", "v", EARLIER), t("b", "NoSchedule")],
            [pt("a", "NoExecute")],
            [t("b", "NoSchedule")],
        ),
        ([t("a", "NoSchedule")], [pt("a", "NoExecute")], [t("a", "NoSchedule")]),
        (
            [t("cluster.karmada.io/not-ready", "NoSchedule"), t("cluster.karmada.io/not-ready", "NoExecute")],
            [
                pt("cluster.karmada.io/not-ready", "NoSchedule"),
                pt("cluster.karmada.io/not-ready", "NoExecute"),
            ],
            [t("cluster.karmada.io/not-ready", "NoSchedule")],
        ),
    ],
    ids=[
        "the taint with the same key and effect is removed whatever its value",
        "another effect is not removed",
        "a policy never removes a system taint",
    ],
)
def test_remove_taints(current: list[Taint], unwanted: list[PolicyTaint], expected: list[Taint]) -> None:
    assert rules.remove_taints(current, unwanted) == expected


def cluster(
    name: str = "member1",
    *,
    ready: str | None = "False",
    taints: list[dict[str, Any]] | None = None,
    region: str | None = None,
) -> Cluster:
    status = {"conditions": [{"type": "Ready", "status": ready}]} if ready else {}
    spec: dict[str, Any] = {"syncMode": "Push", "taints": taints}
    if region:
        spec["region"] = region
    return Cluster.from_dict({"metadata": {"name": name}, "spec": spec, "status": status})


def policy(
    name: str,
    *,
    created: str,
    add: list[MatchCondition],
    remove: list[MatchCondition],
    taints: list[PolicyTaint],
    targets: dict[str, Any] | None = None,
) -> ClusterTaintPolicy:
    return ClusterTaintPolicy.from_dict(
        {
            "metadata": {"name": name, "creationTimestamp": created},
            "spec": {
                "targetClusters": targets,
                "addOnConditions": [m.to_dict() for m in add],
                "removeOnConditions": [m.to_dict() for m in remove],
                "taints": [x.to_dict() for x in taints],
            },
        }
    )


def test_the_default_policy_taints_not_ready_and_unknown_and_untaints_ready() -> None:
    default = default_policy.default_taint_policy()
    assert default.name == "fleetkeeper-default-not-ready"
    for status, tainted in (("False", True), ("Unknown", True), ("True", False), (None, False)):
        got = rules.apply_policies(cluster(ready=status), [default], NOW)
        assert [(x.key, x.effect) for x in got.taints] == (
            [("cluster.karmada.io/not-ready", "NoExecute")] if tainted else []
        ), status
    back = cluster(ready="True", taints=[{"key": "cluster.karmada.io/not-ready", "effect": "NoExecute"}])
    got = rules.apply_policies(back, [default], NOW)
    assert got.taints == []
    assert [(c.action, c.policy) for c in got.changes] == [("removed", "fleetkeeper-default-not-ready")]


def test_policies_apply_in_creation_order_then_name_and_cumulatively() -> None:
    adds = policy(
        "b-adds",
        created="2026-01-01T00:00:00Z",
        add=[match("Ready", "In", "False")],
        remove=[],
        taints=[pt("x", "NoExecute")],
    )
    removes = policy(
        "a-removes",
        created="2026-01-01T00:00:00Z",
        add=[],
        remove=[match("Ready", "In", "False")],
        taints=[pt("x", "NoExecute")],
    )
    later = policy(
        "c-later",
        created="2026-01-02T00:00:00Z",
        add=[match("Ready", "In", "False")],
        remove=[],
        taints=[pt("x", "NoExecute")],
    )
    assert [p.name for p in rules.ordered([later, adds, removes])] == ["a-removes", "b-adds", "c-later"]
    # a-removes (nothing to remove), b-adds adds x; c-later sees x already there
    got = rules.apply_policies(cluster(), [later, adds, removes], NOW)
    assert [(x.key, x.effect) for x in got.taints] == [("x", "NoExecute")]
    assert [(c.action, c.policy) for c in got.changes] == [("added", "b-adds")]


def test_a_cluster_outside_the_targets_keeps_its_taints() -> None:
    targeted = policy(
        "eu-only",
        created="2026-01-01T00:00:00Z",
        add=[match("Ready", "In", "False")],
        remove=[match("Ready", "In", "True")],
        taints=[pt("x", "NoExecute")],
        targets={
            "fieldSelector": {"matchExpressions": [{"key": "region", "operator": "In", "values": ["eu"]}]}
        },
    )
    outside = cluster(ready="True", taints=[{"key": "x", "effect": "NoExecute"}], region="us")
    assert [x.key for x in rules.apply_policies(outside, [targeted], NOW).taints] == ["x"]
    inside = cluster(ready="True", taints=[{"key": "x", "effect": "NoExecute"}], region="eu")
    assert rules.apply_policies(inside, [targeted], NOW).taints == []


def test_taints_message_of_the_policy_controller() -> None:
    assert rules.taints_message([]) == "cluster now does not have taints"
    assert (
        rules.taints_message([t("a", "NoExecute", "v")])
        == "cluster now has taints([{Key:a,Value:v,Effect:NoExecute}])"
    )
