"""Watch streams: where they start, bookmarks, Table events, 410 as an ERROR event, ends."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import orjson

from fleetkeeper.apiserver import ServerConfig

from .helpers import Api, close_api, open_api

DEPLOYS = "/apis/apps/v1/namespaces/default/deployments"
GUARD = 10.0


def deployment(name: str) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "app", "image": "nginx"}]}}}}


async def events(lines: AsyncIterator[str], n: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    async with asyncio.timeout(GUARD):
        async for line in lines:
            if line.strip():
                out.append(orjson.loads(line))
            if len(out) == n:
                break
    return out


def summary(found: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(e["type"], (e["object"].get("metadata") or {}).get("name", "")) for e in found]


async def test_watch_list_sends_current_objects_then_the_end_bookmark_then_changes(api: Api) -> None:
    await api.http.post(DEPLOYS, json=deployment("a"))
    params = {"watch": "true", "sendInitialEvents": "true", "resourceVersionMatch": "NotOlderThan",
              "allowWatchBookmarks": "true", "fieldSelector": "metadata.name=a"}
    async with api.http.stream("GET", DEPLOYS, params=params) as response:
        lines = response.aiter_lines()
        head = await events(lines, 2)
        await api.http.delete(f"{DEPLOYS}/a")
        tail = await events(lines, 1)
    assert summary(head + tail) == [("ADDED", "a"), ("BOOKMARK", ""), ("DELETED", "a")]
    assert head[1]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert int(head[1]["object"]["metadata"]["resourceVersion"]) >= 1


async def test_a_watch_from_a_version_replays_what_came_after(api: Api) -> None:
    first = (await api.http.post(DEPLOYS, json=deployment("a"))).json()
    await api.http.post(DEPLOYS, json=deployment("b"))
    params = {"watch": "1", "resourceVersion": first["metadata"]["resourceVersion"]}
    async with api.http.stream("GET", DEPLOYS, params=params) as response:
        assert response.headers["content-type"] == "application/json"
        found = await events(response.aiter_lines(), 1)
    assert summary(found) == [("ADDED", "b")]


async def test_a_watch_without_a_version_starts_with_synthetic_adds(api: Api) -> None:
    await api.http.post(DEPLOYS, json=deployment("a"))
    async with api.http.stream("GET", DEPLOYS, params={"watch": "True"}) as response:
        lines = response.aiter_lines()
        head = await events(lines, 1)
        await api.http.post(DEPLOYS, json=deployment("b"))
        tail = await events(lines, 1)
    assert summary(head + tail) == [("ADDED", "a"), ("ADDED", "b")]


async def test_a_watch_from_a_compacted_version_is_an_error_event_with_410() -> None:
    api = await open_api(history=3)
    try:
        for i in range(12):
            await api.http.post(DEPLOYS, json=deployment(f"d{i}"))
        params = {"watch": "true", "resourceVersion": "1"}
        async with api.http.stream("GET", DEPLOYS, params=params) as response:
            assert response.status_code == 200
            found = await events(response.aiter_lines(), 1)
        assert found[0]["type"] == "ERROR"
        assert (found[0]["object"]["code"], found[0]["object"]["reason"]) == (410, "Expired")
    finally:
        await close_api(api)


async def test_table_watches_send_one_row_tables(api: Api) -> None:
    await api.http.post(DEPLOYS, json=deployment("a"))
    accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
    headers = {"Accept": accept}
    async with api.http.stream("GET", DEPLOYS, params={"watch": "true"}, headers=headers) as response:
        found = await events(response.aiter_lines(), 1)
    table = found[0]["object"]
    assert table["kind"] == "Table" and table["rows"][0]["cells"][0] == "a"


async def test_table_watches_carry_each_rows_object_as_include_object_asks(api: Api) -> None:
    await api.http.post(DEPLOYS, json=deployment("a"))
    headers = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}
    rows: dict[str, dict[str, Any]] = {}
    for include in ("", "None", "Metadata", "Object"):
        params = {"watch": "true", **({"includeObject": include} if include else {})}
        async with api.http.stream("GET", DEPLOYS, params=params, headers=headers) as response:
            rows[include] = (await events(response.aiter_lines(), 1))[0]["object"]["rows"][0]
    by_default, whole = rows[""]["object"], rows["Object"]["object"]
    assert by_default["kind"] == "PartialObjectMetadata" and by_default == rows["Metadata"]["object"]
    assert "object" not in rows["None"]
    assert whole["kind"] == "Deployment" and whole["spec"]["replicas"] == 1
    bad = await api.http.get(DEPLOYS, params={"watch": "true", "includeObject": "All"}, headers=headers)
    assert bad.status_code == 400 and "includeObject" in bad.json()["message"]


async def test_a_watch_ends_after_its_timeout(api: Api) -> None:
    async with api.http.stream("GET", DEPLOYS, params={"watch": "true", "timeoutSeconds": "1"}) as response:
        async with asyncio.timeout(GUARD):
            body = await response.aread()
    assert body == b""


async def test_an_idle_watch_with_bookmarks_gets_them() -> None:
    api = await open_api(config=ServerConfig(bookmark_interval=0.05))
    try:
        params = {"watch": "true", "allowWatchBookmarks": "true", "resourceVersion": "0"}
        async with api.http.stream("GET", DEPLOYS, params=params) as response:
            found = await events(response.aiter_lines(), 1)
        assert found[0]["type"] == "BOOKMARK" and "annotations" not in found[0]["object"]["metadata"]
    finally:
        await close_api(api)


async def test_closing_the_server_ends_open_watches(api: Api) -> None:
    async with api.http.stream("GET", DEPLOYS, params={"watch": "true"}) as response:
        api.app.close()
        async with asyncio.timeout(GUARD):
            assert await response.aread() == b""


async def test_a_client_leaving_releases_its_watch(api: Api) -> None:
    assert (await api.http.get("/version")).status_code == 200
    server_own = api.store.watchers  # the server's own watch of CustomResourceDefinitions
    async with api.http.stream("GET", DEPLOYS, params={"watch": "true"}) as response:
        assert response.status_code == 200
        assert api.store.watchers == server_own + 1
    for _ in range(1000):  # bounded: the release happens within a few loop turns
        if api.store.watchers == server_own:
            break
        await asyncio.sleep(0.01)
    assert api.store.watchers == server_own


async def test_bad_watch_parameters_are_rejected_before_streaming(api: Api) -> None:
    for params in ({"watch": "maybe"}, {"watch": "true", "resourceVersion": "abc"},
                   {"watch": "true", "labelSelector": "a in (b"}):
        response = await api.http.get(DEPLOYS, params=params)
        assert response.status_code == 400, params
