"""The cluster proxy to the simulated members a process serves in-process, on the virtual clock:
a watch streams through it, the fault-injection API stays out of reach, a member made down
answers 503 naming the cluster at once, a black hole only after the member's call timeout, and a
member this process does not run is 503 too; exec reaches the member's exec endpoint, which says
on the error channel that it runs nothing; a CRD given to a member is served there, not by the
plane."""

from __future__ import annotations

import httpx
import orjson
import pytest

import fleetkeeper.api  # noqa: F401  (registers every kind)
from fleetkeeper.api.scheme import SCHEME, GroupKind
from fleetkeeper.apiserver import InProcessTransport, build_app
from fleetkeeper.apiserver.asgi_socket import AsgiDialer
from fleetkeeper.apiserver.proxy_ws import Closed, Refused
from fleetkeeper.clock import VirtualClock
from fleetkeeper.cmd.member_proxy import SimulatedMembers
from fleetkeeper.members.simulated import SimulatedFleet
from fleetkeeper.store import open_store

PROXY = "/apis/cluster.karmada.io/v1alpha1/clusters/{}/proxy"
NGINX = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "nginx", "namespace": "default"},
         "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "nginx"}},
                  "template": {"metadata": {"labels": {"app": "nginx"}},
                               "spec": {"containers": [{"name": "nginx", "image": "nginx"}]}}}}


def _cluster(name: str) -> dict[str, object]:
    return {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": name},
            "spec": {"syncMode": "Push", "apiEndpoint": f"simulated://{name}"}}


def test_a_simulated_member_is_proxied_in_process() -> None:
    clock = VirtualClock()

    async def main() -> tuple[list[str], int, int, str, int]:
        store = open_store("memory://", clock=clock)
        app = build_app(store, clock=clock)
        app.proxy.transports.append(SimulatedMembers(clock))
        member = SimulatedFleet.for_clock(clock).open("member1", pod_startup=1.0)
        http = httpx.AsyncClient(transport=InProcessTransport(app), base_url="http://plane.test")
        try:
            for name in ("member1", "ghost"):
                assert (await http.post("/apis/cluster.karmada.io/v1alpha1/clusters",
                                        json=_cluster(name))).status_code == 201
            phases: list[str] = []
            async with http.stream("GET", PROXY.format("member1") + "/api/v1/namespaces/default/pods",
                                   params={"watch": "true"}) as watch:
                await member.apply(NGINX)
                lines = watch.aiter_lines()
                while "Running" not in phases:
                    phases.append(orjson.loads(await anext(lines))["object"]["status"]["phase"])
            admin = (await http.get(PROXY.format("member1") + "/admin/state")).status_code
            ghost = (await http.get(PROXY.format("ghost") + "/api")).status_code
            member.down()
            down = await http.get(PROXY.format("member1") + "/api")
            return phases, admin, ghost, down.json()["message"], down.status_code
        finally:
            await http.aclose()
            app.close()
            await member.close()
            await store.close()

    phases, admin, ghost, message, code = clock.run(main())
    assert phases == ["Pending", "Running"]
    assert admin == 404 and ghost == 503
    assert code == 503 and message.startswith('cluster "member1" is unreachable: ConnectError')


def test_exec_through_the_proxy_answers_on_the_error_channel_that_the_container_runs_nothing() -> None:
    clock = VirtualClock()
    v5 = ("v5.channel.k8s.io", "v4.channel.k8s.io")

    async def main() -> tuple[str | None, bytes, list[tuple[int, bytes]]]:
        store = open_store("memory://", clock=clock)
        app = build_app(store, clock=clock)
        app.proxy.transports.append(SimulatedMembers(clock))
        member = SimulatedFleet.for_clock(clock).open("member1", pod_startup=1.0)
        http = httpx.AsyncClient(transport=InProcessTransport(app), base_url="http://plane.test")
        plane = AsgiDialer(app, "plane.test")
        pods = PROXY.format("member1") + "/api/v1/namespaces/default/pods"
        try:
            assert (await http.post("/apis/cluster.karmada.io/v1alpha1/clusters",
                                    json=_cluster("member1"))).status_code == 201
            await member.apply(NGINX)
            await clock.sleep(5)
            listed = (await http.get(pods)).json()
            name = listed["items"][0]["metadata"]["name"]
            session = await plane.dial(f"{pods}/{name}/exec?command=env&stdout=true", headers=(),
                                       subprotocols=v5)
            frame = await session.receive()
            assert isinstance(frame, bytes)
            with pytest.raises(Closed):
                await session.receive()
            refusals = []
            for target, offered in ((f"{pods}/{name}/exec?command=env&container=sidecar", v5),
                                    (f"{pods}/nope/exec?command=env", v5),
                                    (f"{pods}/{name}/exec?command=env", ("channel.k8s.io",)),
                                    (f"{pods}/{name}/exec", v5)):
                with pytest.raises(Refused) as refused:
                    await plane.dial(target, headers=(), subprotocols=offered)
                refusals.append((refused.value.status, refused.value.body))
            member.down()
            with pytest.raises(Refused) as down:
                await plane.dial(f"{pods}/{name}/exec?command=env", headers=(), subprotocols=v5)
            refusals.append((down.value.status, down.value.body))
            return session.subprotocol, frame, refusals
        finally:
            await http.aclose()
            app.close()
            await member.close()
            await store.close()

    subprotocol, frame, refusals = clock.run(main())
    assert subprotocol == "v5.channel.k8s.io" and frame[0] == 3
    status = orjson.loads(frame[1:])
    assert (status["status"], status["reason"], status["code"]) == ("Failure", "InternalError", 500)
    assert status["message"].startswith("Internal error occurred: error executing command in container: "
                                        "container 'nginx' of simulated pod default/nginx-")
    assert status["message"].endswith("runs no processes, so 'env' cannot be run")
    assert [code for code, _ in refusals] == [400, 404, 400, 400, 503]
    assert b"container sidecar is not valid" in refusals[0][1]
    assert b"none of the offered protocols" in refusals[2][1]
    assert b"at least 1 command" in refusals[3][1]
    assert b'cluster \\"member1\\" is unreachable' in refusals[4][1]


def test_a_crd_given_to_a_member_through_the_proxy_is_served_there_and_not_by_the_plane() -> None:
    clock = VirtualClock()
    schema = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "lamps.proxied.example.io"},
           "spec": {"group": "proxied.example.io", "scope": "Namespaced",
                    "names": {"kind": "Lamp", "plural": "lamps"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": schema}]}}
    lamp = {"apiVersion": "proxied.example.io/v1", "kind": "Lamp",
            "metadata": {"name": "desk", "namespace": "default"}, "spec": {"watts": 40}}
    lamps = "/apis/proxied.example.io/v1/namespaces/default/lamps"

    async def main() -> tuple[int, int, list[str], int, list[str]]:
        store = open_store("memory://", clock=clock)
        app = build_app(store, clock=clock)
        app.proxy.transports.append(SimulatedMembers(clock))
        member = SimulatedFleet.for_clock(clock).open("member1")
        http = httpx.AsyncClient(transport=InProcessTransport(app), base_url="http://plane.test")
        member1 = PROXY.format("member1")
        try:
            assert (await http.post("/apis/cluster.karmada.io/v1alpha1/clusters",
                                    json=_cluster("member1"))).status_code == 201
            given = (await http.post(member1 + "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                                     json=crd)).status_code
            made = (await http.post(member1 + lamps, json=lamp)).status_code
            items = (await http.get(member1 + lamps)).json().get("items", [])
            listed = [i["metadata"]["name"] for i in items]
            plane = (await http.get(lamps)).status_code
            groups = [g["name"] for g in (await http.get("/apis")).json()["groups"]]
            return given, made, listed, plane, groups
        finally:
            await http.aclose()
            app.close()
            await member.close()
            await store.close()

    given, made, listed, plane, groups = clock.run(main())
    assert (given, made, listed) == (201, 201, ["desk"])
    assert plane == 404 and "proxied.example.io" not in groups
    assert SCHEME.by_group_kind(GroupKind("proxied.example.io", "Lamp")) is None
    assert SCHEME.by_plural("proxied.example.io", "v1", "lamps") is None


def test_a_black_holed_member_leaves_a_proxied_request_unanswered_until_its_call_timeout() -> None:
    clock = VirtualClock()

    async def main() -> tuple[float, int, str]:
        store = open_store("memory://", clock=clock)
        app = build_app(store, clock=clock)
        app.proxy.transports.append(SimulatedMembers(clock))
        member = SimulatedFleet.for_clock(clock).open("member1", call_timeout=7.0)
        http = httpx.AsyncClient(transport=InProcessTransport(app), base_url="http://plane.test")
        try:
            assert (await http.post("/apis/cluster.karmada.io/v1alpha1/clusters",
                                    json=_cluster("member1"))).status_code == 201
            member.blackhole()
            started = clock.monotonic()
            answer = await http.get(PROXY.format("member1") + "/api")  # discovery too, not only the store
            return clock.monotonic() - started, answer.status_code, answer.json()["message"]
        finally:
            await http.aclose()
            app.close()
            await member.close()
            await store.close()

    waited, code, message = clock.run(main())
    assert waited == 7.0 and code == 503
    assert message == ('cluster "member1" is unreachable: ReadTimeout: '
                       "member cluster 'member1': no answer within 7s")
