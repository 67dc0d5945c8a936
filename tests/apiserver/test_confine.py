"""A Pull agent's token cannot take over another member, forge records or reach secrets.

Each attack goes through the real API server with the agent's token and must end in a
``4xx`` Status that says why, with nothing stored changed.
"""

from __future__ import annotations

import copy
from typing import Any

import httpx
import pytest

from fleetkeeper import errors
from fleetkeeper.api.scheme import SCHEME
from fleetkeeper.apiserver import confine
from fleetkeeper.apiserver.auth import Tokens

from .helpers import AGENT, Api

CLUSTERS = "/apis/cluster.karmada.io/v1alpha1/clusters"
EVENTS = "/api/v1/namespaces/{ns}/events"
TIMELINE = "/apis/fleetkeeper.io/v1alpha1/timelineentries"
AGENT_USER = Tokens(admin="x", agents={"member1": "t"}).authenticate("Bearer t")
CLUSTER_INFO = SCHEME.lookup("cluster.karmada.io/v1alpha1", "Cluster")
EVENT_INFO = SCHEME.lookup("v1", "Event")
assert CLUSTER_INFO is not None and EVENT_INFO is not None

PULL: dict[str, Any] = {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster",
                        "metadata": {"name": "member1"}, "spec": {"syncMode": "Pull"}}


def _with(base: dict[str, Any], **spec: Any) -> dict[str, Any]:
    obj = copy.deepcopy(base)
    obj["spec"].update(spec)
    return obj


def _event(involved: dict[str, Any], related: dict[str, Any] | None = None) -> dict[str, Any]:
    event: dict[str, Any] = {"apiVersion": "v1", "kind": "Event",
                             "metadata": {"name": "e", "namespace": "default"},
                             "involvedObject": involved, "reason": "R", "message": "m"}
    if related is not None:
        event["related"] = related
    return event


OWN_CLUSTER = {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "name": "member1"}
OWN_WORK = {"apiVersion": "work.karmada.io/v1alpha1", "kind": "Work", "namespace": "karmada-es-member1",
            "name": "w"}
OTHER_WORK = {**OWN_WORK, "namespace": "karmada-es-member2"}
IN_ITS_NAMESPACE = {"name": "e", "namespace": "karmada-es-member1"}
TEMPLATE = {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default", "name": "web"}


@pytest.mark.parametrize(("new", "old", "subresource", "field"), [
    (PULL, None, None, None),
    (_with(PULL, region="eu", provider="p", zones=["a"]), PULL, None, None),
    (_with(PULL, syncMode="Push"), None, None, "spec.syncMode"),
    (_with(PULL, apiEndpoint="https://127.0.0.1:1"), None, None, "spec.apiEndpoint"),
    (_with(PULL, secretRef={"namespace": "karmada-cluster", "name": "member2"}), None, None,
     "spec.secretRef"),
    (_with(PULL, impersonatorSecretRef={"namespace": "k", "name": "n"}), None, None,
     "spec.impersonatorSecretRef"),
    (_with(PULL, insecureSkipTLSVerification=True), None, None, "spec.insecureSkipTLSVerification"),
    (_with(PULL, proxyURL="http://127.0.0.1:9"), None, None, "spec.proxyURL"),
    (_with(PULL, proxyHeader={"a": "b"}), None, None, "spec.proxyHeader"),
    (_with(PULL, apiEndpoint="https://127.0.0.1:2"), _with(PULL, apiEndpoint="https://127.0.0.1:1"), None,
     "spec.apiEndpoint"),
    (_with(PULL, apiEndpoint="https://127.0.0.1:1"), _with(PULL, apiEndpoint="https://127.0.0.1:1"), None,
     None),
    (_with(PULL, taints=[]), _with(PULL, taints=[{"key": "k", "effect": "NoExecute"}]), None, "spec.taints"),
    (PULL, _with(PULL, syncMode="Push"), None, "spec.syncMode"),
    (PULL, _with(PULL, syncMode="Push"), "status", "spec.syncMode"),
    (PULL, PULL, "status", None),
    ({**PULL, "metadata": {"name": "member1", "finalizers": ["x.io/hold"]}}, PULL, None,
     "metadata.finalizers"),
], ids=["registers as Pull", "describes its cluster", "not as Push", "no endpoint to call",
        "no other cluster's secret", "no impersonator secret", "no skipped TLS checks", "no proxy",
        "no proxy header",
        "cannot move the endpoint", "keeps the admin's endpoint", "cannot lift the plane's taints",
        "cannot turn a Push cluster into its own", "reports no status of a Push cluster",
        "reports its own status", "cannot hold its cluster with a finalizer"])
def test_what_an_agent_may_write_in_its_cluster(new: dict[str, Any], old: dict[str, Any] | None,
                                                subresource: str | None, field: str | None) -> None:
    if field is None:
        confine.check_write(AGENT_USER, CLUSTER_INFO, new, old, subresource=subresource)
        return
    with pytest.raises(errors.Forbidden) as caught:
        confine.check_write(AGENT_USER, CLUSTER_INFO, new, old, subresource=subresource)
    assert field in caught.value.message


@pytest.mark.parametrize(("event", "old", "allowed"), [
    (_event(OWN_CLUSTER), None, True),
    (_event(OWN_WORK), None, True),
    (_event(OWN_WORK, related=OWN_CLUSTER), None, True),
    (_event({**OWN_CLUSTER, "name": "member2"}), None, False),
    (_event(OTHER_WORK), None, False),
    (_event(TEMPLATE), None, False),
    (_event(OWN_WORK, related=TEMPLATE), None, False),
    (_event(OWN_CLUSTER), _event(TEMPLATE), False),
    ({"apiVersion": "events.k8s.io/v1", "kind": "Event", "regarding": OWN_WORK, "metadata": IN_ITS_NAMESPACE},
     None, True),
    ({"apiVersion": "events.k8s.io/v1", "kind": "Event", "regarding": TEMPLATE, "metadata": IN_ITS_NAMESPACE,
      "involvedObject": OWN_WORK}, None, False),
], ids=["about its cluster", "about its work", "related to its cluster", "not about another cluster",
        "not about another cluster's work", "not about a template", "not related to a template",
        "cannot rewrite the plane's event", "events.k8s.io about its work", "regarding is what counts"])
def test_what_an_agent_may_record(event: dict[str, Any], old: dict[str, Any] | None, allowed: bool) -> None:
    if allowed:
        confine.check_write(AGENT_USER, EVENT_INFO, event, old)
        return
    with pytest.raises(errors.Forbidden, match="records Events only about"):
        confine.check_write(AGENT_USER, EVENT_INFO, event, old)


def test_the_admin_is_not_confined() -> None:
    admin = Tokens(admin="x").authenticate("Bearer x")
    confine.check_write(admin, CLUSTER_INFO, _with(PULL, syncMode="Push", apiEndpoint="https://h"), None)
    confine.check_write(None, EVENT_INFO, _event(TEMPLATE), None)


def _status(response: httpx.Response) -> dict[str, Any]:
    body: dict[str, Any] = response.json()
    assert body["kind"] == "Status" and body["message"], body
    return body


async def test_an_agent_cannot_point_the_plane_at_its_listener_with_anothers_secret(api: Api) -> None:
    secret = {"apiVersion": "v1", "kind": "Secret", "stringData": {"token": "member2-credentials"},
              "metadata": {"name": "member2", "namespace": "karmada-cluster"}}
    assert (await api.http.post("/api/v1/namespaces/karmada-cluster/secrets", json=secret)).status_code == 201
    stolen = {"namespace": "karmada-cluster", "name": "member2"}
    attack = _with(PULL, syncMode="Push", apiEndpoint="https://127.0.0.1:9443",
                   insecureSkipTLSVerification=True, secretRef=stolen)
    async with api.client(AGENT) as agent:
        refused = await agent.post(CLUSTERS, json=attack)
        assert refused.status_code == 403 and "spec.syncMode" in _status(refused)["message"]
        attack["spec"]["syncMode"] = "Pull"
        refused = await agent.post(CLUSTERS, json=attack)
        assert refused.status_code == 403 and "calls out" in _status(refused)["message"]
        assert (await api.http.get(f"{CLUSTERS}/member1")).status_code == 404
        # it registers as Pull, then tries to add the endpoint by update, patch and apply
        created = await agent.post(CLUSTERS, json=PULL)
        assert created.status_code == 201, created.text
        stored = created.json()
        sneaky = {**stored, "spec": {**stored["spec"], "apiEndpoint": "https://127.0.0.1:9443",
                                     "secretRef": {"namespace": "karmada-cluster", "name": "member2"}}}
        assert (await agent.put(f"{CLUSTERS}/member1", json=sneaky)).status_code == 403
        patch = {"spec": {"secretRef": {"namespace": "karmada-cluster", "name": "member2"}}}
        patched = await agent.patch(f"{CLUSTERS}/member1", json=patch,
                                    headers={"Content-Type": "application/merge-patch+json"})
        assert patched.status_code == 403
        status_patch = await agent.patch(f"{CLUSTERS}/member1/status", json=patch,
                                         headers={"Content-Type": "application/merge-patch+json"})
        assert status_patch.status_code in (200, 403)
        assert (await agent.get("/api/v1/namespaces/karmada-cluster/secrets/member2")).status_code == 403
    now = (await api.http.get(f"{CLUSTERS}/member1")).json()
    assert "secretRef" not in now["spec"] and "apiEndpoint" not in now["spec"]
    assert now["metadata"]["resourceVersion"] == stored["metadata"]["resourceVersion"] or \
        now["spec"] == stored["spec"]


async def test_an_agent_cannot_take_over_a_push_cluster(api: Api) -> None:
    push = _with(PULL, syncMode="Push", apiEndpoint="https://127.0.0.1:6443")
    stored = (await api.http.post(CLUSTERS, json=push)).json()
    async with api.client(AGENT) as agent:
        moved = {**stored, "spec": {**stored["spec"], "apiEndpoint": "https://127.0.0.1:9443"}}
        assert (await agent.put(f"{CLUSTERS}/member1", json=moved)).status_code == 403
        ready = {**stored, "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Forged",
                                                      "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}
        assert (await agent.put(f"{CLUSTERS}/member1/status", json=ready)).status_code == 403
    after = (await api.http.get(f"{CLUSTERS}/member1")).json()
    assert after["metadata"]["resourceVersion"] == stored["metadata"]["resourceVersion"]


async def test_an_agent_records_only_about_its_own_objects(api: Api) -> None:
    async with api.client(AGENT) as agent:
        ok = await agent.post(EVENTS.format(ns="default"), json=_event(OWN_CLUSTER))
        assert ok.status_code == 201, ok.text
        forged = await agent.post(EVENTS.format(ns="default"),
                                  json={**_event(TEMPLATE), "metadata": {"name": "f"}})
        assert forged.status_code == 403 and "involvedObject" in _status(forged)["message"]
        entry = {"apiVersion": "fleetkeeper.io/v1alpha1", "kind": "TimelineEntry", "metadata": {"name": "t"},
                 "time": "2026-01-01T00:00:00.000000Z", "action": "ConditionChanged",
                 "message": "Ready=False (ClusterNotReachable)", "subject": OWN_CLUSTER}
        seen = await agent.post(TIMELINE, json=entry)
        assert seen.status_code == 201, seen.text
        forged = await agent.post(TIMELINE, json={**entry, "metadata": {"name": "f"}, "subject": TEMPLATE})
        assert forged.status_code == 403 and "subject" in _status(forged)["message"]
        other = await agent.post(TIMELINE, json={**entry, "metadata": {"name": "o"}, "subject": OTHER_WORK})
        assert other.status_code == 403
        changed = await agent.patch(TIMELINE + "/t", json={"message": "nothing happened"},
                                    headers={"Content-Type": "application/merge-patch+json"})
        assert changed.status_code == 403
        assert (await agent.delete(TIMELINE + "/t")).status_code == 403
    plane = (await api.http.post(EVENTS.format(ns="default"),
                                 json={**_event(TEMPLATE), "metadata": {"name": "plane"}})).json()
    async with api.client(AGENT) as agent:
        rewrite = {"involvedObject": OWN_CLUSTER, "message": "nothing happened"}
        answer = await agent.patch(EVENTS.format(ns="default") + "/plane", json=rewrite,
                                   headers={"Content-Type": "application/merge-patch+json"})
        assert answer.status_code == 403
    kept = (await api.http.get(EVENTS.format(ns="default") + "/plane")).json()
    assert kept["message"] == plane["message"] and kept["involvedObject"]["kind"] == "Deployment"


@pytest.mark.parametrize(("event", "allowed"), [
    (_event(OWN_WORK), True), (_event(TEMPLATE), False), (_event(OWN_CLUSTER, related=TEMPLATE), False),
], ids=["about its work", "about a template", "related to a template"])
def test_an_agent_keeps_to_itself_what_the_plane_would_refuse(event: dict[str, Any], allowed: bool) -> None:
    assert confine.record_allowed("member1", event) is allowed
