"""Remedy rules: which Remedies concern a cluster, when they fire, which clusters wake.

The tables port Karmada's ``pkg/controllers/remediation`` vectors (spec §7.4:
``Test_isRemedyWorkOnCluster``, ``Test_remedyDecisionMatchWithCluster``,
``Test_calculateActions``, the event-handler tests) and add the nil-versus-empty cases
the proposal and the implementation read differently (spec §6.4).
"""

from __future__ import annotations

from typing import Any

import pytest

from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.meta import Condition
from fleetkeeper.api.remedy import DecisionMatch, Remedy
from fleetkeeper.controllers import remedy_rules as rules

DNS = "ServiceDomainNameResolutionReady"


def remedy(name: str = "r", *, affinity: Any = "absent", matches: Any = "absent",
           actions: list[str] | None = None) -> Remedy:
    spec: dict[str, Any] = {"actions": actions if actions is not None else ["TrafficControl"]}
    if affinity != "absent":
        spec["clusterAffinity"] = affinity
    if matches != "absent":
        spec["decisionMatches"] = matches
    return Remedy.from_dict({"metadata": {"name": name}, "spec": spec})


def match(operator: str, status: str, condition_type: str = DNS) -> dict[str, Any]:
    return {"clusterConditionMatch": {"conditionType": condition_type, "operator": operator,
                                      "conditionStatus": status}}


def cluster(name: str = "member1", conditions: dict[str, str] | None = None,
            actions: list[str] | None = None) -> Cluster:
    conds = [{"type": t, "status": s} for t, s in (conditions or {}).items()]
    return Cluster.from_dict({"metadata": {"name": name}, "spec": {"syncMode": "Push"},
                              "status": {"conditions": conds or None, "remedyActions": actions}})


@pytest.mark.parametrize(
    ("affinity", "works"),
    [
        pytest.param("absent", True, id="an absent clusterAffinity selects every cluster"),
        pytest.param({}, False, id="an empty clusterAffinity selects no cluster"),
        pytest.param({"clusterNames": ["member1", "member2"]}, True, id="a listed cluster is selected"),
        pytest.param({"clusterNames": ["member2"]}, False, id="an unlisted cluster is not selected"),
    ],
)
def test_which_clusters_a_remedy_works_on(affinity: Any, works: bool) -> None:
    assert rules.works_on_cluster(remedy(affinity=affinity), "member1") is works


def _matches(raw: Any) -> list[DecisionMatch] | None:
    return None if raw is None else [DecisionMatch.from_dict(m) for m in raw]


@pytest.mark.parametrize(
    ("matches", "conditions", "fires"),
    [
        pytest.param(None, None, True, id="no decision matches act at once even without conditions"),
        pytest.param([match("Equal", "False")], None, False, id="a cluster without conditions never matches"),
        pytest.param([match("Equal", "False")], {DNS: "False"}, True, id="Equal matches the same status"),
        pytest.param([match("Equal", "False")], {DNS: "True"}, False,
                     id="Equal does not match another status"),
        pytest.param([match("NotEqual", "True")], {DNS: "Unknown"}, True,
                     id="NotEqual matches another status"),
        pytest.param([match("NotEqual", "True")], {DNS: "True"}, False,
                     id="NotEqual does not match the same status"),
        pytest.param([match("NotEqual", "True")], {"Ready": "True"}, False,
                     id="a missing condition type matches neither operator"),
        pytest.param([match("Equal", "False", "Ready"), match("Equal", "False")],
                     {DNS: "False", "Ready": "True"}, True, id="entries are ORed"),
        pytest.param([{}], {DNS: "False"}, False, id="an entry without a condition match is skipped"),
        pytest.param([], {DNS: "False"}, False, id="an explicit empty list never fires"),
    ],
)
def test_decision_matches(matches: Any, conditions: dict[str, str] | None, fires: bool) -> None:
    conds = [Condition(type=t, status=s) for t, s in (conditions or {}).items()]  # type: ignore[arg-type]
    assert rules.decision_matches(_matches(matches), conds or None) is fires


def test_actions_are_the_sorted_union_of_the_firing_related_remedies() -> None:
    remedies = [
        remedy("b", matches=[match("Equal", "False")], actions=["TrafficControl", "Zeta"]),
        remedy("a", affinity={"clusterNames": ["member1"]}, actions=["Alpha", "TrafficControl"]),
        remedy("c", affinity={"clusterNames": ["member2"]}, actions=["NotMine"]),
        remedy("d", matches=[match("Equal", "True")], actions=["NotFiring"]),
    ]
    target = cluster(conditions={DNS: "False"})
    assert rules.calculate_actions(remedies, target) == ["Alpha", "TrafficControl", "Zeta"]
    assert [r.name for r in rules.firing(remedies, target)] == ["a", "b"]


def test_no_firing_remedy_means_no_actions_field() -> None:
    assert rules.calculate_actions([remedy(matches=[match("Equal", "False")])], cluster()) is None
    assert rules.calculate_actions([], cluster()) is None


@pytest.mark.parametrize(
    ("old", "new", "wakes"),
    [
        pytest.param(None, cluster(), True, id="a new cluster wakes"),
        pytest.param(cluster(), None, False, id="a deleted cluster does not"),
        pytest.param(cluster(conditions={DNS: "True"}), cluster(conditions={DNS: "False"}), True,
                     id="changed conditions wake"),
        pytest.param(cluster(actions=["A", "B"]), cluster(actions=["B", "A"]), False,
                     id="remedy actions in another order do not"),
        pytest.param(cluster(actions=["A"]), cluster(actions=["A", "B"]), True,
                     id="a different set of remedy actions wakes"),
        pytest.param(cluster(), cluster(), False, id="nothing relevant changed"),
    ],
)
def test_which_cluster_events_wake(old: Cluster | None, new: Cluster | None, wakes: bool) -> None:
    assert rules.cluster_wakes(old, new) is wakes


ALL = ["member1", "member2", "member3"]


@pytest.mark.parametrize(
    ("old", "new", "woken"),
    [
        pytest.param(None, remedy(affinity={"clusterNames": ["member2"]}), ["member2"],
                     id="a created remedy wakes its listed clusters"),
        pytest.param(None, remedy(), ALL, id="a created remedy without affinity wakes every cluster"),
        pytest.param(remedy(affinity={"clusterNames": ["member1"]}), None, ["member1"],
                     id="a deleted remedy wakes its listed clusters"),
        pytest.param(remedy(affinity={"clusterNames": ["member1"]}),
                     remedy(affinity={"clusterNames": ["member3"]}),
                     ["member1", "member3"], id="an update wakes the union of old and new clusters"),
        pytest.param(remedy(), remedy(affinity={"clusterNames": ["member1"]}), ALL,
                     id="an update from no affinity wakes every cluster"),
        pytest.param(None, remedy(affinity={}), [], id="an empty affinity wakes nobody"),
    ],
)
def test_which_clusters_a_remedy_event_wakes(old: Remedy | None, new: Remedy | None,
                                              woken: list[str]) -> None:
    assert rules.clusters_of_remedy_change(old, new, ALL) == woken


def test_timeline_text_names_the_actions_and_the_remedies() -> None:
    remedies = [remedy("dns-broken"), remedy("empty", actions=[])]
    text = rules.actions_text(["TrafficControl"], remedies)
    assert text == "remedy actions [TrafficControl] by Remedy dns-broken"
    assert rules.actions_text(None, []) == "remedy actions cleared"
