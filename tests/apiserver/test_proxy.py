"""Karmada's cluster proxy: who may use it, what reaches the member and what comes back."""

from __future__ import annotations

import asyncio
import base64
import ssl
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx
import orjson
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from fleetkeeper.apiserver import InProcessTransport, ServerConfig
from fleetkeeper.apiserver.certs import new_ca
from fleetkeeper.apiserver.proxy import Connection, HttpsMembers, forwarded, returned, split
from fleetkeeper.clock import SystemClock
from fleetkeeper.errors import ServiceUnavailable

from .helpers import AGENT, Api, close_api, open_api

PROXY = "/apis/cluster.karmada.io/v1alpha1/clusters/{}/proxy"
MEMBER_TOKEN = "member1-secret"


async def _echo(request: Request) -> Response:
    answer = JSONResponse({
        "method": request.method, "path": request.url.path, "query": request.url.query,
        "headers": [[k, v] for k, v in request.headers.items()], "body": (await request.body()).decode(),
    })
    for header in (("warning", '299 - "one"'), ("warning", '299 - "two"'), ("keep-alive", "timeout=5"),
                   ("x-member", "yes")):
        answer.raw_headers.append((header[0].encode(), header[1].encode()))
    return answer


async def _stream(request: Request) -> Response:
    release = request.app.state.release

    async def lines() -> AsyncIterator[bytes]:
        yield b'{"type":"ADDED"}\n'
        await release.wait()
        yield b'{"type":"MODIFIED"}\n'

    return StreamingResponse(lines(), media_type="application/json")


def _member() -> Starlette:
    app = Starlette(routes=[Route("/api/v1/stream", _stream),
                            Route("/{path:path}", _echo, methods=["GET", "POST", "PUT", "PATCH", "DELETE"])])
    app.state.release = asyncio.Event()
    return app


class _Fake:
    """Reaches ``fake://`` endpoints in-process, with the member's own token; ``down`` refuses."""

    def __init__(self, app: Starlette) -> None:
        self.transport = InProcessTransport(app)
        self.down = False

    async def connect(self, cluster: Mapping[str, Any]) -> Connection | None:
        if not str(cluster["spec"].get("apiEndpoint", "")).startswith("https://fake"):
            return None
        if self.down:
            return Connection("http://127.0.0.1:9", transport=httpx.AsyncHTTPTransport(retries=0))
        return Connection("http://member.test", (("Authorization", f"Bearer {MEMBER_TOKEN}"),),
                          transport=self.transport)


async def _cluster(api: Api, name: str, **spec: Any) -> None:
    body = {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": name},
            "spec": spec}
    answer = await api.http.post("/apis/cluster.karmada.io/v1alpha1/clusters", json=body)
    assert answer.status_code == 201, answer.text


@pytest.fixture
async def proxied() -> AsyncIterator[tuple[Api, _Fake, Starlette]]:
    api = await open_api(config=ServerConfig(max_body_bytes=1024))
    member = _member()
    fake = _Fake(member)
    api.app.proxy.transports.insert(0, fake)
    await _cluster(api, "member1", syncMode="Push", apiEndpoint="https://fake.member1")
    try:
        yield api, fake, member
    finally:
        await close_api(api)


async def test_a_request_reaches_the_member_with_its_path_query_and_body(proxied: Any) -> None:
    api, _, _ = proxied
    answer = await api.http.post(PROXY.format("member1") + "/api/v1/namespaces/default/pods?dryRun=All&x=%2F",
                                 content=b'{"kind":"Pod"}', headers={"Content-Type": "application/json"})
    assert answer.status_code == 200
    seen = answer.json()
    assert (seen["method"], seen["path"], seen["query"]) == ("POST", "/api/v1/namespaces/default/pods",
                                                           "dryRun=All&x=%2F")
    assert seen["body"] == '{"kind":"Pod"}'


async def test_the_member_is_reached_with_its_own_credentials_and_never_the_callers(proxied: Any) -> None:
    api, _, _ = proxied
    answer = await api.http.get(PROXY.format("member1") + "/api/v1/pods", headers={
        "Connection": "keep-alive, X-Secret-Hop", "X-Secret-Hop": "1", "TE": "trailers", "Keep-Alive": "5",
        "X-Custom": "kept", "Accept": "application/json;as=Table"})
    headers = {k for k, _ in answer.json()["headers"]}
    values = dict(answer.json()["headers"])
    assert values["authorization"] == f"Bearer {MEMBER_TOKEN}"
    assert values["x-custom"] == "kept" and values["accept"] == "application/json;as=Table"
    assert not headers & {"x-secret-hop", "te", "keep-alive"}
    assert values.get("connection") != "keep-alive, X-Secret-Hop"  # the proxy's own connection


async def test_the_answer_keeps_its_headers_but_not_the_hop_by_hop_ones(proxied: Any) -> None:
    api, _, _ = proxied
    answer = await api.http.get(PROXY.format("member1") + "/version")
    assert answer.headers.get_list("warning") == ['299 - "one"', '299 - "two"']
    assert answer.headers["x-member"] == "yes" and "keep-alive" not in answer.headers


async def test_a_body_past_the_servers_limit_is_refused_before_the_member_sees_it(proxied: Any) -> None:
    api, _, _ = proxied
    answer = await api.http.put(PROXY.format("member1") + "/api/v1/namespaces/default/configmaps/big",
                                content=b"x" * 2048)
    assert answer.status_code == 413 and answer.json()["reason"] == "RequestEntityTooLarge"


async def test_a_stream_is_relayed_as_it_comes_not_buffered(proxied: Any) -> None:
    api, _, member = proxied
    async with api.http.stream("GET", PROXY.format("member1") + "/api/v1/stream?watch=true") as answer:
        lines = answer.aiter_lines()
        assert orjson.loads(await asyncio.wait_for(anext(lines), 5)) == {"type": "ADDED"}
        member.state.release.set()
        assert orjson.loads(await asyncio.wait_for(anext(lines), 5)) == {"type": "MODIFIED"}
        assert [line async for line in lines] == []  # the member ended it, so does the proxy


async def test_a_pull_agent_may_not_proxy_even_to_its_own_cluster(proxied: Any) -> None:
    api, _, _ = proxied
    async with api.client(AGENT) as agent:
        answer = await agent.get(PROXY.format("member1") + "/api/v1/pods")
    assert answer.status_code == 403
    assert 'cannot proxy resource "clusters/proxy"' in answer.json()["message"]
    async with api.client(None) as anonymous:
        assert (await anonymous.get(PROXY.format("member1") + "/api/v1/pods")).status_code == 401


async def test_an_unknown_cluster_is_404_a_pull_cluster_and_an_unreachable_member_503(proxied: Any) -> None:
    api, fake, _ = proxied
    assert (await api.http.get(PROXY.format("nowhere") + "/api")).status_code == 404
    await _cluster(api, "pulled", syncMode="Pull")
    pulled = await api.http.get(PROXY.format("pulled") + "/api")
    assert pulled.status_code == 503 and "Pull mode" in pulled.json()["message"]
    fake.down = True
    down = await api.http.get(PROXY.format("member1") + "/api")
    assert down.status_code == 503 and '"member1" is unreachable' in down.json()["message"]


async def test_a_path_may_not_climb_out_of_the_members_api_root() -> None:
    assert split(b"/apis/cluster.karmada.io/v1alpha1/clusters/m1/proxy/api/v1/pods") == ("m1", "/api/v1/pods")
    assert split(b"/apis/cluster.karmada.io/v1alpha1/clusters/m1/proxy") == ("m1", "/")
    with pytest.raises(Exception, match=r"'\.\.'"):
        split(b"/apis/cluster.karmada.io/v1alpha1/clusters/m1/proxy/api/../../admin")


def test_header_filters_drop_hop_by_hop_and_the_callers_identity() -> None:
    sent = [("Connection", "close, X-Hop"), ("X-Hop", "1"), ("Authorization", "Bearer caller"),
            ("Impersonate-Group", "g"), ("Host", "plane"), ("Content-Length", "3"), ("Accept", "*/*")]
    assert forwarded(sent) == [("Accept", "*/*")]
    assert returned([("Transfer-Encoding", "chunked"), ("Content-Type", "text/plain")]) == \
        [("Content-Type", "text/plain")]


async def test_an_https_member_is_reached_with_its_secret_and_settings(api: Api) -> None:
    ca = new_ca(SystemClock())
    secret = {"apiVersion": "v1", "kind": "Secret",
              "metadata": {"name": "m1", "namespace": "karmada-cluster"},
              "data": {"token": base64.b64encode(b"tok\n").decode(),
                       "caBundle": base64.b64encode(ca.cert).decode()}}
    assert (await api.http.post("/api/v1/namespaces/karmada-cluster/secrets", json=secret)).status_code == 201
    members = HttpsMembers(api.store)
    cluster: dict[str, Any] = {"metadata": {"name": "m1"}, "spec": {
        "apiEndpoint": "https://10.0.0.1:6443/", "secretRef": {"namespace": "karmada-cluster", "name": "m1"},
        "proxyURL": "http://proxy.example:3128", "proxyHeader": {"X-Tenant": "a"}}}
    found = await members.connect(cluster)
    assert found is not None
    assert found.url == "https://10.0.0.1:6443" and found.headers == (("Authorization", "Bearer tok"),)
    assert isinstance(found.verify, ssl.SSLContext) and found.proxy is not None
    assert found.proxy.headers["X-Tenant"] == "a"
    skip = {**cluster["spec"], "insecureSkipTLSVerification": True}
    insecure = await members.connect({**cluster, "spec": skip})
    assert insecure is not None and insecure.verify is False
    simulated = {"metadata": {"name": "s"}, "spec": {"apiEndpoint": "simulated://s"}}
    assert await members.connect(simulated) is None
    with pytest.raises(ServiceUnavailable, match="no secretRef"):
        await members.connect({"metadata": {"name": "m2"}, "spec": {"apiEndpoint": "https://10.0.0.2"}})


async def _account_token(api: Api, name: str) -> str:
    admin = api.http
    made = await admin.post("/api/v1/namespaces/default/serviceaccounts",
                            json={"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}})
    assert made.status_code == 201, made.text
    answer = await admin.post(f"/api/v1/namespaces/default/serviceaccounts/{name}/token",
                              json={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                                    "spec": {"expirationSeconds": 3600}})
    assert answer.status_code == 201, answer.text
    return str(answer.json()["status"]["token"])


async def test_rbac_grants_the_proxy_verb_on_clusters_proxy_per_cluster(proxied: Any) -> None:
    api, _, _ = proxied
    await _cluster(api, "member2", syncMode="Push", apiEndpoint="https://fake.member2")
    rbac = "/apis/rbac.authorization.k8s.io/v1"
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "m1-proxy"},
            "rules": [{"verbs": ["proxy"], "apiGroups": ["cluster.karmada.io"],
                       "resources": ["clusters/proxy"], "resourceNames": ["member1"]}]}
    assert (await api.http.post(f"{rbac}/clusterroles", json=role)).status_code == 201
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
               "metadata": {"name": "m1-proxy"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                           "name": "m1-proxy"},
               "subjects": [{"kind": "ServiceAccount", "name": "looker", "namespace": "default"}]}
    assert (await api.http.post(f"{rbac}/clusterrolebindings", json=binding)).status_code == 201
    async with api.client(await _account_token(api, "looker")) as looker:
        assert (await looker.get(PROXY.format("member1") + "/version")).status_code == 200
        refused = await looker.get(PROXY.format("member2") + "/version")
    assert refused.status_code == 403
    assert 'cannot proxy resource "clusters/proxy"' in refused.json()["message"]


async def test_a_proxy_url_httpx_cannot_use_makes_the_member_unreachable_not_a_500(api: Api) -> None:
    secret = {"apiVersion": "v1", "kind": "Secret",
              "metadata": {"name": "s1", "namespace": "karmada-cluster"},
              "data": {"token": base64.b64encode(b"tok").decode()}}
    assert (await api.http.post("/api/v1/namespaces/karmada-cluster/secrets", json=secret)).status_code == 201
    await _cluster(api, "socks", syncMode="Push", apiEndpoint="https://127.0.0.1:9",
                   secretRef={"namespace": "karmada-cluster", "name": "s1"}, proxyURL="socks5://127.0.0.1:9")
    answer = await api.http.get(PROXY.format("socks") + "/version")
    assert answer.status_code == 503, answer.text
    assert '"socks" is unreachable' in answer.json()["message"]
