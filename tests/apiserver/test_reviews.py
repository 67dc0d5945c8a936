"""``kubectl auth whoami`` and ``kubectl auth can-i``: the reviews answer with the same
authorization every request goes through. (With the real kubectl: tests/e2e/test_kubectl.py.)"""

from __future__ import annotations

from typing import Any

import pytest

from fleetkeeper import errors
from fleetkeeper.apiserver.auth import ADMIN, AGENT_USER_PREFIX, User
from fleetkeeper.apiserver.reviews import access_review, self_review

AGENT = User(f"{AGENT_USER_PREFIX}edge1", ("system:fleetkeeper:agents", "system:authenticated"),
             cluster="edge1")
WORKS = {"group": "work.karmada.io", "resource": "works"}


def can(user: User, **attributes: str) -> dict[str, Any]:
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
              "spec": {"resourceAttributes": attributes}}
    status: dict[str, Any] = access_review(user, review)["status"]
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
