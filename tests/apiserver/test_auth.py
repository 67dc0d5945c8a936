"""Who may do what: tokens, anonymous callers, pull agents (through the API server: RBAC and the
admission checks decide together)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from fleetkeeper import errors
from fleetkeeper.apiserver.auth import ADMIN, ANONYMOUS, Attributes, Tokens, authorize

from .helpers import AGENT as AGENT_TOKEN
from .helpers import Api

TOKENS = Tokens(admin="root")
TOKENS.add_agent("member1", "agent1")
AGENT = TOKENS.authenticate("Bearer agent1")


def test_tokens_identify_callers() -> None:
    assert TOKENS.authenticate("Bearer root") is ADMIN
    assert TOKENS.authenticate(None) is ANONYMOUS
    assert AGENT.cluster == "member1" and not AGENT.is_admin
    for header in ("Bearer nope", "Basic cm9vdA==", "Bearer "):
        with pytest.raises(errors.Unauthorized):
            TOKENS.authenticate(header)


def test_tokens_survive_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    created = Tokens.load_or_create(path)
    created.add_agent("m2")
    created.save(path)
    again = Tokens.load_or_create(path)
    assert again.admin == created.admin and again.agents == created.agents
    assert path.stat().st_mode & 0o777 == 0o600


CLUSTER, LEASE, WORK = ("cluster.karmada.io", "clusters"), ("coordination.k8s.io", "leases"), \
    ("work.karmada.io", "works")
VERSIONS = {"cluster.karmada.io": "v1alpha1", "coordination.k8s.io": "v1", "work.karmada.io": "v1alpha1",
            "events.k8s.io": "v1", "fleetkeeper.io": "v1alpha1", "policy.karmada.io": "v1alpha1", "": "v1"}
KINDS = {"clusters": "Cluster", "leases": "Lease", "works": "Work", "events": "Event",
         "timelineentries": "TimelineEntry", "propagationpolicies": "PropagationPolicy", "secrets": "Secret"}
OWN_CLUSTER = {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "name": "member1"}


def _path(what: tuple[str, str], namespace: str, name: str, sub: str | None) -> str:
    group, plural = what
    base = f"/api/{VERSIONS[group]}" if not group else f"/apis/{group}/{VERSIONS[group]}"
    scope = f"/namespaces/{namespace}" if namespace else ""
    return base + scope + f"/{plural}" + (f"/{name}" if name else "") + (f"/{sub}" if sub else "")


def _body(what: tuple[str, str], namespace: str, name: str) -> dict[str, Any]:
    group, plural = what
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    obj: dict[str, Any] = {"apiVersion": f"{group}/{VERSIONS[group]}" if group else "v1",
                           "kind": KINDS[plural], "metadata": meta}
    if plural == "clusters":
        obj["spec"] = {"syncMode": "Pull"}
    elif plural == "events":
        obj.update({"involvedObject": OWN_CLUSTER, "reason": "Joined", "message": "m"} if not group else
                   {"regarding": OWN_CLUSTER, "reason": "Joined", "note": "m", "action": "Join",
                    "reportingController": "agent", "reportingInstance": "agent-1",
                    "eventTime": "2026-01-01T00:00:00.000000Z"})
    elif plural == "timelineentries":
        subject = OWN_CLUSTER if name == "own" else {"apiVersion": "apps/v1", "kind": "Deployment",
                                                     "namespace": "default", "name": "web"}
        obj.update({"time": "2026-01-01T00:00:00.000000Z", "action": "ConditionChanged",
                    "message": "Ready=True", "subject": subject})
    return obj


async def _as_agent(api: Api, verb: str, what: tuple[str, str], namespace: str, name: str, sub: str | None,
                    selector: str | None) -> httpx.Response:
    """The request ``verb`` makes, sent with the agent's token."""
    path = _path(what, namespace, "" if verb in ("create", "list", "watch") else name, sub)
    params = {"fieldSelector": selector} if selector else {}
    async with api.client(AGENT_TOKEN) as agent:
        if verb == "watch":
            watch = {**params, "watch": "1", "timeoutSeconds": "1"}
            async with agent.stream("GET", path, params=watch) as response:
                await response.aread()
                return response
        if verb in ("get", "list"):
            return await agent.get(path, params=params)
        if verb == "create":
            return await agent.post(path, json=_body(what, namespace, name))
        if verb == "update":
            return await agent.put(path, json=_body(what, namespace, name))
        if verb == "patch":
            return await agent.patch(path, json={}, headers={"Content-Type": "application/merge-patch+json"})
        return await agent.delete(path)


@pytest.mark.parametrize(("verb", "what", "namespace", "name", "sub", "selector", "allowed"), [
    ("get", CLUSTER, "", "member1", None, None, True),
    ("get", CLUSTER, "", "member2", None, None, False),
    ("patch", CLUSTER, "", "member1", "status", None, True),
    ("update", CLUSTER, "", "member1", None, None, True),
    ("update", CLUSTER, "", "member2", None, None, False),
    ("delete", CLUSTER, "", "member1", None, None, False),
    ("watch", CLUSTER, "", "", None, "metadata.name=member1", True),
    ("list", CLUSTER, "", "", None, None, False),
    ("create", LEASE, "karmada-cluster", "member1", None, None, True),
    ("create", LEASE, "karmada-cluster", "member2", None, None, False),
    ("create", LEASE, "kube-system", "member1", None, None, False),
    ("update", LEASE, "karmada-cluster", "member2", None, None, False),
    ("get", LEASE, "kube-system", "member1", None, None, False),
    ("create", WORK, "karmada-es-member1", "w", None, None, True),
    ("list", WORK, "karmada-es-member1", "", None, None, True),
    ("patch", WORK, "karmada-es-member1", "w", "status", None, True),
    ("create", WORK, "karmada-es-member2", "w", None, None, False),
    ("list", ("policy.karmada.io", "propagationpolicies"), "default", "", None, None, False),
    ("create", CLUSTER, "", "member1", None, None, True),
    ("create", CLUSTER, "", "member2", None, None, False),
    ("create", ("", "events"), "default", "e1", None, None, True),
    ("patch", ("", "events"), "default", "e1", None, None, True),
    ("create", ("", "events"), "karmada-es-member1", "e1", None, None, True),
    ("create", ("events.k8s.io", "events"), "karmada-es-member1", "e1", None, None, True),
    ("create", ("", "events"), "kube-system", "e1", None, None, False),
    ("create", ("", "events"), "karmada-es-member2", "e1", None, None, False),
    ("delete", ("", "events"), "default", "e1", None, None, False),
    ("create", ("fleetkeeper.io", "timelineentries"), "", "own", None, None, True),
    ("create", ("fleetkeeper.io", "timelineentries"), "", "tl-1", None, None, False),
    ("delete", ("fleetkeeper.io", "timelineentries"), "", "tl-1", None, None, False),
    ("get", ("", "secrets"), "karmada-cluster", "member1", None, None, False),
    ("list", ("", "secrets"), "karmada-es-member1", "", None, None, False),
], ids=["reads its cluster", "not another cluster", "writes its cluster status", "updates its cluster spec",
        "not another cluster's spec",
        "cannot delete its cluster", "watches its cluster by name", "cannot list every cluster",
        "creates its lease", "cannot create another lease", "not its lease elsewhere", "not another lease",
        "not a lease elsewhere", "creates works in its namespace",
        "lists works in its namespace", "writes work status", "not works of another cluster",
        "not policies", "registers its own cluster", "cannot register another cluster",
        "records events about its cluster", "counts repeats of its events", "records events about its works",
        "records events.k8s.io events", "no events elsewhere", "no events in another cluster's namespace",
        "cannot delete events", "records on the timeline about its cluster",
        "nothing on the timeline about others", "cannot delete timeline entries",
        "cannot read its cluster's secret", "cannot read secrets in its namespace"])
async def test_a_pull_agent_is_confined(api: Api, verb: str, what: tuple[str, str], namespace: str, name: str,
                                        sub: str | None, selector: str | None, allowed: bool) -> None:
    """Each request made with the agent's token: what RBAC (the default ClusterRole and the
    agent's own grants) and the admission checks let through, and what they refuse."""
    for ns in ("karmada-cluster", "kube-system", "karmada-es-member1", "karmada-es-member2"):
        await api.http.post("/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace",
                                                       "metadata": {"name": ns}})
    response = await _as_agent(api, verb, what, namespace, name, sub, selector)
    if allowed:
        assert response.status_code != 403, response.text
        return
    assert response.status_code == 403, response.text
    message = response.json()["message"]
    assert "system:fleetkeeper:agent:member1" in message or "agent of cluster 'member1'" in message, message


def test_anonymous_callers_need_a_token_and_admins_may_do_anything() -> None:
    attrs = Attributes("get", "cluster.karmada.io", "clusters", "", "member1")
    with pytest.raises(errors.Unauthorized):
        authorize(ANONYMOUS, attrs)
    authorize(ADMIN, Attributes("deletecollection", "work.karmada.io", "works", "x", ""))
