"""The cluster proxy to a member over HTTPS: ``fleetkeeper member-sim`` in its own process, joined
as Karmada joins a real cluster (``apiEndpoint`` and a ``secretRef`` Secret with its token and CA).

The plane reaches it with those credentials — the member refuses the plane's admin token, so an
answer proves they were used — and says so, naming the cluster, when the member is down. A
WebSocket upgrade (``kubectl exec``) is dialed the same way: the member's own refusal comes back.
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from apiserver.helpers import ADMIN, Api, close_api, open_api
from fleetkeeper.apiserver.asgi_socket import AsgiDialer
from fleetkeeper.apiserver.proxy_ws import Refused
from members.member_sim import MemberSim

PROXY = "/apis/cluster.karmada.io/v1alpha1/clusters/{}/proxy"
ADMIN_HEADER = (("Authorization", f"Bearer {ADMIN}"),)


@pytest.fixture
def sim(tmp_path: Path) -> Iterator[MemberSim]:
    started = MemberSim(tmp_path / "sim1", "sim1").wait()
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture
async def plane(sim: MemberSim) -> AsyncIterator[Api]:
    api = await open_api()
    try:
        data = {"token": base64.b64encode(sim.token.encode()).decode(),
                "caBundle": base64.b64encode(sim.ca.read_bytes()).decode()}
        secret = {"apiVersion": "v1", "kind": "Secret",
                  "metadata": {"name": "sim1", "namespace": "karmada-cluster"}, "data": data}
        cluster = {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster",
                   "metadata": {"name": "sim1"},
                   "spec": {"syncMode": "Push", "apiEndpoint": sim.url,
                            "secretRef": {"namespace": "karmada-cluster", "name": "sim1"}}}
        stored = await api.http.post("/api/v1/namespaces/karmada-cluster/secrets", json=secret)
        assert stored.status_code == 201, stored.text
        joined = await api.http.post("/apis/cluster.karmada.io/v1alpha1/clusters", json=cluster)
        assert joined.status_code == 201, joined.text
        yield api
    finally:
        await close_api(api)


async def test_the_proxy_reaches_an_https_member_with_the_clusters_own_credentials(
        plane: Api, sim: MemberSim) -> None:
    made = await plane.http.post(PROXY.format("sim1") + "/api/v1/namespaces/default/configmaps", json={
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "seen"}, "data": {"k": "v"}})
    assert made.status_code == 201, made.text
    listed = await plane.http.get(PROXY.format("sim1") + "/api/v1/namespaces/default/configmaps",
                                  params={"fieldSelector": "metadata.name=seen"})
    assert listed.status_code == 200 and [i["data"] for i in listed.json()["items"]] == [{"k": "v"}]
    exec_path = PROXY.format("sim1") + "/api/v1/namespaces/default/pods/nope/exec?command=env"
    upgrade = AsgiDialer(plane.app, "plane.test")
    with pytest.raises(Refused) as missing:  # the member's own answer: its credentials got past its 401
        await upgrade.dial(exec_path, headers=ADMIN_HEADER, subprotocols=["v5.channel.k8s.io"])
    assert missing.value.status == 404
    assert json.loads(missing.value.body)["message"] == 'pods "nope" not found'
    sim.set_state("down")
    down = await plane.http.get(PROXY.format("sim1") + "/api/v1/namespaces/default/configmaps")
    assert down.status_code == 503 and 'cluster "sim1" is unreachable' in down.json()["message"]
    with pytest.raises(Refused) as unreachable:
        await upgrade.dial(exec_path, headers=ADMIN_HEADER, subprotocols=["v5.channel.k8s.io"])
    assert unreachable.value.status == 503
    assert 'cluster "sim1" is unreachable' in json.loads(unreachable.value.body)["message"]
