"""The cluster proxy to a member named by a kubeconfig context: ``fleetkeeper member-sim`` in its own
process, joined as ``kube:///path/to/kubeconfig#CONTEXT`` — the kubeconfig it writes, with a few more
contexts beside its own.

The plane reaches it as the context says (server, CA data, token or token file): the member refuses
the plane's admin token, so an answer proves the context's credentials were used. A context the
proxy cannot use (missing, an exec plugin, a kubeconfig past the size bound) answers 503 naming the
cluster and why; a Pull agent may not use the proxy at all.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from apiserver.helpers import AGENT, Api, close_api, open_api
from fleetkeeper.cmd.kube_proxy import KubeconfigMembers
from fleetkeeper.members.kubeconfig import MAX_KUBECONFIG_BYTES
from members.member_sim import MemberSim

PROXY = "/apis/cluster.karmada.io/v1alpha1/clusters/{}/proxy"
PODS = "/api/v1/namespaces/default/pods"
NGINX = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "nginx", "namespace": "default"},
         "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "nginx"}},
                  "template": {"metadata": {"labels": {"app": "nginx"}},
                               "spec": {"containers": [{"name": "nginx", "image": "nginx"}]}}}}
#: bound on the member starting the Deployment's pod
POD = 20.0


def _kubeconfig(sim: MemberSim, directory: Path) -> Path:
    """member-sim's kubeconfig plus a context whose token is in a file (a relative path, as
    kubeconfigs have them) and one whose credentials come from an exec plugin."""
    doc: dict[str, Any] = yaml.safe_load(sim.kubeconfig.read_text())
    cluster = doc["contexts"][0]["context"]["cluster"]
    (directory / "token").write_text(sim.token + "\n")
    doc["users"] += [{"name": "by-file", "user": {"tokenFile": "token"}},
                     {"name": "by-exec", "user": {"exec": {
                         "apiVersion": "client.authentication.k8s.io/v1beta1", "command": "get-token"}}}]
    doc["contexts"] += [{"name": user, "context": {"cluster": cluster, "user": user}}
                        for user in ("by-file", "by-exec")]
    path = directory / "kubeconfig"
    path.write_text(yaml.safe_dump(doc))
    return path


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemberSim]:
    started = MemberSim(tmp_path_factory.mktemp("sim1"), "sim1").wait()
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture
async def plane(sim: MemberSim, tmp_path: Path) -> AsyncIterator[Api]:
    kubeconfig = _kubeconfig(sim, tmp_path)
    huge = tmp_path / "huge.kubeconfig"
    huge.write_bytes(sim.kubeconfig.read_bytes() + b"#" * MAX_KUBECONFIG_BYTES)
    endpoints = {"sim1": f"kube://{kubeconfig}#sim1", "by-file": f"kube://{kubeconfig}#by-file",
                 "by-exec": f"kube://{kubeconfig}#by-exec", "ghost": f"kube://{kubeconfig}#nope",
                 "huge": f"kube://{huge}#sim1"}
    api = await open_api()
    api.app.proxy.transports.append(KubeconfigMembers())
    try:
        for name, endpoint in endpoints.items():
            joined = await api.http.post("/apis/cluster.karmada.io/v1alpha1/clusters", json={
                "apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": name},
                "spec": {"syncMode": "Push", "apiEndpoint": endpoint}})
            assert joined.status_code == 201, joined.text
        yield api
    finally:
        await close_api(api)


async def test_the_proxy_reaches_a_kube_member_with_its_contexts_credentials(plane: Api) -> None:
    async with plane.http.stream("GET", PROXY.format("sim1") + PODS, params={"watch": "true"}) as watch:
        assert watch.status_code == 200
        made = await plane.http.post(PROXY.format("sim1") + "/apis/apps/v1/namespaces/default/deployments",
                                     json=NGINX)
        assert made.status_code == 201, made.text
        lines = watch.aiter_lines()
        async with asyncio.timeout(POD):
            event = orjson.loads(await anext(lines))
    assert event["type"] == "ADDED" and event["object"]["metadata"]["labels"]["app"] == "nginx"
    pod = event["object"]["metadata"]["name"]
    for cluster in ("sim1", "by-file"):
        listed = await plane.http.get(PROXY.format(cluster) + PODS)
        assert listed.status_code == 200, listed.text
        assert listed.json()["kind"] == "PodList"
        assert [item["metadata"]["name"] for item in listed.json()["items"]] == [pod]


@pytest.mark.parametrize(("cluster", "why"), [
    ("ghost", "Context 'nope' not found"),
    ("by-exec", "gets its credentials from an exec plugin (get-token), which the cluster proxy does not run"),
    ("huge", f"is larger than {MAX_KUBECONFIG_BYTES} bytes"),
])
async def test_a_context_the_proxy_cannot_use_is_503_naming_the_cluster(plane: Api, cluster: str,
                                                                        why: str) -> None:
    answer = await plane.http.get(PROXY.format(cluster) + PODS)
    assert answer.status_code == 503
    message = answer.json()["message"]
    assert message.startswith(f'cluster "{cluster}": ') and why in message, message


async def test_a_pull_agent_may_not_use_the_proxy_to_a_kube_member(plane: Api) -> None:
    async with plane.client(AGENT) as agent:
        refused = await agent.get(PROXY.format("sim1") + PODS)
    assert refused.status_code == 403
