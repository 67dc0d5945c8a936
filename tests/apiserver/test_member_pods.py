"""A member's pods through its API server: kubectl's columns (``-o wide`` too) for the kinds kubectl
prints, the field selectors kubectl describe uses, ``pods/NAME/log`` (container, tailLines,
timestamps, follow) and ``exec``/``attach`` answered on the error channel, over a memory store."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import orjson
import pytest

from fleetkeeper.api.scheme import GroupKind
from fleetkeeper.apiserver.asgi_socket import AsgiDialer
from fleetkeeper.apiserver.proxy_ws import Closed, Refused
from fleetkeeper.clock import VirtualClock
from fleetkeeper.store import Store

from .member_api import TABLE, TOKEN, member_api

POD = GroupKind("", "Pod")
CREATED = "2026-01-01T00:00:00Z"
PODS = "/api/v1/namespaces/default/pods"
TEMPLATE = {"metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "main", "image": "app:v1"}]}}
SELECTOR = {"matchLabels": {"app": "web"}}
V5 = ("v5.channel.k8s.io", "v4.channel.k8s.io")


def _meta(name: str, namespace: str | None = "default") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "creationTimestamp": CREATED}
    if namespace is not None:
        meta["namespace"] = namespace
    return meta


def _pod(name: str, node: str, *, ready: bool = True, restarts: int = 0,
         terminated: bool = False) -> dict[str, Any]:
    state: dict[str, Any] = {"terminated": {"reason": "Completed", "exitCode": 0,
                                            "finishedAt": "2026-01-01T00:05:00Z"}} if terminated \
        else {"running": {"startedAt": "2026-01-01T00:00:02Z"}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {**_meta(name), "labels": {"app": "web"}},
            "spec": {"nodeName": node, "containers": [{"name": "main", "image": "app:v1"}]},
            "status": {"phase": "Running", "podIP": "10.244.1.5", "startTime": "2026-01-01T00:00:01Z",
                       "conditions": [{"type": "Ready", "status": "True" if ready else "False",
                                       "lastTransitionTime": "2026-01-01T00:00:03Z"}],
                       "containerStatuses": [{"name": "main", "ready": ready, "restartCount": restarts,
                                              "state": state}]}}


def _objects() -> list[dict[str, Any]]:
    workload = {"replicas": 2, "selector": SELECTOR, "template": TEMPLATE}
    return [
        {"apiVersion": "v1", "kind": "Node", "metadata": _meta("node-1", None),
         "status": {"nodeInfo": {"kubeletVersion": "v1.31.0", "osImage": "Simulated Linux",
                                 "kernelVersion": "6.1.0", "containerRuntimeVersion": "containerd://1.7"},
                    "addresses": [{"type": "InternalIP", "address": "172.18.0.2"}],
                    "conditions": [{"type": "Ready", "status": "True"}]}},
        _pod("web-1", "node-1"), _pod("web-2", "node-2", ready=False, restarts=3),
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": _meta("web"), "spec": workload,
         "status": {"readyReplicas": 2, "updatedReplicas": 2, "availableReplicas": 2}},
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": _meta("web-5d8f"), "spec": workload,
         "status": {"replicas": 2, "readyReplicas": 2}},
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": _meta("db"), "spec": workload,
         "status": {"readyReplicas": 1}},
        {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": _meta("agent"),
         "spec": {"selector": SELECTOR, "template": TEMPLATE},
         "status": {"desiredNumberScheduled": 3, "currentNumberScheduled": 3, "numberReady": 3}},
        {"apiVersion": "batch/v1", "kind": "Job", "metadata": _meta("once"),
         "spec": {"template": TEMPLATE, "completions": 1}, "status": {"succeeded": 1}},
        {"apiVersion": "v1", "kind": "Service", "metadata": _meta("web"),
         "spec": {"type": "ClusterIP", "clusterIP": "10.96.0.10", "selector": {"app": "web"},
                  "ports": [{"port": 80, "protocol": "TCP"}]}},
        *({"apiVersion": "v1", "kind": "Event", "metadata": _meta(f"web-{n}.1"), "reason": "Started",
           "type": "Normal", "message": "Started container main", "count": 1,
           "involvedObject": {"kind": "Pod", "namespace": "default", "name": f"web-{n}"},
           "source": {"component": "kubelet"}, "lastTimestamp": CREATED} for n in (1, 2)),
    ]


async def _seed(store: Store) -> None:
    for obj in _objects():
        await store.create(obj)


def _columns(table: dict[str, Any]) -> list[str]:
    return [c["name"] for c in table["columnDefinitions"]]


def _rows(table: dict[str, Any]) -> list[dict[str, Any]]:
    return [dict(zip(_columns(table), row["cells"], strict=True)) for row in table["rows"]]


def test_kubectl_columns_with_the_wide_ones_for_the_kinds_kubectl_prints() -> None:
    clock = VirtualClock()
    paths = {"Node": "/api/v1/nodes", "Pod": PODS,
             "Deployment": "/apis/apps/v1/namespaces/default/deployments",
             "ReplicaSet": "/apis/apps/v1/namespaces/default/replicasets",
             "StatefulSet": "/apis/apps/v1/namespaces/default/statefulsets",
             "DaemonSet": "/apis/apps/v1/namespaces/default/daemonsets",
             "Job": "/apis/batch/v1/namespaces/default/jobs",
             "Service": "/api/v1/namespaces/default/services",
             "Event": "/api/v1/namespaces/default/events"}

    async def main() -> dict[str, dict[str, Any]]:
        async with member_api(clock) as member:
            await _seed(member.store)
            return {kind: (await member.http.get(path, headers=TABLE)).json() for kind, path in paths.items()}

    got = clock.run(main())
    assert _columns(got["Node"]) == ["Name", "Status", "Roles", "Age", "Version", "Internal-IP",
                                     "External-IP", "OS-Image", "Kernel-Version", "Container-Runtime"]
    assert _rows(got["Node"])[0]["Internal-IP"] == "172.18.0.2"
    assert _columns(got["Pod"]) == ["Name", "Ready", "Status", "Restarts", "Age", "IP", "Node",
                                    "Nominated Node", "Readiness Gates"]
    assert [(p["Ready"], p["IP"], p["Node"]) for p in _rows(got["Pod"])] == [
        ("1/1", "10.244.1.5", "node-1"), ("0/1", "10.244.1.5", "node-2")]
    wide = ["Containers", "Images", "Selector"]
    assert _columns(got["Deployment"]) == ["Name", "Ready", "Up-to-date", "Available", "Age", *wide]
    assert _rows(got["Deployment"])[0] | {"Age": None} == {
        "Name": "web", "Ready": "2/2", "Up-to-date": 2, "Available": 2, "Age": None, "Containers": "main",
        "Images": "app:v1", "Selector": "app=web"}
    assert _columns(got["ReplicaSet"]) == ["Name", "Desired", "Current", "Ready", "Age", *wide]
    assert _columns(got["StatefulSet"]) == ["Name", "Ready", "Age", "Containers", "Images"]
    assert _columns(got["DaemonSet"]) == ["Name", "Desired", "Current", "Ready", "Up-to-date", "Available",
                                          "Node Selector", "Age", *wide]
    assert _columns(got["Job"]) == ["Name", "Status", "Completions", "Duration", "Age", *wide]
    assert _columns(got["Service"]) == ["Name", "Type", "Cluster-IP", "External-IP", "Port(s)", "Age",
                                        "Selector"]
    assert _rows(got["Service"])[0]["Port(s)"] == "80/TCP"
    assert _columns(got["Event"])[:4] == ["Last Seen", "Type", "Reason", "Object"]
    assert {c["priority"] for c in got["Pod"]["columnDefinitions"][5:]} == {1}


def test_field_selectors_kubectl_describe_uses_and_unsupported_ones_refused() -> None:
    clock = VirtualClock()
    about = "involvedObject.name=web-1,involvedObject.namespace=default,involvedObject.kind=Pod"

    async def main() -> tuple[list[str], list[str], int, str]:
        async with member_api(clock) as member:
            await _seed(member.store)
            events = (await member.http.get("/api/v1/namespaces/default/events",
                                            params={"fieldSelector": about})).json()["items"]
            pods = (await member.http.get("/api/v1/pods", params={"fieldSelector": "spec.nodeName=node-2"})
                    ).json()["items"]
            bad = await member.http.get("/api/v1/pods", params={"fieldSelector": "spec.containers=x"})
            return ([e["metadata"]["name"] for e in events], [p["metadata"]["name"] for p in pods],
                    bad.status_code, bad.json()["message"])

    events, pods, code, message = clock.run(main())
    assert events == ["web-1.1"] and pods == ["web-2"]
    assert code == 400 and "field label not supported: spec.containers" in message


def test_a_pods_log_is_told_by_the_member_with_kubernetes_query_parameters() -> None:
    clock = VirtualClock()

    async def main() -> dict[str, Any]:
        async with member_api(clock) as member:
            await _seed(member.store)
            waiting = _pod("starting", "node-1")
            waiting["status"]["containerStatuses"][0]["state"] = {"waiting": {"reason": "ContainerCreating"}}
            await member.store.create(waiting)
            log = f"{PODS}/web-2/log"
            http = member.http
            return {
                "plain": (await http.get(log)).text,
                "tail": (await http.get(log, params={"tailLines": "1", "timestamps": "true"})).text,
                "none": (await http.get(log, params={"tailLines": "0"})).text,
                "wrong": (await http.get(log, params={"container": "nope"})).json()["message"],
                "waiting": (await http.get(f"{PODS}/starting/log")).json()["message"],
                "missing": (await http.get(f"{PODS}/ghost/log")).status_code,
                "bad_tail": (await http.get(log, params={"tailLines": "-1"})).status_code,
                "anonymous": (await http.get(log, headers={"Authorization": ""})).status_code,
                "post": (await http.post(f"{PODS}/web-2/exec")).status_code,
            }

    got = clock.run(main())
    crash = "container main exited with code 1 (Error): its workload is crashed (fault crashWorkload)"
    assert got["plain"] == ("container main started (image app:v1)\n"
                            f"{crash}; restart 1, back-off 10s\n{crash}; restart 2, back-off 20s\n"
                            f"{crash}; restart 3, back-off 40s\n")
    assert got["tail"] == f"{crash}; restart 3, back-off 40s\n" and got["none"] == ""
    assert got["wrong"] == "container nope is not valid for pod web-2"
    assert got["waiting"] == 'container "main" in pod "starting" is waiting to start: ContainerCreating'
    assert (got["missing"], got["bad_tail"], got["anonymous"], got["post"]) == (404, 400, 401, 400)


def test_following_a_log_streams_new_lines_until_the_container_terminates() -> None:
    clock = VirtualClock()

    async def main() -> list[str]:
        async with member_api(clock) as member:
            await member.store.create(_pod("web-1", "node-1"))
            seen: list[str] = []
            params = {"follow": "true", "timestamps": "true"}
            async with member.http.stream("GET", f"{PODS}/web-1/log", params=params) as answer:
                lines = answer.aiter_lines()
                seen += [await anext(lines), await anext(lines)]
                crashed = _pod("web-1", "node-1", ready=False, restarts=1)
                crashed["metadata"] = (await member.store.get(POD, "default", "web-1"))["metadata"]
                updated = await member.store.update(crashed, subresource="status")
                seen.append(await asyncio.wait_for(anext(lines), 10))
                done = _pod("web-1", "node-1", ready=False, restarts=1, terminated=True)
                done["metadata"] = updated["metadata"]
                await member.store.update(done, subresource="status")
                seen.append(await asyncio.wait_for(anext(lines), 10))
                seen += [line async for line in lines]  # the stream ends with the container
            return seen

    seen = clock.run(main())
    assert seen[:2] == ["2026-01-01T00:00:01Z container main started (image app:v1)",
                        "2026-01-01T00:00:03Z container main is ready"]
    assert seen[2].endswith("restart 1, back-off 10s") and not seen[2].startswith("2026")
    assert seen[3:] == ["2026-01-01T00:05:00Z container main terminated: Completed (exit code 0)"]


def test_exec_and_attach_answer_on_the_error_channel_and_refusals_come_before_the_upgrade() -> None:
    clock = VirtualClock()

    async def main() -> tuple[str | None, bytes, bytes, list[tuple[int, bytes]]]:
        async with member_api(clock) as member:
            await _seed(member.store)
            unscheduled = _pod("pending", "")
            await member.store.create(unscheduled)
            dialer = AsgiDialer(member.app, "member.test")
            auth = (("Authorization", f"Bearer {TOKEN}"),)
            session = await dialer.dial(f"{PODS}/web-1/exec?command=env&stdout=true", headers=auth,
                                        subprotocols=V5)
            frame = await session.receive()
            assert isinstance(frame, bytes)
            with pytest.raises(Closed):
                await session.receive()
            attach = await dialer.dial(f"{PODS}/web-1/attach?stdout=true", headers=auth, subprotocols=V5[1:])
            attached = await attach.receive()
            assert isinstance(attached, bytes)
            refusals = []
            for target, headers, offered in (
                    (f"{PODS}/web-1/exec?command=env&container=sidecar", auth, V5),
                    (f"{PODS}/ghost/exec?command=env", auth, V5),
                    (f"{PODS}/web-1/exec?command=env", auth, ("channel.k8s.io",)),
                    (f"{PODS}/web-1/exec", auth, V5),
                    (f"{PODS}/pending/exec?command=env", auth, V5),
                    (f"{PODS}/web-1/exec?command=env", (), V5),
                    (f"{PODS}/web-1/portforward", auth, V5)):
                with pytest.raises(Refused) as refused:
                    await dialer.dial(target, headers=headers, subprotocols=offered)
                refusals.append((refused.value.status, refused.value.body))
            return session.subprotocol, frame, attached, refusals

    subprotocol, frame, attached, refusals = clock.run(main())
    assert subprotocol == "v5.channel.k8s.io" and frame[0] == 3
    status = orjson.loads(frame[1:])
    assert (status["status"], status["reason"], status["code"]) == ("Failure", "InternalError", 500)
    assert status["message"] == ("Internal error occurred: error executing command in container: container "
                                 "'main' of simulated pod default/web-1 runs no processes, "
                                 "so 'env' cannot be run")
    assert b"nothing to attach to" in attached and attached[0] == 3
    assert [code for code, _ in refusals] == [400, 404, 400, 400, 400, 401, 404]
    assert b"container sidecar is not valid" in refusals[0][1]
    assert b"none of the offered protocols" in refusals[2][1]
    assert b"at least 1 command" in refusals[3][1]
    assert b"does not have a host assigned" in refusals[4][1]
    assert json.loads(refusals[5][1])["reason"] == "Unauthorized"
