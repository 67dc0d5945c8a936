"""Both binding kinds' informers used as one: lookups by key, lists, indices and handlers."""

from __future__ import annotations

import asyncio

from fleetkeeper.api.meta import ObjectMeta
from fleetkeeper.api.work import (
    Binding,
    ClusterResourceBinding,
    ObjectReference,
    ResourceBinding,
    ResourceBindingSpec,
)
from fleetkeeper.client.local import LocalClient
from fleetkeeper.clock import VirtualClock
from fleetkeeper.runtime.bindings import BindingInformers, watch_bindings
from fleetkeeper.runtime.cache import InformerFactory
from fleetkeeper.runtime.handler import FuncHandler
from fleetkeeper.runtime.reconcile import Request
from fleetkeeper.store import open_store

from .helpers import run_virtual


def spec(name: str, namespace: str | None, cluster: str) -> ResourceBindingSpec:
    resource = ObjectReference(api_version="apps/v1", kind="Deployment", name=name, namespace=namespace)
    return ResourceBindingSpec.model_validate({"resource": resource.to_dict(),
                                               "clusters": [{"name": cluster}]})


def _clusters(binding: Binding) -> list[str]:
    return [target.name for target in binding.spec.clusters or ()]


def test_a_key_names_its_kind_and_lists_and_indices_cover_both() -> None:
    async def main(clock: VirtualClock) -> None:
        client = LocalClient(open_store("memory://", clock=clock), clock=clock)
        await client.create(ResourceBinding(metadata=ObjectMeta(name="web", namespace="default"),
                                            spec=spec("web", "default", "member1")))
        await client.create(ClusterResourceBinding(metadata=ObjectMeta(name="web"),
                                                   spec=spec("web", None, "member1")))
        bindings = BindingInformers(InformerFactory(client, clock=clock))
        bindings.add_indexer("cluster", _clusters)
        seen: list[str] = []
        bindings.add_handler(FuncHandler(lambda old, new: seen.append(f"{new.kind} {new.key}")
                                         if new is not None else None))
        tasks = [asyncio.create_task(informer.run()) for informer in bindings.pair]
        try:
            for informer in bindings.pair:
                await informer.wait_for_sync()
            assert bindings.has_synced
            assert isinstance(bindings.get(Request("default", "web")), ResourceBinding)
            assert isinstance(bindings.get(Request("", "web")), ClusterResourceBinding)
            assert bindings.get(Request("other", "web")) is None
            assert [b.kind for b in bindings.list()] == ["ResourceBinding", "ClusterResourceBinding"]
            assert [b.key for b in bindings.by_index("cluster", "member1")] == ["default/web", "web"]
            assert sorted(seen) == ["ClusterResourceBinding web", "ResourceBinding default/web"]
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    run_virtual(main)


def test_both_kinds_are_watched_alike() -> None:
    def changed(old: Binding | None, new: Binding | None) -> bool:
        return True

    rb_watch, crb_watch = watch_bindings(predicate=changed)
    assert (rb_watch.kind, crb_watch.kind) == (ResourceBinding, ClusterResourceBinding)
    assert rb_watch.predicate is changed and crb_watch.predicate is changed
    assert rb_watch.map_to is None and crb_watch.map_to is None
