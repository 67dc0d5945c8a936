"""The stored-object size limit at its edge: what a delete adds is never refused, and an
object stored before the limit existed may still shrink (memory backend: etcd's own request
limit, a few bytes above ours, would refuse these objects before the façade is asked)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from fleetkeeper import errors
from fleetkeeper.api.limits import MAX_OBJECT_BYTES
from fleetkeeper.clock import SystemClock
from fleetkeeper.store import Store
from fleetkeeper.store._conformance_base import CONFIGMAP, configmap
from fleetkeeper.store.backend import Change, Key, Record
from fleetkeeper.store.memory import MemoryBackend


def size(obj: dict[str, Any]) -> int:
    return len(orjson.dumps(obj))


async def at_the_limit(store: Store, name: str, **meta: Any) -> dict[str, Any]:
    """A ConfigMap stored a few bytes under the limit."""
    meta = {"name": name, "namespace": "default", **meta}
    created = await store.create({**configmap(name), "metadata": meta})
    pad = MAX_OBJECT_BYTES - size(created) - 8
    return await store.update({**created, "data": {"pad": "x" * pad}})


async def test_deleting_an_object_at_the_limit_is_never_refused() -> None:
    store = Store(MemoryBackend(), clock=SystemClock())
    held = await at_the_limit(store, "held", finalizers=["example.com/keep"])
    assert MAX_OBJECT_BYTES - 16 < size(held) <= MAX_OBJECT_BYTES
    deleting = await store.delete(CONFIGMAP, "default", "held")
    assert size(deleting) > MAX_OBJECT_BYTES  # the deletion's metadata took it over
    with pytest.raises(errors.RequestEntityTooLarge):  # growing it further is refused
        await store.update({**deleting, "data": {"pad": "x" * MAX_OBJECT_BYTES}})
    await store.update({**deleting, "metadata": {**deleting["metadata"], "finalizers": []}})
    with pytest.raises(errors.NotFound):
        await store.get(CONFIGMAP, "default", "held")


async def test_an_object_stored_before_the_limit_may_shrink_but_not_grow() -> None:
    backend = MemoryBackend()
    old = {**configmap("legacy"), "data": {"pad": "x" * (MAX_OBJECT_BYTES + 100)}}
    old["metadata"].update(uid="u1", resourceVersion="1", generation=1)
    key = Key("", "ConfigMap", "default", "legacy")
    await backend.commit([Change("ADDED", key, Record.of(old, 1), None)])
    store = Store(backend, clock=SystemClock())
    legacy = await store.get(CONFIGMAP, "default", "legacy")
    with pytest.raises(errors.RequestEntityTooLarge):
        await store.update({**legacy, "data": {"pad": "x" * (MAX_OBJECT_BYTES + 200)}})
    shrunk = await store.update({**legacy, "data": {"pad": "x" * (MAX_OBJECT_BYTES + 50)}})
    assert len(shrunk["data"]["pad"]) == MAX_OBJECT_BYTES + 50
    await store.update({**shrunk, "data": {"small": "y"}})
