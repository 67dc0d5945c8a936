"""``kubectl auth whoami``, ``kubectl auth can-i`` and ``--list``: the reviews answer with the same
authorization every request goes through. (With the real kubectl: tests/e2e/test_kubectl.py.)"""

from __future__ import annotations

from typing import Any

import pytest

from fleetkeeper import errors
from fleetkeeper.apiserver.agent_rbac import grants
from fleetkeeper.apiserver.auth import (
    ADMIN,
    AGENT_USER_PREFIX,
    SELF_REVIEWS,
    Attributes,
    User,
    authorize,
    authorize_path,
)
from fleetkeeper.apiserver.rbac import RbacIndex
from fleetkeeper.apiserver.rbac_defaults import AGENT_ROLES, CLUSTER_ROLE_BINDINGS, CLUSTER_ROLES
from fleetkeeper.apiserver.reviews import access_review, rules_review, self_review

AGENT = User(f"{AGENT_USER_PREFIX}edge1", ("system:fleetkeeper:agents", "system:authenticated"),
             cluster="edge1")
#: what the plane stores at start with edge1's agent token issued: the default roles and bindings and
#: the agent's own grants
RBAC = RbacIndex()
for stored in (*CLUSTER_ROLES, *AGENT_ROLES, *CLUSTER_ROLE_BINDINGS, *grants("edge1")):
    RBAC.put(stored["kind"], stored)
WORKS = {"group": "work.karmada.io", "resource": "works"}


def can(user: User, **attributes: str) -> dict[str, Any]:
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
              "spec": {"resourceAttributes": attributes}}
    status: dict[str, Any] = access_review(user, review, RBAC)["status"]
    return status


@pytest.mark.parametrize(("attributes", "allowed"), [
    ({"verb": "update", **WORKS, "namespace": "karmada-es-edge1"}, True),
    ({"verb": "get", **WORKS, "namespace": "karmada-es-edge2"}, False),
    ({"verb": "patch", "group": "cluster.karmada.io", "resource": "clusters", "name": "edge1",
      "subresource": "status"}, True),
    ({"verb": "patch", "group": "cluster.karmada.io", "resource": "clusters", "name": "edge1"}, False),
    ({"verb": "delete", "group": "apps", "resource": "deployments", "namespace": "default"}, False),
], ids=["its Works", "another cluster's Works", "its Cluster's status", "its Cluster's spec", "templates"])
def test_an_agent_may_do_what_its_requests_may_do(attributes: dict[str, str], allowed: bool) -> None:
    status = can(AGENT, **attributes)
    assert status["allowed"] is allowed
    assert ("forbidden" in status.get("reason", "")) is not allowed


def test_the_admin_may_do_anything() -> None:
    assert can(ADMIN, verb="*", group="*", resource="*") == {"allowed": True,
                                                              "reason": "the admin may do anything"}


@pytest.mark.parametrize(("user", "path", "verb", "allowed"), [
    (AGENT, "/healthz", "get", True), (AGENT, "/apis/apps/v1", "get", True),
    (AGENT, "/metrics", "get", False),
    (AGENT, "/healthz", "post", False), (ADMIN, "/metrics", "get", True),
], ids=["health", "discovery", "metrics", "posting health", "the admin"])
def test_non_resource_paths(user: User, path: str, verb: str, allowed: bool) -> None:
    review = {"spec": {"nonResourceAttributes": {"path": path, "verb": verb}}}
    assert access_review(user, review)["status"]["allowed"] is allowed


@pytest.mark.parametrize("spec", [{}, {"resourceAttributes": {"verb": "get"}, "nonResourceAttributes": {}}],
                         ids=["neither", "both"])
def test_a_review_asks_about_exactly_one_kind_of_request(spec: dict[str, Any]) -> None:
    with pytest.raises(errors.Invalid, match=r"exactly one of spec\.resourceAttributes"):
        access_review(AGENT, {"spec": spec})


def test_whoami_answers_with_the_callers_name_and_groups() -> None:
    answer = self_review(AGENT, {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
    assert answer["status"] == {"userInfo": {"username": "system:fleetkeeper:agent:edge1",
                                             "groups": ["system:fleetkeeper:agents", "system:authenticated"]}}
    with pytest.raises(errors.BadRequest, match="SelfSubjectReview"):
        self_review(AGENT, {"apiVersion": "v1", "kind": "ConfigMap"})


# --------------------------------------------------------------------------- kubectl auth can-i --list

VERBS = ("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection")
#: (group, resource, namespaced)
RESOURCES = (("cluster.karmada.io", "clusters", False), ("coordination.k8s.io", "leases", True),
             ("work.karmada.io", "works", True), ("", "events", True), ("events.k8s.io", "events", True),
             ("fleetkeeper.io", "timelineentries", True), ("apps", "deployments", True),
             ("", "secrets", True))
NAMESPACES = ("default", "karmada-cluster", "karmada-es-edge1", "karmada-es-edge2")
PATHS = ("/healthz", "/readyz/etcd", "/version", "/apis", "/apis/apps/v1", "/openapi/v3", "/metrics",
         "/debug")


def _covers(rule: dict[str, list[str]], verb: str, group: str, resource: str, name: str) -> bool:
    """RBAC's matching of one resource rule (``resource`` may carry ``/subresource``)."""
    parent = resource.split("/")[0]
    resources = rule["resources"]
    return ((verb in rule["verbs"] or "*" in rule["verbs"])
            and (group in rule["apiGroups"] or "*" in rule["apiGroups"])
            and (resource in resources or "*" in resources
                 or ("/" in resource and f"{parent}/*" in resources))
            and (not rule.get("resourceNames") or name in rule["resourceNames"]))


def _listed(user: User, namespace: str) -> dict[str, Any]:
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview",
              "spec": {"namespace": namespace}}
    answer = rules_review(user, review, RBAC)
    assert answer["spec"] == {"namespace": namespace} and answer["status"]["incomplete"] is False
    status: dict[str, Any] = answer["status"]
    return status


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_the_listed_rules_allow_exactly_what_the_server_allows(namespace: str) -> None:
    """Every request of a small universe: the agent's listed rules and the authorization
    every request goes through agree (so the list cannot drift from what is enforced)."""
    listed = _listed(AGENT, namespace)["resourceRules"]
    checked = 0
    for group, plural, namespaced in RESOURCES:
        for subresource in (None, "status"):
            for name in ("edge1", "edge2", ""):
                for verb in VERBS:
                    pinned = verb in ("list", "watch") and name
                    attributes = Attributes(
                        verb=verb, group=group, resource=plural, namespace=namespace if namespaced else "",
                        name="" if pinned else name, subresource=subresource,
                        field_selector=f"metadata.name={name}" if pinned else None)
                    try:
                        authorize(AGENT, attributes, RBAC)
                        allowed = True
                    except errors.Forbidden:
                        allowed = False
                    resource = f"{plural}/{subresource}" if subresource else plural
                    by_rules = any(_covers(rule, verb, group, resource, name) for rule in listed)
                    assert by_rules is allowed, (namespace, verb, group, resource, name)
                    checked += allowed
    assert checked > 0, "the agent may do nothing at all here"


def test_the_listed_rules_cover_the_non_resource_paths_the_server_allows() -> None:
    for user in (AGENT, ADMIN):
        listed = _listed(user, "default")["nonResourceRules"]
        for path in PATHS:
            for verb in ("get", "post"):
                by_rules = any((verb in rule["verbs"] or "*" in rule["verbs"]) and any(
                    url == path or url == "*" or (url.endswith("/*") and path.startswith(url[:-1]))
                    for url in rule["nonResourceURLs"]) for rule in listed)
                try:
                    authorize_path(user, verb, path, RBAC)
                    allowed = True
                except errors.Forbidden:
                    allowed = False
                assert by_rules is allowed, (user.name, verb, path)


def test_the_admin_is_listed_with_every_verb_on_everything() -> None:
    status = _listed(ADMIN, "default")
    assert status["resourceRules"] == [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}]
    assert status["nonResourceRules"] == [{"verbs": ["*"], "nonResourceURLs": ["*"]}]


def test_an_agent_sees_its_works_only_in_its_execution_namespace() -> None:
    def works(namespace: str) -> list[dict[str, list[str]]]:
        return [r for r in _listed(AGENT, namespace)["resourceRules"] if "works" in r["resources"]]

    assert works("karmada-es-edge1") == [{"verbs": ["*"], "apiGroups": ["work.karmada.io"],
                                          "resources": ["works", "works/status"]}]
    assert works("karmada-es-edge2") == [] and works("default") == []
    # the self reviews have routes of their own, open to every authenticated caller
    assert SELF_REVIEWS in _listed(AGENT, "default")["resourceRules"]


@pytest.mark.parametrize(("body", "error"), [
    ({"apiVersion": "v1", "kind": "ConfigMap"}, errors.BadRequest),
    ({"kind": "SelfSubjectRulesReview", "spec": {"namespace": 7}}, errors.Invalid),
], ids=["another kind", "a namespace that is not a string"])
def test_a_bad_rules_review_is_refused(body: dict[str, Any], error: type[errors.ApiError]) -> None:
    with pytest.raises(error):
        rules_review(AGENT, body)
