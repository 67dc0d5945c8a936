"""Many teams on one plane, with the real kubectl against ``fleetkeeper up``: a ServiceAccount
bound to ``edit`` in team-a works there and nowhere else, ``view`` reads but does not write,
``kubectl auth can-i`` agrees with every outcome, a deleted account's token is refused within
a second, and nobody grants more than they hold. One plane serves every test: each works with
accounts, namespaces and bindings of its own names."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest

from .test_up import FLEETKEEPER, Fleet, wait_for

SA = "system:serviceaccount:team-a:deployer"
APP = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {app: web}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusterAffinity: {clusterNames: [member1, member2]}}
"""
SETTINGS = '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"}, "data": {"a": "b"}}'
CPP = """\
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: everything}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement: {clusterAffinity: {clusterNames: [member1]}}
"""


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    """One ``fleetkeeper up`` (three simulated members) for the module's tests."""
    started = Fleet(tmp_path_factory.mktemp("rbac"))
    try:
        started.up()
        yield started
    finally:
        started.stop_all()


def _namespace(fleet: Fleet, name: str) -> None:
    """Namespace ``name``, made unless an earlier test of the module made it."""
    if fleet.kubectl("get", "namespace", name).returncode != 0:
        fleet.kubectl_ok("create", "namespace", name)


def _account(fleet: Fleet, name: str, role: str) -> str:
    """A ServiceAccount in team-a bound to ``role`` there; a one-hour token of it."""
    fleet.kubectl_ok("create", "serviceaccount", name, "-n", "team-a")
    fleet.kubectl_ok(
        "create",
        "rolebinding",
        name,
        "--clusterrole",
        role,
        "--serviceaccount",
        f"team-a:{name}",
        "-n",
        "team-a",
    )
    return fleet.kubectl_ok("create", "token", name, "-n", "team-a", "--duration", "1h").strip()


def _as(fleet: Fleet, token: str, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return fleet.kubectl("--token", token, *args, stdin=stdin)


#: (verb, what, namespace, the kubectl command doing it) — what kubectl auth can-i is asked about
ACTIONS: list[tuple[str, str, str, list[str]]] = [
    ("get", "deployments", "team-a", ["get", "deployment", "web", "-n", "team-a"]),
    ("list", "deployments", "team-a", ["get", "deployments", "-n", "team-a"]),
    (
        "watch",
        "deployments",
        "team-a",
        ["get", "--raw", "/apis/apps/v1/namespaces/team-a/deployments?watch=true&timeoutSeconds=1"],
    ),
    (
        "patch",
        "deployments",
        "team-a",
        ["patch", "deployment", "web", "-n", "team-a", "-p", '{"metadata":{"labels":{"seen":"yes"}}}'],
    ),
    ("create", "configmaps", "team-a", ["create", "configmap", "settings", "-n", "team-a"]),
    (
        "update",
        "configmaps",
        "team-a",
        ["replace", "--raw", "/api/v1/namespaces/team-a/configmaps/settings", "-f", "-"],
    ),
    ("delete", "configmaps", "team-a", ["delete", "configmap", "settings", "-n", "team-a"]),
    ("deletecollection", "configmaps", "team-a", ["delete", "--raw", "/api/v1/namespaces/team-a/configmaps"]),
    ("list", "secrets", "team-a", ["get", "secrets", "-n", "team-a"]),
    (
        "list",
        "propagationpolicies.policy.karmada.io",
        "team-a",
        ["get", "propagationpolicies", "-n", "team-a"],
    ),
    ("get", "deployments", "team-b", ["get", "deployment", "web", "-n", "team-b"]),
    ("create", "configmaps", "team-b", ["create", "configmap", "settings", "-n", "team-b"]),
    ("delete", "deployments", "team-b", ["delete", "deployment", "web", "-n", "team-b"]),
    ("list", "deployments", "team-b", ["get", "deployments", "-n", "team-b"]),
    ("list", "clusters.cluster.karmada.io", "", ["get", "clusters"]),
    ("list", "clusterpropagationpolicies.policy.karmada.io", "", ["get", "clusterpropagationpolicies"]),
    ("get", "secrets", "karmada-cluster", ["get", "secret", "member1", "-n", "karmada-cluster"]),
]
EDIT = {
    "get/deployments/team-a",
    "list/deployments/team-a",
    "watch/deployments/team-a",
    "patch/deployments/team-a",
    "create/configmaps/team-a",
    "update/configmaps/team-a",
    "delete/configmaps/team-a",
    "deletecollection/configmaps/team-a",
    "list/secrets/team-a",
    "list/propagationpolicies.policy.karmada.io/team-a",
}
VIEW = {
    "get/deployments/team-a",
    "list/deployments/team-a",
    "watch/deployments/team-a",
    "list/propagationpolicies.policy.karmada.io/team-a",
}


def _check_table(fleet: Fleet, token: str, allowed: set[str]) -> None:
    """Each action succeeds exactly when allowed, and kubectl auth can-i says so too."""
    for verb, what, namespace, command in ACTIONS:
        key = f"{verb}/{what}/{namespace}"
        scope = ["-n", namespace] if namespace else []
        can = _as(fleet, token, "auth", "can-i", verb, what, *scope)
        assert can.stdout.strip() == ("yes" if key in allowed else "no"), (
            f"can-i {key}: {can.stdout}{can.stderr}"
        )
        done = _as(fleet, token, *command, stdin=SETTINGS if "replace" in command else None)
        forbidden = "Forbidden" in done.stderr or "forbidden" in done.stderr
        assert forbidden is (key not in allowed), f"{key}: {done.stdout}{done.stderr}"


def test_teams_are_confined_to_their_namespaces(fleet: Fleet) -> None:
    for namespace in ("team-a", "team-b"):
        _namespace(fleet, namespace)
    fleet.kubectl_ok("create", "deployment", "web", "--image", "nginx", "-n", "team-b")
    deployer = _account(fleet, "deployer", "edit")

    applied = _as(fleet, deployer, "apply", "-n", "team-a", "-f", "-", stdin=APP)
    assert applied.returncode == 0, applied.stderr

    def scheduled() -> bool:
        done = fleet.kubectl(
            "get", "rb", "web-deployment", "-n", "team-a", "-o", "jsonpath={.spec.clusters[*].name}"
        )
        return done.returncode == 0 and sorted(done.stdout.split()) == ["member1", "member2"]

    wait_for(scheduled, "team-a's web scheduled to member1 and member2")
    wait_for(lambda: "web-" in fleet.kubectl_ok("get", "works", "-n", "karmada-es-member1"), "its Work")

    refused = _as(fleet, deployer, "create", "-n", "team-b", "-f", "-", stdin=APP)
    assert refused.returncode != 0
    assert (
        f'deployments.apps is forbidden: User "{SA}" cannot create resource "deployments" in API group '
        '"apps" in the namespace "team-b"'
    ) in refused.stderr
    cpp = _as(fleet, deployer, "create", "-f", "-", stdin=CPP)
    assert (
        f'clusterpropagationpolicies.policy.karmada.io is forbidden: User "{SA}" cannot create resource '
        '"clusterpropagationpolicies" in API group "policy.karmada.io" at the cluster scope'
    ) in cpp.stderr
    _check_table(fleet, deployer, EDIT)

    viewer = _account(fleet, "viewer", "view")
    _check_table(fleet, viewer, VIEW)


def test_a_deleted_accounts_token_is_refused_within_a_second_and_nobody_escalates(fleet: Fleet) -> None:
    _namespace(fleet, "team-a")
    lead = _account(fleet, "lead", "admin")
    who = _as(fleet, lead, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}")
    assert who.stdout == "system:serviceaccount:team-a:lead"

    escalate = _as(
        fleet,
        lead,
        "create",
        "rolebinding",
        "root",
        "--clusterrole",
        "cluster-admin",
        "--user",
        "mallory",
        "-n",
        "team-a",
    )
    assert "attempting to grant RBAC permissions not currently held" in escalate.stderr, escalate.stderr
    share = _as(
        fleet,
        lead,
        "create",
        "rolebinding",
        "helpers",
        "--clusterrole",
        "edit",
        "--user",
        "helper",
        "-n",
        "team-a",
    )
    assert share.returncode == 0, share.stderr
    impersonating = _as(
        fleet, lead, "auth", "can-i", "create", "deployments", "-n", "team-a", "--as", "helper"
    )
    assert 'cannot impersonate resource "users"' in impersonating.stderr, impersonating.stderr
    assert (
        fleet.kubectl_ok("auth", "can-i", "create", "deployments", "-n", "team-a", "--as", "helper").strip()
        == "yes"
    )

    fleet.kubectl_ok("delete", "serviceaccount", "lead", "-n", "team-a")
    wait_for(
        lambda: "Unauthorized" in _as(fleet, lead, "get", "pods", "-n", "team-a").stderr,
        "the deleted account's token refused",
        timeout=1.0,
    )


def test_a_person_gets_a_kubeconfig_and_sees_what_their_groups_may(fleet: Fleet) -> None:
    made = subprocess.run(
        [
            *FLEETKEEPER,
            "token",
            "create-user",
            "alice",
            "--group",
            "platform",
            "--duration",
            "1h",
            "--state-dir",
            str(fleet.state),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=fleet.env,
        check=False,
    )
    assert made.returncode == 0, made.stderr
    alice = fleet.state / "user-alice.kubeconfig"
    who = fleet.kubectl("auth", "whoami", "-o", "jsonpath={.status.userInfo.groups}", kubeconfig=alice)
    assert who.stdout == '["platform","system:authenticated"]', who.stderr
    refused = fleet.kubectl("get", "clusters", kubeconfig=alice)
    assert 'User "alice" cannot list resource "clusters"' in refused.stderr
    cli = subprocess.run(
        [*FLEETKEEPER, "get", "clusters", "--kubeconfig", str(alice)],
        capture_output=True,
        text=True,
        timeout=60,
        env=fleet.env,
        check=False,
    )
    assert cli.returncode != 0 and 'cannot list resource "clusters"' in cli.stderr, cli.stdout + cli.stderr
    fleet.kubectl_ok(
        "create", "clusterrolebinding", "platform-view", "--clusterrole", "view", "--group", "platform"
    )
    assert (
        fleet.kubectl("auth", "can-i", "list", "deployments", "-A", kubeconfig=alice).stdout.strip() == "yes"
    )
    assert fleet.kubectl("auth", "can-i", "list", "clusters", kubeconfig=alice).stdout.strip() == "no"
    listed = fleet.kubectl("auth", "can-i", "--list", "-n", "default", kubeconfig=alice).stdout
    rows = {line.split()[0]: line for line in listed.splitlines()[1:] if line.strip()}
    assert "[get list watch]" in rows["deployments.apps"] and "secrets" not in rows
    # an agent's rights are stored once its token is issued, and listed from the stored rules
    mint = [*FLEETKEEPER, "token", "create-agent", "member1", "--state-dir", str(fleet.state)]
    minted = subprocess.run(mint, capture_output=True, text=True, timeout=60, env=fleet.env, check=False)
    assert minted.returncode == 0, minted.stderr
    agent = fleet.kubectl_ok(
        "auth", "can-i", "--list", "-n", "karmada-es-member1", "--as", "system:fleetkeeper:agent:member1",
        "--as-group", "system:fleetkeeper:agents",
    )
    agent_rows = [line.split() for line in agent.splitlines()[1:] if line.strip()]
    assert ["works.work.karmada.io", "[]", "[]", "[*]"] in agent_rows
    assert not any(row[0] == "deployments.apps" for row in agent_rows)
    assert any(row[:3] == ["clusters.cluster.karmada.io", "[]", "[member1]"] for row in agent_rows)
    assert ["clusters.cluster.karmada.io", "[]", "[]", "[create]"] in agent_rows
