"""The cluster proxy to the simulated members a process serves in-process, on the virtual clock:
a watch streams through it, the fault-injection API stays out of reach, a member made down
answers 503 naming the cluster and a member this process does not run is 503 too."""

from __future__ import annotations

import httpx
import orjson

import fleetkeeper.api  # noqa: F401  (registers every kind)
from fleetkeeper.apiserver import InProcessTransport, build_app
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
