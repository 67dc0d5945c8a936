"""The dashboard's site on the API server's app, in-process: the files and their headers, what an
anonymous caller gets, and the what-if endpoint (authorized with the caller's token, bounded)."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

import fleetkeeper.api  # noqa: F401  (registers every kind)
from fleetkeeper import dashboard
from fleetkeeper.api import constants
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.work import ResourceBinding
from fleetkeeper.apiserver import InProcessTransport, Tokens, build_app
from fleetkeeper.client.rest import RestClient
from fleetkeeper.clock import SystemClock
from fleetkeeper.controllers.default_policy import default_taint_policy
from fleetkeeper.dashboard import site as site_module
from fleetkeeper.dashboard import whatif
from fleetkeeper.store import open_store

ADMIN, AGENT = "admin-token", "agent-token"
URL = "http://plane.test"
WHATIF = "/dashboard/api/whatif"
CAPACITY = {"member1": "8", "member2": "600m"}


def cluster(name: str, cpu: str) -> dict[str, Any]:
    return {
        "apiVersion": "cluster.karmada.io/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": name},
        "spec": {"syncMode": "Push", "region": "eu-west"},
    }


async def populate(client: RestClient) -> None:
    """The fleet of docs/whatif.md: a big member1, a small member2, nginx at member1:1 / member2:2, and
    the default taint policy (what the plane creates) that evicts from a failed cluster."""
    await client.create(default_taint_policy())
    for name, cpu in CAPACITY.items():
        made = await client.create(Cluster.model_validate(cluster(name, cpu)))
        made.status = made.status.model_validate(
            {
                "conditions": [
                    {
                        "type": "Ready",
                        "status": "True",
                        "reason": "ClusterReady",
                        "lastTransitionTime": "2026-01-01T00:00:00Z",
                    }
                ],
                "apiEnablements": [
                    {"groupVersion": "apps/v1", "resources": [{"name": "deployments", "kind": "Deployment"}]}
                ],
                "resourceSummary": {
                    "allocatable": {"cpu": cpu, "memory": "32Gi", "pods": "110"},
                    "allocated": {"cpu": "0", "memory": "0", "pods": "0"},
                },
            }
        )
        await client.update_status(made)
    weights = [
        {"targetCluster": {"clusterNames": [c]}, "weight": w} for c, w in (("member1", 1), ("member2", 2))
    ]
    placement = {
        "clusterAffinity": {"clusterNames": ["member1", "member2"]},
        "replicaScheduling": {
            "replicaSchedulingType": "Divided",
            "replicaDivisionPreference": "Weighted",
            "weightPreference": {"staticWeightList": weights},
        },
    }
    await client.create(
        ResourceBinding.model_validate(
            {
                "apiVersion": "work.karmada.io/v1alpha2",
                "kind": "ResourceBinding",
                "metadata": {
                    "name": "nginx-deployment",
                    "namespace": "default",
                    "annotations": {constants.APPLIED_PLACEMENT_ANNOTATION: json.dumps(placement)},
                },
                "spec": {
                    "resource": {
                        "apiVersion": "apps/v1",
                        "kind": "Deployment",
                        "namespace": "default",
                        "name": "nginx",
                    },
                    "replicas": 3,
                    "clusters": [{"name": "member1", "replicas": 1}, {"name": "member2", "replicas": 2}],
                    "placement": placement,
                },
            }
        )
    )


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    clock = SystemClock()
    store = open_store("memory://", clock=clock)
    tokens = Tokens(admin=ADMIN)
    tokens.add_agent("member1", AGENT)
    app = build_app(store, clock=clock, tokens=tokens)
    app.sites[dashboard.PREFIX] = dashboard.Site(app, clock=clock, threshold=0.55)
    transport = InProcessTransport(app)
    async with RestClient(URL, token=ADMIN, transport=transport) as admin:
        await populate(admin)
    async with httpx.AsyncClient(transport=transport, base_url=URL) as client:
        yield client
    app.close()
    await store.close()


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_every_file_is_served_with_a_policy_that_allows_only_the_planes_origin(
    http: httpx.AsyncClient,
) -> None:
    moved = await http.get("/dashboard")
    assert moved.status_code == 308 and moved.headers["location"] == "/dashboard/"
    page = await http.get("/dashboard/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    for name, media in site_module.FILES.items():
        answer = await http.get(f"/dashboard/{name}")
        assert answer.status_code == 200 and answer.headers["content-type"] == media, name
        csp = answer.headers["content-security-policy"]
        assert "default-src 'none'" in csp and "connect-src 'self'" in csp and "script-src 'self'" in csp
        assert answer.headers["x-frame-options"] == "DENY"
    linked = set(re.findall(r'(?:src|href)="([^"]+)"', page.text)) - {"data:,"}
    assert linked == set(site_module.FILES) - {"index.html"}, "the page loads its own files, nothing else"


async def test_the_files_name_no_other_origin() -> None:
    for name in site_module.FILES:
        text = (site_module.STATIC / name).read_text()
        assert set(re.findall(r"https?://[^\s\"'`)]+", text)) <= {"http://www.w3.org/2000/svg"}, name


@pytest.mark.parametrize(
    "path",
    ["/dashboard/nope.js", "/dashboard/%2e%2e/site.py", "/dashboard/static/app.js", "/dashboard/api/other"],
)
async def test_nothing_else_under_the_prefix_is_served(http: httpx.AsyncClient, path: str) -> None:
    assert (await http.get(path)).status_code == 404


async def test_a_file_takes_no_write(http: httpx.AsyncClient) -> None:
    assert (await http.post("/dashboard/app.js", content=b"x")).status_code == 405
    assert (await http.get(WHATIF)).status_code == 405


async def test_without_a_token_the_data_and_the_whatif_are_401(http: httpx.AsyncClient) -> None:
    for path in (
        "/apis/cluster.karmada.io/v1alpha1/clusters",
        "/apis/work.karmada.io/v1alpha2/resourcebindings",
        "/apis/fleetkeeper.io/v1alpha1/timelineentries",
    ):
        assert (await http.get(path)).status_code == 401, path
    answer = await http.post(WHATIF, json={"down": ["member1"]})
    assert answer.status_code == 401 and answer.json()["reason"] == "Unauthorized"


async def test_the_whatif_reads_with_the_callers_token(http: httpx.AsyncClient) -> None:
    refused = await http.post(WHATIF, json={"down": ["member1"]}, headers=bearer(AGENT))
    assert refused.status_code == 403 and refused.json()["kind"] == "Status"
    answer = await http.post(WHATIF, json={"down": ["member1"]}, headers=bearer(ADMIN))
    assert answer.status_code == 200, answer.text
    found = answer.json()
    assert found["down"] == ["member1"], found
    assert [(w["binding"], w["before"], w["after"]) for w in found["workloads"]] == [
        ("default/nginx-deployment", {"member1": 1, "member2": 2}, {"member2": 3})
    ]
    assert found["summary"] == {"moved": 1, "short": 0, "homeless": 0, "blocked": 0}


async def test_a_region_and_the_matrix(http: httpx.AsyncClient) -> None:
    region = (await http.post(WHATIF, json={"region": "eu-west"}, headers=bearer(ADMIN))).json()
    assert region["down"] == ["member1", "member2"]
    matrix = (await http.post(WHATIF, json={"each": "cluster"}, headers=bearer(ADMIN))).json()
    assert [d["domain"] for d in matrix["domains"]] == ["member1", "member2"]
    assert matrix["domains"][0]["summary"]["moved"] == 1


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({}, "exactly one of"),
        ({"down": ["member1"], "region": "eu-west"}, "exactly one of"),
        ({"down": "member1"}, "down: must be a list"),
        ({"down": ["x" * 254]}, "down: must be a list"),
        ({"down": [f"m{i}" for i in range(whatif.MAX_DOWN + 1)]}, f"at most {whatif.MAX_DOWN}"),
        ({"down": ["member9"]}, "no cluster named 'member9'"),
        ({"each": "planet"}, "each: must be one of"),
        ({"region": "mars"}, "no cluster is in region 'mars'"),
        ({"colour": "red"}, "colour: unknown field"),
        ([1], "must be a JSON object"),
    ],
)
async def test_a_bad_question_is_a_400_naming_the_field(
    http: httpx.AsyncClient, body: Any, says: str
) -> None:
    answer = await http.post(WHATIF, content=json.dumps(body), headers=bearer(ADMIN))
    assert answer.status_code == 400 and says in answer.json()["message"], answer.text


async def test_a_body_beyond_the_limit_is_refused_as_the_api_server_refuses_one(
    http: httpx.AsyncClient,
) -> None:
    limit = whatif.MAX_BODY
    answer = await http.post(WHATIF, content=b" " * (limit + 1), headers=bearer(ADMIN))
    assert answer.status_code == 413 and answer.json()["reason"] == "RequestEntityTooLarge"
    assert answer.json()["message"] == f"the request body is {limit + 1} bytes, more than {limit}"

    async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: refused while reading
        for _ in range(3):
            yield b" " * (limit // 2)

    answer = await http.post(WHATIF, content=chunks(), headers=bearer(ADMIN))
    assert answer.status_code == 413
    assert answer.json()["message"] == f"the request body is more than {limit} bytes"


async def test_what_ifs_take_turns_and_a_crowd_is_told_to_come_back(http: httpx.AsyncClient) -> None:
    crowd = whatif.MAX_WAITING + 2
    asked = [http.post(WHATIF, json={"each": "cluster"}, headers=bearer(ADMIN)) for _ in range(crowd)]
    codes = sorted(answer.status_code for answer in await asyncio.gather(*asked))
    assert codes == [200] * (whatif.MAX_WAITING + 1) + [429], "one computes, MAX_WAITING wait their turn"
