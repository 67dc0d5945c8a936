"""``cluster_matches`` (spec §2.1.4) and resource-selector priority (spec §2.1.5)."""

from __future__ import annotations

from typing import Any

import pytest

from fleetkeeper.api import matching
from fleetkeeper.api.builtin import Deployment
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.core import NodeSelectorRequirement
from fleetkeeper.api.placement import ClusterAffinity, ResourceSelector


def make_cluster(name: str = "member1", *, labels: dict[str, str] | None = None, provider: str | None = None,
                 region: str | None = None, zones: list[str] | None = None) -> Cluster:
    return Cluster.from_dict({
        "metadata": {"name": name, "labels": labels},
        "spec": {"syncMode": "Push", "provider": provider, "region": region, "zones": zones},
    })


def affinity(**fields: Any) -> ClusterAffinity:
    return ClusterAffinity.from_dict(fields)


def field(key: str, operator: str, *values: str) -> dict[str, Any]:
    expression = {"key": key, "operator": operator, "values": list(values)}
    return {"fieldSelector": {"matchExpressions": [expression]}}


EU = make_cluster(labels={"env": "prod"}, provider="aws", region="eu", zones=["eu-1a", "eu-1b"])
BARE = make_cluster("member2")


@pytest.mark.parametrize(("aff", "cluster", "matches"), [
    pytest.param(affinity(), EU, True, id="an empty affinity matches every cluster"),
    pytest.param(affinity(clusterNames=["member1"]), EU, True, id="a listed name matches"),
    pytest.param(affinity(clusterNames=["member9"]), EU, False, id="an unlisted name does not match"),
    pytest.param(affinity(clusterNames=["member1"], exclude=["member1"]), EU, False,
                 id="exclude wins over clusterNames"),
    pytest.param(affinity(labelSelector={"matchLabels": {"env": "prod"}}), EU, True,
                 id="matching labels match"),
    pytest.param(affinity(labelSelector={"matchLabels": {"env": "dev"}}), EU, False,
                 id="different labels do not match"),
    pytest.param(affinity(labelSelector={"matchExpressions": [{"key": "env", "operator": "In"}]}), EU, False,
                 id="an invalid label selector matches nothing"),
    pytest.param(affinity(labelSelector={"matchLabels": {"env": "prod"}}, clusterNames=["member9"]), EU,
                 False, id="all clauses must hold"),
    pytest.param(affinity(**field("zone", "In", "eu-1b")), EU, True, id="zone In matches any of the zones"),
    pytest.param(affinity(**field("zone", "In", "us-1a")), EU, False,
                 id="zone In without a common zone fails"),
    pytest.param(affinity(**field("zone", "In", "eu-1a")), BARE, False,
                 id="zone In fails for a cluster without zones"),
    pytest.param(affinity(**field("zone", "NotIn", "eu-1a")), EU, False,
                 id="zone NotIn fails when any zone is listed"),
    pytest.param(affinity(**field("zone", "NotIn", "eu-1a")), BARE, True,
                 id="zone NotIn holds for a cluster without zones"),
    pytest.param(affinity(**field("zone", "Exists")), EU, True, id="zone Exists holds when zones are set"),
    pytest.param(affinity(**field("zone", "DoesNotExist")), EU, False,
                 id="zone DoesNotExist fails when zones are set"),
    pytest.param(affinity(**field("region", "In", "eu")), EU, True, id="region In matches the region"),
    pytest.param(affinity(**field("region", "NotIn", "eu")), EU, False,
                 id="region NotIn excludes the region"),
    pytest.param(affinity(**field("provider", "NotIn", "aws")), BARE, True,
                 id="provider NotIn holds for a cluster without a provider"),
    pytest.param(affinity(**field("provider", "In", "aws")), BARE, False,
                 id="provider In fails for a cluster without a provider"),
])
def test_cluster_matches(aff: ClusterAffinity, cluster: Cluster, matches: bool) -> None:
    assert matching.cluster_matches(aff, cluster) is matches


NGINX = {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": {"name": "nginx", "namespace": "default", "labels": {"app": "nginx"}}}
P = matching.ImplicitPriority


def selector(**fields: Any) -> ResourceSelector:
    return ResourceSelector.from_dict({"apiVersion": "apps/v1", "kind": "Deployment", **fields})


@pytest.mark.parametrize(("sel", "priority"), [
    pytest.param(selector(name="nginx"), P.MATCH_NAME, id="a name match has the highest priority"),
    pytest.param(selector(name="nginx", labelSelector={"matchLabels": {"app": "other"}}), P.MATCH_NAME,
                 id="with a name the label selector is ignored"),
    pytest.param(selector(name="redis"), P.MISMATCH, id="another name does not match"),
    pytest.param(selector(labelSelector={"matchLabels": {"app": "nginx"}}), P.MATCH_LABEL_SELECTOR,
                 id="a label-selector match ranks above kind only"),
    pytest.param(selector(labelSelector={"matchLabels": {"app": "redis"}}), P.MISMATCH,
                 id="a failing label selector does not match"),
    pytest.param(selector(), P.MATCH_ALL, id="kind only matches with the lowest priority"),
    pytest.param(selector(namespace="default"), P.MATCH_ALL, id="the same namespace matches"),
    pytest.param(selector(namespace="other"), P.MISMATCH, id="another namespace does not match"),
    pytest.param(ResourceSelector.from_dict({"apiVersion": "apps/v1", "kind": "StatefulSet"}), P.MISMATCH,
                 id="another kind does not match"),
    pytest.param(ResourceSelector.from_dict({"apiVersion": "apps/v1beta1", "kind": "Deployment"}), P.MISMATCH,
                 id="another apiVersion does not match"),
])
def test_resource_selector_priority(sel: ResourceSelector, priority: matching.ImplicitPriority) -> None:
    assert matching.resource_selector_priority(sel, NGINX) == priority
    assert matching.resource_selector_priority(sel, Deployment.from_dict(NGINX)) == priority
    assert matching.resource_selector_matches(sel, NGINX) is (priority > P.MISMATCH)


def test_the_best_selector_decides_the_priority() -> None:
    sels = [selector(), selector(name="nginx"), selector(name="redis")]
    assert matching.resource_selectors_priority(sels, NGINX) == P.MATCH_NAME
    assert matching.resource_selectors_priority(None, NGINX) == P.MISMATCH


@pytest.mark.parametrize(("operator", "values", "fields", "matches"), [
    pytest.param("Gt", ["3"], {"n": "5"}, True, id="Gt compares integers"),
    pytest.param("Lt", ["3"], {"n": "5"}, False, id="Lt compares integers"),
    pytest.param("Gt", ["x"], {"n": "5"}, False, id="Gt with a non-integer bound never matches"),
    pytest.param("In", [], {"n": "5"}, False, id="In without values is invalid and never matches"),
    pytest.param("Exists", ["5"], {"n": "5"}, False, id="Exists with values is invalid and never matches"),
])
def test_node_requirement_matches(operator: str, values: list[str], fields: dict[str, str],
                                  matches: bool) -> None:
    req = NodeSelectorRequirement.from_dict({"key": "n", "operator": operator, "values": values})
    assert matching.node_requirement_matches(req, fields) is matches
