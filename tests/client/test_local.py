"""The local client passes the client conformance suite, plus what only it promises."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Literal

import pytest

from fleetkeeper import errors
from fleetkeeper.api.admission import admit
from fleetkeeper.api.meta import Resource
from fleetkeeper.client.interface import Client
from fleetkeeper.client.local import LocalClient
from fleetkeeper.client.testing import ClientConformance, Deployment, deploy
from fleetkeeper.clock import SystemClock
from fleetkeeper.store import open_store


class TestLocalClient(ClientConformance):
    @asynccontextmanager
    async def open_client(self, *, history: int) -> AsyncIterator[Client]:
        clock = SystemClock()
        store = open_store("memory://", clock=clock, history=history)
        try:
            yield LocalClient(store, admission=admit, clock=clock)
        finally:
            await store.close()


@pytest.fixture
async def recorded() -> AsyncIterator[tuple[LocalClient, list[str]]]:
    calls: list[str] = []

    def recording(new: Resource, old: Resource | None, *, operation: Literal["CREATE", "UPDATE"],
                  now: datetime) -> Resource:
        calls.append(operation)
        return admit(new, old, operation=operation, now=now)

    clock = SystemClock()
    store = open_store("memory://", clock=clock)
    yield LocalClient(store, admission=recording, clock=clock), calls
    await store.close()


async def test_admission_runs_on_main_writes_and_never_on_status_writes(
    recorded: tuple[LocalClient, list[str]],
) -> None:
    client, calls = recorded
    made = await client.create(deploy("web"))
    made.set_field("spec", {**made.field("spec"), "replicas": 2})
    made = await client.update(made)
    await client.patch(Deployment, "web", "default", patch={"spec": {"replicas": 3}})
    made = await client.get(Deployment, "web", "default")
    made.set_field("status", {"ready": 1})
    await client.update_status(made)
    await client.patch(Deployment, "web", "default", patch={"status": {"ready": 2}}, subresource="status")
    assert calls == ["CREATE", "UPDATE", "UPDATE"]


@pytest.mark.parametrize("patch_type", ["strategic", "apply"],
                         ids=["strategic merge patch is left to the API server",
                              "server-side apply is left to the API server"])
async def test_patch_types_of_the_api_server_are_unsupported(
    recorded: tuple[LocalClient, list[str]], patch_type: Literal["strategic", "apply"]
) -> None:
    client, _ = recorded
    await client.create(deploy("web"))
    with pytest.raises(errors.UnsupportedMediaType):
        await client.patch(Deployment, "web", "default", patch={}, patch_type=patch_type)


async def test_a_patch_may_not_rename_the_object(recorded: tuple[LocalClient, list[str]]) -> None:
    client, _ = recorded
    await client.create(deploy("web"))
    with pytest.raises(errors.Invalid):
        await client.patch(Deployment, "web", "default", patch={"metadata": {"name": "other"}})


async def test_a_garbled_watch_version_is_a_bad_request(recorded: tuple[LocalClient, list[str]]) -> None:
    client, _ = recorded
    with pytest.raises(errors.BadRequest):
        client.watch(Deployment, resource_version="latest")


def test_the_local_client_is_a_client() -> None:
    store = open_store("memory://", clock=SystemClock())
    client: Client = LocalClient(store, admission=admit, clock=SystemClock())
    assert isinstance(client, LocalClient)


async def test_an_update_with_its_status_is_one_change_that_bumps_the_generation_only_for_the_spec(
    recorded: tuple[LocalClient, list[str]],
) -> None:
    client, calls = recorded
    made = await client.create(deploy("web"))
    watch = client.watch(Deployment, "default", resource_version=made.metadata.resource_version)
    changed = made.deep_copy()
    changed.set_field("spec", {**changed.field("spec"), "replicas": 4})
    changed.set_field("status", {"observedGeneration": 2})
    both = await client.update_with_status(changed)
    assert (both.field("spec")["replicas"], both.field("status"), both.metadata.generation) == (
        4, {"observedGeneration": 2}, 2)
    labelled = both.deep_copy()
    labelled.metadata.labels = {"tier": "web"}
    labelled.set_field("status", {"observedGeneration": 2, "note": "labels only"})
    again = await client.update_with_status(labelled)
    assert again.metadata.generation == 2 and again.field("status")["note"] == "labels only"
    seen = []
    async for event in watch:
        seen.append((event.type, event.object.metadata.resource_version))
        if len(seen) == 2:
            break
    assert seen == [("MODIFIED", both.metadata.resource_version),
                    ("MODIFIED", again.metadata.resource_version)]
    assert calls == ["CREATE", "UPDATE", "UPDATE"], "admission judges it as an update"
    assert await client.get(Deployment, "web", "default") == again


async def test_a_watch_hands_out_the_model_the_write_returned_and_decodes_other_writes() -> None:
    clock = SystemClock()
    store = open_store("memory://", clock=clock)
    client, other = LocalClient(store, admission=admit, clock=clock), LocalClient(store, clock=clock)
    watch = client.watch(Deployment, "default")
    try:
        first = asyncio.ensure_future(anext(watch))
        for _ in range(10):  # until the watch is open: then this client's writes of the kind are kept
            await asyncio.sleep(0)
        made = await client.create(deploy("web"))
        assert (await first).object is made
        changed = made.deep_copy()
        changed.set_field("spec", {**changed.field("spec"), "replicas": 2})
        by_other = await other.update(changed)
        event = await anext(watch)
        assert event.object is not by_other and event.object == by_other
        patched = await client.patch(Deployment, "web", "default", patch={"spec": {"replicas": 3}})
        event = await anext(watch)
        assert event.object is not patched and event.object == patched
        rescaled = patched.deep_copy()
        rescaled.set_field("spec", {**rescaled.field("spec"), "replicas": 4})
        written = await client.update(rescaled)
        assert (await anext(watch)).object is written
    finally:
        await watch.aclose()  # type: ignore[attr-defined]
        await store.close()
    assert not client._recent and not client._watched, "nothing is kept once no watch is open"
