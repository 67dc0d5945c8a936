"""The in-tree plugins, one table each: Karmada's plugin tests and ``TestClusterMatches``,
plus fleetkeeper's eviction-history block and the ``--plugins`` selection."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from fleetkeeper.scheduler import plugins
from fleetkeeper.scheduler.framework import Code, view_of
from fleetkeeper.scheduler.plugins import (
    api_enablement,
    cluster_affinity,
    cluster_eviction,
    cluster_locality,
    spread_constraint,
    taint_toleration,
)
from fleetkeeper.scheduler.snapshot import ClusterFacts

from .builders import NOW, binding, facts


def verdict(plugin: Any, cluster: ClusterFacts, placement: dict[str, Any] | None = None, *,
            status: dict[str, Any] | None = None, **spec: Any) -> tuple[Code, str]:
    rb = binding(placement if placement is not None else {}, status=status, **spec)
    result = plugin.filter(view_of(rb.spec, rb.status, NOW), cluster)
    return result.code, result.message


OK = (Code.SUCCESS, "")

# --------------------------------------------------------------------------- ClusterMatches (affinity)

ZONES = ["zone1", "zone2", "zone3"]
MATCH_CLUSTER = facts("cluster1", labels={"foo": "bar"}, zones=ZONES, region="region1", provider="provider1")


def fields(*exprs: tuple[str, str, list[str]]) -> dict[str, Any]:
    return {"matchExpressions": [{"key": k, "operator": op, "values": v} for k, op, v in exprs]}


FOO_BAR = {"matchLabels": {"foo": "bar"}}
AFFINITY_CASES = [
    ({"exclude": ["cluster1"], "clusterNames": ["cluster1"]}, False,
     "an excluded cluster named in clusterNames"),
    ({"exclude": ["cluster1"], "labelSelector": FOO_BAR}, False, "an excluded cluster matching the labels"),
    ({"exclude": ["cluster1"], "fieldSelector": fields(("zone", "In", ZONES))}, False,
     "an excluded cluster matching the fields"),
    ({"clusterNames": ["cluster1"]}, True, "the cluster is named"),
    ({"clusterNames": ["cluster2"]}, False, "another cluster is named"),
    ({"labelSelector": FOO_BAR, "clusterNames": ["cluster1"]}, True, "named and labels match"),
    ({"labelSelector": {"matchLabels": {"foo": "unmatched"}}, "clusterNames": ["cluster1"]}, False,
     "named but labels differ"),
    ({"clusterNames": ["cluster1"], "fieldSelector": fields(("zone", "In", ZONES), ("region", "In",
                                                                                    ["region1"]))},
     True, "named and zone and region match"),
    ({"clusterNames": ["cluster1"], "fieldSelector": fields(("provider", "In", ["provider1"]))}, True,
     "named and provider matches"),
    ({"clusterNames": ["cluster1"], "fieldSelector": fields(("region", "In", ["region1"]))}, True,
     "named and region matches"),
    ({"clusterNames": ["cluster1"], "fieldSelector": fields(("zone", "NotIn", ZONES))}, False,
     "named but zone is excluded"),
    ({"clusterNames": ["cluster1"], "fieldSelector": fields(("provider", "NotIn", ["provider1"]))}, False,
     "named but provider is excluded"),
    ({"clusterNames": ["cluster1"], "fieldSelector": fields(("region", "NotIn", ["region1"]))}, False,
     "named but region is excluded"),
    ({"labelSelector": FOO_BAR, "fieldSelector": fields(("zone", "In", ZONES))}, True,
     "labels and zone match"),
    ({"labelSelector": FOO_BAR, "fieldSelector": fields(("provider", "In", ["provider1"]))}, True,
     "labels and provider match"),
    ({"labelSelector": FOO_BAR, "fieldSelector": fields(("region", "In", ["region1"]))}, True,
     "labels and region match"),
    ({"labelSelector": FOO_BAR, "fieldSelector": fields(("zone", "NotIn", ZONES))}, False,
     "labels match but zone is excluded"),
    ({"labelSelector": FOO_BAR, "fieldSelector": fields(("provider", "NotIn", ["provider1"]))}, False,
     "labels match but provider is excluded"),
    ({"labelSelector": FOO_BAR, "fieldSelector": fields(("region", "NotIn", ["region1"]))}, False,
     "labels match but region is excluded"),
    ({"labelSelector": FOO_BAR}, True, "labels match"),
    ({"labelSelector": {"matchLabels": {"foo": "unmatched"}}}, False, "labels differ"),
    ({}, True, "an empty affinity matches everything"),
    ({"labelSelector": {"matchLabels": {"": "bar"}}}, False, "an invalid label selector matches nothing"),
    ({"fieldSelector": {"matchExpressions": [{"key": "", "operator": "In"}]}}, False,
     "an invalid field selector matches nothing"),
    ({"fieldSelector": fields(("zone", "In", ZONES))}, True, "zones match"),
    ({"clusterNames": ["cluster1"], "fieldSelector": fields(("zone", "NotIn", ZONES))}, False,
     "any zone in the excluded list fails"),
    ({"clusterNames": ["cluster1"], "fieldSelector": fields(("zone", "In", ["zone2"]))}, True,
     "one zone in the list is enough"),
    ({"fieldSelector": fields(("region", "In", ["region1"]))}, True, "region matches"),
    ({"clusterNames": ["cluster1"], "fieldSelector": fields(("region", "NotIn", ["region1"]))}, False,
     "named but its region is excluded"),
    ({"clusterNames": ["cluster1"], "fieldSelector": fields(("region", "In", ["region2"]))}, False,
     "named but in another region"),
    ({"fieldSelector": fields(("provider", "In", ["provider1"]))}, True, "provider matches"),
    ({"fieldSelector": fields(("provider", "NotIn", ["provider1"]))}, False, "provider is excluded"),
    ({"fieldSelector": fields(("provider", "In", ["provider2"]))}, False, "another provider"),
    ({"fieldSelector": fields(("metadata.name", "In", ["cluster1"]))}, False,
     "an unknown field never matches"),
    ({"fieldSelector": fields(("zone", "In", ZONES)), "labelSelector": FOO_BAR,
      "clusterNames": ["cluster1"]}, True,
     "fields, labels and name all match"),
    ({"fieldSelector": fields(("zone", "In", ZONES)), "labelSelector": FOO_BAR,
      "clusterNames": ["cluster2"]}, False,
     "fields and labels match but another cluster is named"),
    ({"fieldSelector": fields(("zone", "NotIn", ZONES)), "labelSelector": FOO_BAR,
      "clusterNames": ["cluster1"]},
     False, "labels and name match but zones are excluded"),
    ({"fieldSelector": fields(("zone", "In", ZONES)), "labelSelector": {"matchLabels": {"foo": "Unmatched"}},
      "clusterNames": ["cluster1"]}, False, "fields and name match but labels differ"),
]


@pytest.mark.parametrize(("affinity", "matches"), [pytest.param(a, m, id=i) for a, m, i in AFFINITY_CASES])
def test_cluster_affinity_matching(affinity: dict[str, Any], matches: bool) -> None:
    code, _ = verdict(cluster_affinity.new(), MATCH_CLUSTER, {"clusterAffinity": affinity})
    assert (code is Code.SUCCESS) is matches


@pytest.mark.parametrize(("placement", "status", "expected"), [
    pytest.param({"clusterAffinity": {"clusterNames": ["cluster1"]}}, None, OK,
                 id="a matching affinity passes"),
    pytest.param({"clusterAffinity": {"clusterNames": ["cluster2"]}}, None,
                 (Code.UNSCHEDULABLE, cluster_affinity.REASON), id="a non-matching affinity rejects"),
    pytest.param({"clusterAffinities": [{"affinityName": "affinity1", "clusterNames": ["cluster1"]}]},
                 {"schedulerObservingAffinityName": "affinity1"}, OK,
                     id="the observed affinity term matches"),
    pytest.param({}, None, OK, id="no affinity lets every cluster pass"),
    pytest.param({"clusterAffinities": [{"affinityName": "affinity1", "clusterNames": ["cluster2"],
                                         "overflowAffinities": [{"affinityName": "o",
                                                                 "clusterNames": ["cluster1"]}]}]},
                 {"schedulerObservingAffinityName": "affinity1"}, OK,
                 id="an overflow group of the observed term matches a workload"),
])
def test_cluster_affinity_filter(placement: dict[str, Any], status: dict[str, Any] | None,
                                 expected: tuple[Code, str]) -> None:
    assert verdict(cluster_affinity.new(), facts("cluster1"), placement, status=status,
                   replicas=2) == expected


def test_cluster_affinity_scores_zero() -> None:
    rb = binding({})
    assert cluster_affinity.new().score(view_of(rb.spec, rb.status, NOW), facts("cluster1")) == 0


# --------------------------------------------------------------------------- API enablement

APPS = [{"groupVersion": "apps/v1", "resources": [{"name": "deployments", "kind": "Deployment"}]}]


@pytest.mark.parametrize(("resource", "targets", "expected"), [
    pytest.param(("apps/v1", "Deployment"), None, OK, id="the cluster serves the kind"),
    pytest.param(("custom.io/v1", "CustomResource"), None,
                 (Code.UNSCHEDULABLE, api_enablement.REASON), id="the cluster lacks the kind"),
    pytest.param(("custom.io/v1", "CustomResource"), [{"name": "cluster1"}], OK,
                 id="a targeted cluster passes without the kind"),
])
def test_api_enablement(resource: tuple[str, str], targets: list[dict[str, Any]] | None,
                        expected: tuple[Code, str]) -> None:
    rb = binding({}, clusters=targets)
    rb.spec.resource.api_version, rb.spec.resource.kind = resource
    result = api_enablement.new().filter(view_of(rb.spec, rb.status, NOW), facts("cluster1", apis=APPS))
    assert (result.code, result.message) == expected


# --------------------------------------------------------------------------- taints

KEY1 = [{"key": "key1", "value": "value1", "effect": "NoSchedule"}]


@pytest.mark.parametrize(("cluster", "placement", "targets", "expected"), [
    pytest.param(facts("cluster1", taints=KEY1), {}, [{"name": "cluster1"}], OK,
                 id="a targeted cluster passes despite its taint"),
    pytest.param(facts("cluster1"), {}, None, OK, id="an untainted cluster passes"),
    pytest.param(facts("cluster1", taints=KEY1), {"clusterTolerations": [
        {"key": "key1", "operator": "Equal", "value": "value1", "effect": "NoSchedule"}]}, None, OK,
        id="a tolerated taint passes"),
    pytest.param(facts("cluster1", taints=KEY1), {}, None,
                 (Code.UNSCHEDULABLE, "cluster(s) had untolerated taint {key1=value1:NoSchedule}"),
                 id="an untolerated taint rejects and is named"),
    pytest.param(facts("cluster1", taints=[{"key": "cluster.karmada.io/not-ready", "effect": "NoExecute"}]),
                 {},
                 None, (Code.UNSCHEDULABLE,
                        "cluster(s) had untolerated taint {cluster.karmada.io/not-ready:NoExecute}"),
                 id="a taint without a value is named key and effect"),
    pytest.param(facts("cluster1", taints=[{"key": "k", "effect": "PreferNoSchedule"}]), {}, None, OK,
                 id="a PreferNoSchedule taint never rejects"),
    pytest.param(facts("cluster1", taints=[{"key": "cluster.karmada.io/not-ready", "effect": "NoExecute"}]),
                 {"clusterTolerations": [{"key": "cluster.karmada.io/not-ready", "operator": "Exists"}]},
                     None, OK,
                 id="an Exists toleration without effect tolerates the taint"),
])
def test_taint_toleration(cluster: ClusterFacts, placement: dict[str, Any],
                          targets: list[dict[str, Any]] | None,
                          expected: tuple[Code, str]) -> None:
    assert verdict(taint_toleration.new(), cluster, placement, clusters=targets) == expected


# --------------------------------------------------------------------------- spread fields


@pytest.mark.parametrize(("spread", "cluster", "expected"), [
    pytest.param([], facts("c"), OK, id="no constraints"),
    pytest.param(["provider"], facts("c", provider="aws"), OK, id="provider present"),
    pytest.param(["provider"], facts("c"), (Code.UNSCHEDULABLE, "cluster(s) did not have provider property"),
                 id="provider missing"),
    pytest.param(["region"], facts("c", region="us-west-2"), OK, id="region present"),
    pytest.param(["region"], facts("c"), (Code.UNSCHEDULABLE, "cluster(s) did not have region property"),
                 id="region missing"),
    pytest.param(["zone"], facts("c", zones=["us-west-2a"]), OK, id="zones present"),
    pytest.param(["zone"], facts("c"), (Code.UNSCHEDULABLE, "cluster(s) did not have zones property"),
                 id="zones missing"),
    pytest.param(["cluster"], facts("c"), OK, id="spreading by cluster never rejects"),
])
def test_spread_constraint(spread: list[str], cluster: ClusterFacts, expected: tuple[Code, str]) -> None:
    placement = {"spreadConstraints": [{"spreadByField": f} for f in spread]}
    assert verdict(spread_constraint.new(), cluster, placement) == expected


# --------------------------------------------------------------------------- eviction


def task(cluster: str) -> dict[str, Any]:
    return {"fromCluster": cluster, "reason": "TaintUntolerated", "producer": "TaintManager"}


def history(cluster: str, ago: int) -> dict[str, Any]:
    return {"clusterName": cluster, "evictedAt": (NOW - timedelta(seconds=ago)).isoformat(),
            "reason": "ApplicationFailure", "producer": "resource-binding-application-failover-controller"}


def failover(block: int) -> dict[str, Any]:
    return {"application": {"decisionConditions": {"tolerationSeconds": 60},
                            "blockPredecessorSeconds": block}}


@pytest.mark.parametrize(("spec", "expected"), [
    pytest.param({"gracefulEvictionTasks": [task("cluster1")]}, (Code.UNSCHEDULABLE, cluster_eviction.REASON),
                 id="a cluster being evicted from is rejected"),
    pytest.param({"gracefulEvictionTasks": [task("cluster2")]}, OK,
                 id="an eviction from another cluster passes"),
    pytest.param({}, OK, id="no eviction tasks pass"),
    pytest.param({"gracefulEvictionTasks": [task("cluster1")], "clusters": [{"name": "cluster1",
                                                                             "replicas": 1}]},
                 (Code.UNSCHEDULABLE, cluster_eviction.REASON),
                     id="being targeted does not exempt an evicted cluster"),
    pytest.param({"evictionHistory": [history("cluster1", 599)]},
                 (Code.UNSCHEDULABLE, cluster_eviction.BLOCKED_REASON),
                 id="an eviction 599 seconds ago still blocks with the default 600"),
    pytest.param({"evictionHistory": [history("cluster1", 600)]}, OK,
                 id="an eviction 600 seconds ago no longer blocks with the default 600"),
    pytest.param({"evictionHistory": [history("cluster1", 100)], "failover": failover(60)}, OK,
                 id="a 60 second block has expired after 100 seconds"),
    pytest.param({"evictionHistory": [history("cluster1", 10**6)], "failover": failover(0)},
                 (Code.UNSCHEDULABLE, cluster_eviction.BLOCKED_REASON), id="a zero block lasts for good"),
    pytest.param({"evictionHistory": [history("cluster2", 1)]}, OK, id="history of another cluster passes"),
])
def test_cluster_eviction(spec: dict[str, Any], expected: tuple[Code, str]) -> None:
    assert verdict(cluster_eviction.new(), facts("cluster1"), {}, **spec) == expected


# --------------------------------------------------------------------------- locality


@pytest.mark.parametrize(("targets", "score"), [
    pytest.param([], 0, id="no targets score zero"),
    pytest.param(["cluster1", "cluster2"], 100, id="a targeted cluster scores the maximum"),
    pytest.param(["cluster2", "cluster3"], 0, id="an untargeted cluster scores zero"),
])
def test_cluster_locality(targets: list[str], score: int) -> None:
    rb = binding({}, clusters=[{"name": t} for t in targets])
    assert cluster_locality.new().score(view_of(rb.spec, rb.status, NOW), facts("cluster1")) == score


# --------------------------------------------------------------------------- registry


ALL = list(plugins.REGISTRY)


@pytest.mark.parametrize(("selection", "expected"), [
    pytest.param(["*"], ALL, id="a star enables every plugin"),
    pytest.param(["*", "-TaintToleration"], [n for n in ALL if n != "TaintToleration"],
                 id="a star then minus disables one"),
    pytest.param(["-TaintToleration", "*"], [n for n in ALL if n != "TaintToleration"],
                 id="minus before the star still disables"),
    pytest.param(["ClusterLocality", "APIEnablement"], ["APIEnablement", "ClusterLocality"],
                 id="names enable those plugins in registry order"),
    pytest.param(["-APIEnablement"], [], id="minus with nothing enabled enables nothing"),
    pytest.param(["Unknown"], [], id="unknown names are ignored"),
])
def test_plugin_selection(selection: list[str], expected: list[str]) -> None:
    assert plugins.enabled(selection) == expected
    assert [p.name for p in plugins.new_plugins(selection)] == expected
