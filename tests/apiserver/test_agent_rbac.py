"""A Pull agent's rights are stored RBAC: the default ClusterRole ``system:fleetkeeper:agent``
and each agent's own grants, written when its token is issued and removed when it is revoked;
the same evaluator decides its requests as everyone's. (What RBAC cannot say is admission's:
tests/apiserver/test_auth.py and test_confine.py.)"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from fleetkeeper.apiserver import Tokens, build_app
from fleetkeeper.apiserver.agent_rbac import CLUSTER_LABEL
from fleetkeeper.apiserver.transport import InProcessTransport
from fleetkeeper.clock import SystemClock

from .helpers import ADMIN, AGENT, Api

RBAC = "/apis/rbac.authorization.k8s.io/v1"
WORKS = "/apis/work.karmada.io/v1alpha1/namespaces/karmada-es-member1/works"
CLUSTERS = "/apis/cluster.karmada.io/v1alpha1/clusters"
GRANTS = (f"{RBAC}/clusterroles/system:fleetkeeper:agent:member1",
          f"{RBAC}/clusterrolebindings/system:fleetkeeper:agent:member1",
          f"{RBAC}/namespaces/karmada-cluster/roles/system:fleetkeeper:agent:member1",
          f"{RBAC}/namespaces/karmada-cluster/rolebindings/system:fleetkeeper:agent:member1",
          f"{RBAC}/namespaces/karmada-es-member1/rolebindings/system:fleetkeeper:agent")


async def _eventually(check: Any) -> None:
    for _ in range(100):
        if await check():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("not within 2 seconds")


async def test_the_agents_rights_are_stored_roles_and_bindings(api: Api) -> None:
    role = (await api.http.get(f"{RBAC}/clusterroles/system:fleetkeeper:agent")).json()
    create = {"apiGroups": ["cluster.karmada.io"], "resources": ["clusters"], "verbs": ["create"]}
    assert create in role["rules"]
    binding = (await api.http.get(f"{RBAC}/clusterrolebindings/system:fleetkeeper:agent")).json()
    assert binding["subjects"][0]["name"] == "system:fleetkeeper:agents"
    for path in GRANTS:
        assert (await api.http.get(path)).status_code == 200, path
    own = (await api.http.get(GRANTS[0])).json()
    assert all(rule["resourceNames"] == ["member1"] for rule in own["rules"])


async def test_kubectl_auth_can_i_list_as_an_agent_shows_the_stored_rules(api: Api) -> None:
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview",
              "spec": {"namespace": "karmada-es-member1"}}
    answer = await api.http.post("/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", json=review,
                                 headers={"Impersonate-User": "system:fleetkeeper:agent:member1",
                                          "Impersonate-Group": "system:fleetkeeper:agents"})
    rules = answer.json()["status"]["resourceRules"]
    assert {"verbs": ["*"], "apiGroups": ["work.karmada.io"], "resources": ["works", "works/status"]} in rules
    assert {"verbs": ["get", "list", "update", "watch"], "apiGroups": ["cluster.karmada.io"],
            "resources": ["clusters"], "resourceNames": ["member1"]} in rules


async def test_rbac_decides_an_agents_requests(api: Api) -> None:
    """Remove the agent's binding in its execution namespace and it may no longer list its Works:
    nothing but the stored rules grants it."""
    async with api.client(AGENT) as agent:
        assert (await agent.get(WORKS)).status_code == 200
        assert (await api.http.delete(GRANTS[4])).status_code == 200
        refused = await agent.get(WORKS)
    assert refused.status_code == 403
    assert refused.json()["message"] == (
        'works.work.karmada.io is forbidden: User "system:fleetkeeper:agent:member1" cannot list resource '
        '"works" in API group "work.karmada.io" in the namespace "karmada-es-member1"')


async def test_a_new_agent_is_granted_and_a_revoked_one_loses_its_grants(api: Api) -> None:
    tokens = api.app.state.tokens
    assert tokens is not None
    tokens.add_agent("member2", "agent-member2")

    async def member2_granted() -> bool:
        granted = await api.http.get(f"{RBAC}/clusterrolebindings/system:fleetkeeper:agent:member2")
        if granted.status_code != 200:
            return False
        async with api.client("agent-member2") as agent:
            return (await agent.get(f"{CLUSTERS}/member2")).status_code == 404  # allowed; not registered yet

    await _eventually(member2_granted)
    assert (await api.http.get(GRANTS[0])).status_code == 200
    tokens.revoke_agent("member1")

    async def member1_gone() -> bool:
        return all([(await api.http.get(path)).status_code == 404 for path in GRANTS])

    await _eventually(member1_gone)


async def test_the_default_agent_role_is_given_back_its_rules_at_start(api: Api) -> None:
    """Edited or deleted, the plane's agent roles and grants are as they should be after a start;
    the grants of a cluster without an agent token are removed."""
    path = f"{RBAC}/clusterroles/system:fleetkeeper:agent"
    role: dict[str, Any] = (await api.http.get(path)).json()
    role["rules"] = []
    assert (await api.http.put(path, json=role)).status_code == 200
    assert (await api.http.delete(GRANTS[1])).status_code == 200
    ghost = {"metadata": {"name": "system:fleetkeeper:agent:ghost", "labels": {CLUSTER_LABEL: "ghost"}},
             "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
             "subjects": [{"kind": "User", "name": "system:fleetkeeper:agent:ghost"}]}
    assert (await api.http.post(f"{RBAC}/clusterrolebindings", json=ghost)).status_code == 201
    tokens = Tokens(admin=ADMIN, agents={"member1": AGENT})
    restarted = build_app(api.store, clock=SystemClock(), tokens=tokens)
    async with httpx.AsyncClient(transport=InProcessTransport(restarted), base_url="http://apiserver.test",
                                 headers={"Authorization": f"Bearer {AGENT}"}) as agent:
        assert (await agent.get(f"{CLUSTERS}/member1")).status_code == 404  # allowed again
    restarted.close()
    assert len((await api.http.get(path)).json()["rules"]) == 5
    gone = await api.http.get(f"{RBAC}/clusterrolebindings/system:fleetkeeper:agent:ghost")
    assert gone.status_code == 404
