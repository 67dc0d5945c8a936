"""The client conformance suite: the local and the REST client must behave the same.

A client's test module subclasses :class:`ClientConformance` and implements
``open_client(history=…)``, an async context manager yielding a client wired to a fresh
store with admission on (``fleetkeeper.api.admission.admit``)::

    class TestLocalClient(ClientConformance):
        @asynccontextmanager
        async def open_client(self, *, history):
            store = open_store("memory://", clock=SystemClock(), history=history)
            yield LocalClient(store, admission=admit, clock=SystemClock())
            await store.close()

It exercises typed reads and writes over a typed cluster-scoped kind (``Cluster``) and
an Unstructured namespaced one (``Deployment``): conflicts, ``/status``, merge and JSON
patches (with their conflict retries), selectors, watches (initial ADDED, resume,
``Gone``) and admission. Needs pytest with pytest-asyncio (``asyncio_mode = auto``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from typing import TypeVar

import pytest

from fleetkeeper import errors
from fleetkeeper.api import builtin
from fleetkeeper.api.cluster import Cluster
from fleetkeeper.api.core import Namespace
from fleetkeeper.api.meta import ObjectMeta, Resource, Unstructured
from fleetkeeper.client.interface import Client, WatchEvent

T = TypeVar("T", bound=Resource)

HANG_GUARD = 10.0
Deployment = builtin.Deployment


def member(name: str, **labels: str) -> Cluster:
    return Cluster.from_dict({"metadata": {"name": name, "labels": labels or None},
                              "spec": {"syncMode": "Push", "apiEndpoint": f"https://{name}.example:6443"}})


def deploy(name: str, namespace: str = "default", *, replicas: int = 1, **labels: str) -> Unstructured:
    pods = {"app": name}
    return Deployment.from_dict({"metadata": {"name": name, "namespace": namespace, "labels": labels or None},
                                 "spec": {"replicas": replicas, "selector": {"matchLabels": pods},
                                          "template": {"metadata": {"labels": pods}, "spec": {
                                              "containers": [{"name": "app", "image": "nginx"}]}}}})


async def take(events: AsyncIterator[WatchEvent[T]], n: int) -> list[tuple[str, str]]:
    """(type, name) of the next ``n`` events; fails rather than hangs."""
    out: list[tuple[str, str]] = []
    async with asyncio.timeout(HANG_GUARD):
        while len(out) < n:
            event = await anext(events)
            out.append((event.type, event.object.name))
    return out


class ClientConformance:
    """Subclass as ``Test<Name>Client`` and implement :meth:`open_client`."""

    def open_client(self, *, history: int) -> AbstractAsyncContextManager[Client]:
        raise NotImplementedError

    @pytest.fixture
    async def client(self) -> AsyncIterator[Client]:
        async with self.open_client(history=10_000) as client:
            yield client

    # ---------------------------------------------------------------- reads and writes
    async def test_create_returns_the_stored_typed_object(self, client: Client) -> None:
        made = await client.create(member("m1", region="eu"))
        assert isinstance(made, Cluster)
        assert made.metadata.uid and made.metadata.resource_version and made.metadata.generation == 1
        got = await client.get(Cluster, "m1")
        assert got == made and got.labels() == {"region": "eu"}

    async def test_cluster_scoped_kinds_ignore_the_namespace_argument(self, client: Client) -> None:
        await client.create(member("m1"))
        assert (await client.get(Cluster, "m1", "some-namespace")).name == "m1"
        assert [c.name for c in (await client.list(Cluster, "some-namespace")).items] == ["m1"]

    async def test_namespaced_unstructured_kinds_round_trip(self, client: Client) -> None:
        for namespace in ("a", "b"):  # an API server creates only in namespaces that exist
            await client.create(Namespace(metadata=ObjectMeta(name=namespace)))
        await client.create(deploy("web", "a", replicas=3))
        await client.create(deploy("web", "b"))
        got = await client.get(Deployment, "web", "a")
        assert got.field("spec")["replicas"] == 3
        listed = (await client.list(Deployment)).items
        assert [(d.namespace, d.name) for d in listed] == [("a", "web"), ("b", "web")]
        assert [d.namespace for d in (await client.list(Deployment, "b")).items] == ["b"]

    @pytest.mark.parametrize("absent", ["get", "delete", "update", "pinned", "patch"],
                             ids=["getting", "deleting", "updating", "updating at a version", "patching"])
    async def test_an_absent_object_is_not_found(self, client: Client, absent: str) -> None:
        with pytest.raises(errors.NotFound):
            if absent == "get":
                await client.get(Deployment, "ghost", "default")
            elif absent == "delete":
                await client.delete(Deployment, "ghost", "default")
            elif absent == "update":
                await client.update(deploy("ghost"))
            elif absent == "pinned":
                ghost = deploy("ghost")
                ghost.metadata.resource_version = "7"
                await client.update(ghost)
            else:
                await client.patch(Deployment, "ghost", "default", patch={"spec": {"replicas": 2}})

    async def test_delete_removes_the_object(self, client: Client) -> None:
        made = await client.create(deploy("web"))
        with pytest.raises(errors.Conflict):
            await client.delete(Deployment, "web", "default", resource_version="999999")
        await client.delete(Deployment, "web", "default", resource_version=made.metadata.resource_version)
        with pytest.raises(errors.NotFound):
            await client.get(Deployment, "web", "default")

    async def test_update_with_a_stale_resource_version_conflicts(self, client: Client) -> None:
        made = await client.create(deploy("web"))
        fresh = made.deep_copy()
        fresh.set_field("spec", {**fresh.field("spec"), "replicas": 2})
        await client.update(fresh)
        made.set_field("spec", {**made.field("spec"), "replicas": 5})
        with pytest.raises(errors.Conflict):
            await client.update(made)
        made.metadata.resource_version = None
        assert (await client.update(made)).field("spec")["replicas"] == 5

    async def test_update_status_writes_only_status(self, client: Client) -> None:
        made = await client.create(deploy("web"))
        made.set_field("status", {"readyReplicas": 1})
        made.set_field("spec", {**made.field("spec"), "replicas": 9})
        updated = await client.update_status(made)
        assert updated.field("status") == {"readyReplicas": 1} and updated.field("spec")["replicas"] == 1

    async def test_finalize_writes_a_namespace_s_finalizers_and_lets_it_go(self, client: Client) -> None:
        made = await client.create(Namespace.from_dict({"metadata": {"name": "closing"},
                                                        "spec": {"finalizers": ["kubernetes"]}}))
        await client.delete(Namespace, "closing")
        held = await client.get(Namespace, "closing")
        assert held.status.phase == "Terminating" and held.spec.finalizers == ["kubernetes"]
        held.spec.finalizers = []
        assert (await client.update(held)).spec.finalizers == ["kubernetes"], "an update keeps them"
        current = await client.get(Namespace, "closing")
        current.spec.finalizers = []
        await client.finalize(current)
        with pytest.raises(errors.NotFound):
            await client.get(Namespace, "closing")
        assert made.metadata.uid

    async def test_update_returns_what_was_stored_with_the_stored_status(self, client: Client) -> None:
        made = await client.create(deploy("web"))
        made.set_field("status", {"readyReplicas": 1})
        with_status = await client.update_status(made)
        changed = with_status.deep_copy()
        changed.set_field("spec", {**changed.field("spec"), "replicas": 4})
        changed.set_field("status", {"readyReplicas": 7})
        updated = await client.update(changed)
        assert updated.field("spec")["replicas"] == 4 and updated.field("status") == {"readyReplicas": 1}
        assert updated.metadata.generation == 2 != with_status.metadata.generation
        assert updated.metadata.resource_version != with_status.metadata.resource_version
        assert updated.metadata is not changed.metadata, "the stored metadata, not the one sent"
        assert await client.get(Deployment, "web", "default") == updated

    async def test_admission_defaults_and_validates_main_writes(self, client: Client) -> None:
        made = await client.create(member("m1"))
        assert made.spec.resource_models, "cluster resource models are defaulted on create"
        with pytest.raises(errors.Invalid):
            await client.create(member("Not_A_DNS_Label"))
        with pytest.raises(errors.Invalid):
            await client.create(Deployment.from_dict({"metadata": {"name": "no-namespace"}, "spec": {}}))
        assert [c.name for c in (await client.list(Cluster)).items] == ["m1"]

    # ---------------------------------------------------------------- patch
    async def test_a_merge_patch_merges_and_null_deletes(self, client: Client) -> None:
        await client.create(deploy("web", tier="front", team="a"))
        patched = await client.patch(Deployment, "web", "default", patch={
            "metadata": {"labels": {"team": None, "env": "prod"}}, "spec": {"paused": True}})
        assert patched.labels() == {"tier": "front", "env": "prod"}
        assert (patched.field("spec")["replicas"], patched.field("spec")["paused"]) == (1, True)

    async def test_a_json_patch_applies_its_operations_in_order(self, client: Client) -> None:
        await client.create(deploy("web"))
        patched = await client.patch(Deployment, "web", "default", patch_type="json", patch=[
            {"op": "test", "path": "/spec/replicas", "value": 1},
            {"op": "replace", "path": "/spec/replicas", "value": 4},
            {"op": "add", "path": "/metadata/labels", "value": {"a/b": "c"}},
            {"op": "copy", "from": "/spec/replicas", "path": "/spec/minReadySeconds"},
        ])
        assert (patched.field("spec")["replicas"], patched.field("spec")["minReadySeconds"]) == (4, 4)
        assert patched.labels() == {"a/b": "c"}

    async def test_a_failed_json_patch_test_changes_nothing(self, client: Client) -> None:
        made = await client.create(deploy("web"))
        with pytest.raises(errors.Invalid):
            await client.patch(Deployment, "web", "default", patch_type="json", patch=[
                {"op": "replace", "path": "/spec/replicas", "value": 7},
                {"op": "test", "path": "/spec/replicas", "value": 1},
            ])
        assert (await client.get(Deployment, "web", "default")) == made

    async def test_a_patch_pinned_to_a_stale_resource_version_conflicts(self, client: Client) -> None:
        made = await client.create(deploy("web"))
        await client.patch(Deployment, "web", "default", patch={"spec": {"replicas": 2}})
        with pytest.raises(errors.Conflict):
            await client.patch(Deployment, "web", "default", patch={
                "metadata": {"resourceVersion": made.metadata.resource_version}, "spec": {"replicas": 3}})

    async def test_concurrent_patches_all_land(self, client: Client) -> None:
        await client.create(deploy("web"))

        async def label(i: int) -> None:
            await client.patch(Deployment, "web", "default", patch={"metadata": {"labels": {f"l{i}": "x"}}})

        await asyncio.gather(*(label(i) for i in range(12)))
        assert set((await client.get(Deployment, "web", "default")).labels()) == {f"l{i}" for i in range(12)}

    async def test_a_status_patch_touches_only_status(self, client: Client) -> None:
        await client.create(deploy("web"))
        patched = await client.patch(Deployment, "web", "default", subresource="status",
                                     patch={"status": {"replicas": 1}, "spec": {"replicas": 9}})
        assert patched.field("status") == {"replicas": 1} and patched.field("spec")["replicas"] == 1

    # ---------------------------------------------------------------- list and watch
    async def test_lists_filter_by_label_and_field_selectors(self, client: Client) -> None:
        for name, tier in (("a", "front"), ("b", "back"), ("c", "front")):
            await client.create(deploy(name, tier=tier))
        front = await client.list(Deployment, label_selector="tier=front")
        assert [d.name for d in front.items] == ["a", "c"] and int(front.resource_version) >= 3
        named = await client.list(Deployment, field_selector="metadata.name=b")
        assert [d.name for d in named.items] == ["b"]

    async def test_a_watch_without_version_starts_with_the_current_objects(self, client: Client) -> None:
        await client.create(deploy("old"))
        events = client.watch(Deployment, "default")
        first = await take(events, 1)
        await client.create(deploy("new"))
        await client.delete(Deployment, "old", "default")
        assert first + await take(events, 2) == [("ADDED", "old"), ("ADDED", "new"), ("DELETED", "old")]
        await events.aclose()  # type: ignore[attr-defined]

    async def test_a_watch_resumes_after_a_listed_version(self, client: Client) -> None:
        await client.create(deploy("a", tier="front"))
        listed = await client.list(Deployment, label_selector="tier=front")
        await client.create(deploy("b", tier="back"))
        await client.patch(Deployment, "a", "default", patch={"metadata": {"labels": {"tier": "back"}}})
        await client.create(deploy("c", tier="front"))
        events = client.watch(Deployment, resource_version=listed.resource_version,
                              label_selector="tier=front")
        assert await take(events, 2) == [("DELETED", "a"), ("ADDED", "c")]
        await events.aclose()  # type: ignore[attr-defined]

    async def test_watch_events_are_typed(self, client: Client) -> None:
        listed = await client.list(Cluster)
        events = client.watch(Cluster, resource_version=listed.resource_version)
        await client.create(member("m1"))
        async with asyncio.timeout(HANG_GUARD):
            event = await anext(events)
        assert event.type == "ADDED" and isinstance(event.object, Cluster)
        await events.aclose()  # type: ignore[attr-defined]

    async def test_a_watch_from_a_compacted_version_is_gone(self) -> None:
        async with self.open_client(history=3) as client:
            for i in range(12):
                await client.create(deploy(f"d{i}"))
            with pytest.raises(errors.Gone):
                await take(client.watch(Deployment, resource_version="1"), 1)


__all__ = ["ClientConformance", "deploy", "member", "take"]
