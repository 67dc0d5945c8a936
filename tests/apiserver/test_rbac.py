"""RBAC as kube-apiserver evaluates it: rule matching, aggregation, the subject index, and every
request through the server decided by the stored Roles and bindings."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest

from fleetkeeper import errors
from fleetkeeper.api.scheme import SCHEME, GroupKind
from fleetkeeper.apiserver.rbac import PolicyRule, RbacIndex
from fleetkeeper.apiserver.rbac_defaults import AGGREGATE, AUTOUPDATE, reconcile_defaults
from fleetkeeper.apiserver.satokens import Signer
from fleetkeeper.clock import SystemClock
from fleetkeeper.store import open_store

from .helpers import Api

SA = "system:serviceaccount:team-a:deployer"
SA_GROUPS = ("system:serviceaccounts", "system:serviceaccounts:team-a", "system:authenticated")


def rule(**raw: Any) -> PolicyRule:
    return PolicyRule.of(raw)


@pytest.mark.parametrize(
    ("raw", "request_", "allowed"),
    [
        (
            {"verbs": ["get"], "apiGroups": ["apps"], "resources": ["deployments"]},
            ("get", "apps", "deployments", None, "x"),
            True,
        ),
        (
            {"verbs": ["get"], "apiGroups": ["apps"], "resources": ["deployments"]},
            ("get", "apps", "deployments", "scale", "x"),
            False,
        ),
        (
            {"verbs": ["get"], "apiGroups": ["apps"], "resources": ["deployments/scale"]},
            ("get", "apps", "deployments", "scale", "x"),
            True,
        ),
        (
            {"verbs": ["update"], "apiGroups": ["*"], "resources": ["*/status"]},
            ("update", "work.karmada.io", "works", "status", "w"),
            True,
        ),
        (
            {"verbs": ["*"], "apiGroups": [""], "resources": ["secrets"], "resourceNames": ["a"]},
            ("get", "", "secrets", None, "a"),
            True,
        ),
        (
            {"verbs": ["*"], "apiGroups": [""], "resources": ["secrets"], "resourceNames": ["a"]},
            ("get", "", "secrets", None, "b"),
            False,
        ),
        (
            {"verbs": ["*"], "apiGroups": [""], "resources": ["secrets"], "resourceNames": ["a"]},
            ("list", "", "secrets", None, ""),
            False,
        ),
        (
            {"verbs": ["list", "watch"], "apiGroups": [""], "resources": ["pods"]},
            ("deletecollection", "", "pods", None, ""),
            False,
        ),
        (
            {"verbs": ["deletecollection"], "apiGroups": [""], "resources": ["pods"]},
            ("deletecollection", "", "pods", None, ""),
            True,
        ),
        (
            {"verbs": ["patch"], "apiGroups": [""], "resources": ["pods"]},
            ("update", "", "pods", None, "p"),
            False,
        ),
        (
            {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]},
            ("get", "apps", "pods", None, "p"),
            False,
        ),
    ],
    ids=[
        "exact",
        "resource is not its subresource",
        "subresource",
        "any subresource of a name",
        "resourceNames match",
        "resourceNames refuse",
        "resourceNames never list",
        "watch is not deletecollection",
        "deletecollection",
        "patch is not update",
        "group matters",
    ],
)
def test_a_rule_matches_as_rbac_does(
    raw: dict[str, Any], request_: tuple[str, str, str, str | None, str], allowed: bool
) -> None:
    assert rule(**raw).allows(*request_) is allowed


def test_non_resource_urls_match_exactly_or_by_prefix() -> None:
    granted = rule(verbs=["get"], nonResourceURLs=["/healthz", "/metrics/*"])
    assert granted.allows_path("get", "/healthz") and granted.allows_path("get", "/metrics/x")
    assert not granted.allows_path("get", "/healthz/x") and not granted.allows_path("post", "/healthz")
    assert not granted.allows("get", "", "pods", None, "")


def _obj(kind: str, name: str, namespace: str = "", **rest: Any) -> dict[str, Any]:
    meta = {"name": name, **({"namespace": namespace} if namespace else {}), **rest.pop("meta", {})}
    return {"kind": kind, "metadata": meta, **rest}


def _binding(
    kind: str, name: str, role: tuple[str, str], subjects: list[dict[str, str]], namespace: str = ""
) -> dict[str, Any]:
    return _obj(kind, name, namespace, roleRef={"kind": role[0], "name": role[1]}, subjects=subjects)


def test_bindings_grant_by_subject_and_namespace() -> None:
    index = RbacIndex()
    index.put(
        "ClusterRole",
        _obj("ClusterRole", "reader", rules=[{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]),
    )
    index.put(
        "Role",
        _obj(
            "Role",
            "writer",
            "team-a",
            rules=[
                {"verbs": ["create"], "apiGroups": [""], "resources": ["pods"]},
                {"verbs": ["get"], "nonResourceURLs": ["/metrics"]},
            ],
        ),
    )
    index.put(
        "RoleBinding",
        _binding(
            "RoleBinding",
            "rb",
            ("Role", "writer"),
            [{"kind": "ServiceAccount", "name": "deployer"}],
            "team-a",
        ),
    )
    index.put(
        "ClusterRoleBinding",
        _binding(
            "ClusterRoleBinding",
            "crb",
            ("ClusterRole", "reader"),
            [{"kind": "Group", "name": "system:serviceaccounts:team-a"}],
        ),
    )

    def may(verb: str, namespace: str, user: str = SA, groups: tuple[str, ...] = SA_GROUPS) -> bool:
        return index.allows(
            user,
            groups,
            verb=verb,
            group="",
            resource="pods",
            subresource=None,
            namespace=namespace,
            name="p",
        )

    assert may("create", "team-a") and not may("create", "team-b")
    assert may("get", "team-b") and may("get", "")
    assert not may("get", "team-a", "alice", ("system:authenticated",))
    assert not index.allows_path(SA, SA_GROUPS, "get", "/metrics"), "a Role cannot grant a URL"
    index.remove("ClusterRoleBinding", _obj("ClusterRoleBinding", "crb"))
    assert not may("get", "team-b")
    index.replace("RoleBinding", [])
    assert not may("create", "team-a")


def test_aggregation_is_transitive_and_follows_label_changes() -> None:
    index = RbacIndex()
    selector = {"clusterRoleSelectors": [{"matchLabels": {"to-edit": "true"}}]}
    index.put(
        "ClusterRole",
        _obj("ClusterRole", "edit", aggregationRule=selector, meta={"labels": {"to-admin": "true"}}),
    )
    index.put(
        "ClusterRole",
        _obj(
            "ClusterRole",
            "admin",
            aggregationRule={"clusterRoleSelectors": [{"matchLabels": {"to-admin": "true"}}]},
        ),
    )
    index.put(
        "ClusterRole",
        _obj(
            "ClusterRole",
            "piece",
            meta={"labels": {"to-edit": "true"}},
            rules=[{"verbs": ["get"], "apiGroups": ["apps"], "resources": ["deployments"]}],
        ),
    )
    index.put(
        "ClusterRoleBinding",
        _binding("ClusterRoleBinding", "b", ("ClusterRole", "admin"), [{"kind": "User", "name": "alice"}]),
    )
    wanted: dict[str, Any] = {
        "verb": "get",
        "group": "apps",
        "resource": "deployments",
        "subresource": None,
        "namespace": "x",
        "name": "d",
    }
    assert index.allows("alice", (), **wanted)
    index.put(
        "ClusterRole",
        _obj(
            "ClusterRole",
            "piece",
            meta={"labels": {}},
            rules=[{"verbs": ["get"], "apiGroups": ["apps"], "resources": ["deployments"]}],
        ),
    )
    assert not index.allows("alice", (), **wanted)


def test_one_request_reads_only_its_callers_bindings() -> None:
    index = RbacIndex()
    index.put(
        "ClusterRole",
        _obj("ClusterRole", "view", rules=[{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]),
    )
    for i in range(1000):
        index.put(
            "RoleBinding",
            _binding(
                "RoleBinding",
                f"b{i}",
                ("ClusterRole", "view"),
                [{"kind": "User", "name": f"user{i}"}],
                f"ns{i}",
            ),
        )
    assert index.binding_count == 1000
    assert len(list(index._bindings_of(["u:user7"]))) == 1
    assert index.allows(
        "user7", (), verb="get", group="", resource="pods", subresource=None, namespace="ns7", name="p"
    )
    assert not index.allows(
        "user7", (), verb="get", group="", resource="pods", subresource=None, namespace="ns8", name="p"
    )


# ------------------------------------------------------------------------------ through the server

DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web"},
    "spec": {
        "replicas": 1,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "web", "image": "nginx"}]},
        },
    },
}


async def _setup(api: Api, role: str = "edit", account: str = "deployer") -> httpx.AsyncClient:
    """Namespaces team-a and team-b, a ServiceAccount bound to ``role`` in team-a; its client."""
    admin = api.http
    for namespace in ("team-a", "team-b"):
        await admin.post(
            "/api/v1/namespaces",
            json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
        )
    made = await admin.post(
        "/api/v1/namespaces/team-a/serviceaccounts",
        json={"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": account}},
    )
    assert made.status_code == 201, made.text
    bound = await admin.post(
        "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings",
        json={
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": account},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": "team-a"}],
        },
    )
    assert bound.status_code == 201, bound.text
    answer = await admin.post(
        f"/api/v1/namespaces/team-a/serviceaccounts/{account}/token",
        json={
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {"expirationSeconds": 3600},
        },
    )
    assert answer.status_code == 201, answer.text
    return api.client(answer.json()["status"]["token"])


async def test_edit_in_one_namespace_is_refused_in_kubernetes_words_elsewhere(api: Api) -> None:
    client = await _setup(api)
    made = await client.post("/apis/apps/v1/namespaces/team-a/deployments", json=DEPLOYMENT)
    assert made.status_code == 201, made.text
    refused = await client.post("/apis/apps/v1/namespaces/team-b/deployments", json=DEPLOYMENT)
    assert refused.status_code == 403
    assert refused.json()["message"] == (
        f'deployments.apps is forbidden: User "{SA}" cannot create resource "deployments" '
        'in API group "apps" in the namespace "team-b"'
    )
    secret = await client.get("/api/v1/namespaces/karmada-cluster/secrets/member1")
    assert secret.status_code == 403
    assert secret.json()["message"] == (
        f'secrets "member1" is forbidden: User "{SA}" cannot get resource "secrets" in API group "" '
        'in the namespace "karmada-cluster"'
    )
    clusters = await client.get("/apis/cluster.karmada.io/v1alpha1/clusters")
    assert clusters.status_code == 403 and "at the cluster scope" in clusters.json()["message"]
    assert (
        await client.get("/apis/policy.karmada.io/v1alpha1/namespaces/team-a/propagationpolicies")
    ).status_code == 200


async def test_view_reads_but_does_not_write(api: Api) -> None:
    client = await _setup(api, role="view", account="viewer")
    assert (
        await api.http.post("/apis/apps/v1/namespaces/team-a/deployments", json=DEPLOYMENT)
    ).status_code == 201
    assert (await client.get("/apis/apps/v1/namespaces/team-a/deployments/web")).status_code == 200
    assert (await client.get("/apis/apps/v1/namespaces/team-a/deployments")).status_code == 200
    timeline = "/apis/fleetkeeper.io/v1alpha1/timelineentries"
    assert (await client.get(timeline)).status_code == 403, "the timeline is cluster-scoped"
    everywhere = await api.http.post(
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
        json={
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "viewers"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "ServiceAccount", "name": "viewer", "namespace": "team-a"}],
        },
    )
    assert everywhere.status_code == 201
    assert (await client.get(timeline)).status_code == 200
    assert (await client.delete("/apis/apps/v1/namespaces/team-a/deployments/web")).status_code == 403
    assert (await client.get("/api/v1/namespaces/team-a/secrets")).status_code == 403


async def test_access_review_and_rules_review_answer_from_the_bindings(api: Api) -> None:
    client = await _setup(api)

    async def can(verb: str, resource: str, namespace: str, group: str = "") -> bool:
        body = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "spec": {
                "resourceAttributes": {
                    "verb": verb,
                    "resource": resource,
                    "group": group,
                    "namespace": namespace,
                }
            },
        }
        answer = await client.post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", json=body)
        return bool(answer.json()["status"]["allowed"])

    assert await can("create", "deployments", "team-a", "apps")
    assert not await can("create", "deployments", "team-b", "apps")
    assert await can("create", "propagationpolicies", "team-a", "policy.karmada.io")
    assert not await can("create", "clusterpropagationpolicies", "", "policy.karmada.io")
    listed = await client.post(
        "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
        json={
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectRulesReview",
            "spec": {"namespace": "team-a"},
        },
    )
    rules = listed.json()["status"]["resourceRules"]
    assert any("deployments" in r.get("resources", []) and "create" in r["verbs"] for r in rules)


async def test_a_token_of_a_deleted_account_is_refused(api: Api) -> None:
    client = await _setup(api)
    assert (await client.get("/apis/apps/v1/namespaces/team-a/deployments")).status_code == 200
    assert (await api.http.delete("/api/v1/namespaces/team-a/serviceaccounts/deployer")).status_code == 200
    for _ in range(200):  # the watch tells the server within milliseconds
        answer = await client.get("/apis/apps/v1/namespaces/team-a/deployments")
        if answer.status_code == 401:
            break
        await asyncio.sleep(0.005)
    assert answer.status_code == 401


async def test_a_token_needs_an_existing_account_and_a_sane_duration(api: Api) -> None:
    await _setup(api)
    missing = await api.http.post("/api/v1/namespaces/team-a/serviceaccounts/nobody/token", json={})
    assert missing.status_code == 404
    short = await api.http.post(
        "/api/v1/namespaces/team-a/serviceaccounts/deployer/token", json={"spec": {"expirationSeconds": 60}}
    )
    assert short.status_code == 422 and "less than 10 minutes" in short.json()["message"]
    forged = api.client("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.e30.AAAA")
    assert (await forged.get("/api/v1/namespaces")).status_code == 401


async def test_escalation_is_refused(api: Api) -> None:
    client = await _setup(api, role="admin", account="lead")
    grant: dict[str, Any] = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "x"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
        "subjects": [{"kind": "User", "name": "mallory"}],
    }
    refused = await client.post(
        "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings", json=grant
    )
    assert refused.status_code == 403, refused.text
    assert "attempting to grant RBAC permissions not currently held" in refused.json()["message"]
    grant["roleRef"]["name"] = "edit"
    allowed = await client.post(
        "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings", json=grant
    )
    assert allowed.status_code == 201, allowed.text
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": "nodes"},
        "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get"]}],
    }
    assert (
        await client.post("/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/roles", json=role)
    ).status_code == 403
    role["rules"] = [{"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get"]}]
    assert (
        await client.post("/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/roles", json=role)
    ).status_code == 201
    patch = [
        {
            "op": "add",
            "path": "/rules/-",
            "value": {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get"]},
        }
    ]
    patched = await client.patch(
        "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/roles/nodes",
        json=patch,
        headers={"Content-Type": "application/json-patch+json"},
    )
    assert patched.status_code == 403


async def test_impersonation_needs_the_impersonate_verb(api: Api) -> None:
    client = await _setup(api)
    as_view = {"Impersonate-User": "alice"}
    assert (await client.get("/api/v1/namespaces/team-a/pods", headers=as_view)).status_code == 403
    answer = await api.http.get(
        "/apis/apps/v1/namespaces/team-a/deployments", headers={"Impersonate-User": SA}
    )
    assert answer.status_code == 200
    refused = await api.http.get(
        "/apis/apps/v1/namespaces/team-b/deployments", headers={"Impersonate-User": SA}
    )
    assert refused.status_code == 403 and f'User "{SA}"' in refused.json()["message"]


async def test_default_roles_are_created_and_given_back_their_rules(api: Api) -> None:
    roles = await api.http.get("/apis/rbac.authorization.k8s.io/v1/clusterroles")
    names = {item["metadata"]["name"] for item in roles.json()["items"]}
    assert {"cluster-admin", "admin", "edit", "view", "karmada-edit", "karmada-view"} <= names


class _LaterClock(SystemClock):
    """The system clock, moved forward by ``ahead`` seconds."""

    def __init__(self) -> None:
        self.ahead = 0.0

    def now(self) -> datetime:
        return super().now() + timedelta(seconds=self.ahead)


def test_a_token_past_its_duration_or_of_a_recreated_account_is_refused() -> None:
    clock = _LaterClock()
    accounts = {("team-a", "deployer"): "uid-1"}
    signer = Signer(b"k" * 32, clock, accounts)
    token, _ = signer.account_token("team-a", "deployer", "uid-1", seconds=600, audiences=[])
    assert signer.authenticate(token).name == SA
    assert signer.authenticate(token).groups == SA_GROUPS
    clock.ahead = 599
    signer.authenticate(token)
    clock.ahead = 600
    with pytest.raises(errors.Unauthorized, match="expired"):
        signer.authenticate(token)
    clock.ahead = 0
    accounts[("team-a", "deployer")] = "uid-2"
    with pytest.raises(errors.Unauthorized, match="no longer exists"):
        signer.authenticate(token)
    other = Signer(b"x" * 32, clock, accounts)
    with pytest.raises(errors.Unauthorized, match="not valid"):
        other.authenticate(token)


def test_a_persons_token_carries_its_groups() -> None:
    signer = Signer(b"k" * 32, SystemClock(), {})
    person = signer.authenticate(signer.user_token("alice", ["platform"], seconds=600))
    assert person.name == "alice" and person.groups == ("platform", "system:authenticated")


async def test_an_agent_is_listed_truthfully_to_whoever_may_impersonate_it(api: Api) -> None:
    body = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectRulesReview",
        "spec": {"namespace": "karmada-es-member1"},
    }
    listed = await api.http.post(
        "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
        json=body,
        headers={"Impersonate-User": "system:fleetkeeper:agent:member1"},
    )
    rules = listed.json()["status"]["resourceRules"]
    assert {"verbs": ["*"], "apiGroups": ["work.karmada.io"], "resources": ["works", "works/status"]} in rules
    assert not any("*" in r.get("resources", []) for r in rules)


async def test_default_roles_get_back_what_they_lack_unless_autoupdate_is_off() -> None:
    clock = SystemClock()
    store = open_store("memory://", clock=clock)
    try:
        await reconcile_defaults(store, SCHEME, clock=clock)
        role = GroupKind("rbac.authorization.k8s.io", "ClusterRole")
        view = await store.get(role, "", "karmada-view")
        view["rules"] = view["rules"][:1]
        view["metadata"]["labels"] = {}
        await store.update(view)
        edit = await store.get(role, "", "karmada-edit")
        edit["rules"] = []
        edit["metadata"]["annotations"][AUTOUPDATE] = "false"
        await store.update(edit)
        await store.delete(role, "", "view")
        await reconcile_defaults(store, SCHEME, clock=clock)
        view = await store.get(role, "", "karmada-view")
        assert len(view["rules"]) == 5 and view["metadata"]["labels"][AGGREGATE + "view"] == "true"
        assert (await store.get(role, "", "karmada-edit"))["rules"] == []
        assert (await store.get(role, "", "view"))["aggregationRule"]
    finally:
        await store.close()


async def test_an_aggregated_cluster_role_needs_full_authority(api: Api) -> None:
    client = await _setup(api, role="admin", account="lead")
    await api.http.post(
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
        json={
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "lead-roles"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "roles-writer",
            },
            "subjects": [{"kind": "ServiceAccount", "name": "lead", "namespace": "team-a"}],
        },
    )
    await api.http.post(
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
        json={
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": "roles-writer"},
            "rules": [
                {
                    "apiGroups": ["rbac.authorization.k8s.io"],
                    "resources": ["clusterroles"],
                    "verbs": ["create"],
                }
            ],
        },
    )
    sneaky = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "sneaky"},
        "aggregationRule": {
            "clusterRoleSelectors": [{"matchLabels": {"kubernetes.io/bootstrapping": "rbac-defaults"}}]
        },
    }
    refused = await client.post("/apis/rbac.authorization.k8s.io/v1/clusterroles", json=sneaky)
    assert refused.status_code == 403, refused.text
    assert "NonResourceURLs" in refused.json()["message"]


def test_a_token_for_another_audience_is_refused() -> None:
    signer = Signer(b"k" * 32, SystemClock(), {("team-a", "deployer"): "uid-1"})
    token, _ = signer.account_token("team-a", "deployer", "uid-1", seconds=600, audiences=["vault"])
    with pytest.raises(errors.Unauthorized, match="not meant for this server"):
        signer.authenticate(token)
    token, _ = signer.account_token(
        "team-a", "deployer", "uid-1", seconds=600, audiences=["vault", "fleetkeeper"]
    )
    assert signer.authenticate(token).name == SA


async def test_a_bindings_role_ref_is_checked_and_never_changes(api: Api) -> None:
    url = "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings"
    binding: dict[str, Any] = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "b"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Secret", "name": "view"},
        "subjects": [{"kind": "User", "name": "alice"}],
    }
    refused = await api.http.post(url, json=binding)
    assert refused.status_code == 422 and "roleRef.kind: Unsupported value" in refused.json()["message"]
    binding["roleRef"]["kind"] = "ClusterRole"
    assert (await api.http.post(url, json=binding)).status_code == 201
    changed = await api.http.patch(
        f"{url}/b",
        json={"roleRef": {"name": "edit"}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert changed.status_code == 422 and "cannot change roleRef" in changed.json()["message"]
