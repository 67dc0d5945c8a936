"""What one controller write costs: typed ResourceBinding updates through the plane's client.

``fleetkeeper bench store`` measures the store with plain JSON-shaped dicts. A controller
writes through :class:`~fleetkeeper.client.local.LocalClient` instead: the typed object is
admitted (defaulted and validated), encoded, committed, handed back with its new metadata,
and delivered to the typed watch that feeds the plane's informer — the write path every
eviction, scheduling result and status report takes. This phase times exactly that, one
write at a time as controllers write (no batch), with one typed watcher attached, until the
watcher holds every event: ``client_updates_per_second``, and its inverse
``client_update_us``, the cost of one write before any decision is made.

Objects are the store benchmark's ResourceBinding shape (:func:`fleetkeeper.store.bench.binding`);
each update moves one replica between its two target clusters, as a rescheduling does.
"""

from __future__ import annotations

import asyncio
from typing import Any

from fleetkeeper.api import admission
from fleetkeeper.api.work import ResourceBinding
from fleetkeeper.client.local import LocalClient
from fleetkeeper.clock import Clock
from fleetkeeper.store import Store
from fleetkeeper.store.bench import binding


def _unsaved(namespace: str, i: int) -> ResourceBinding:
    data = binding(namespace, i)
    data.pop("status", None)
    return ResourceBinding.from_dict(data)


def _moved(obj: ResourceBinding) -> ResourceBinding:
    """``obj`` with one replica moved from its first target cluster to its second."""
    first, second = obj.spec.clusters or []
    clusters = [first.model_copy(update={"replicas": first.replicas - 1}),
                second.model_copy(update={"replicas": second.replicas + 1})]
    return obj.model_copy(update={"spec": obj.spec.model_copy(update={"clusters": clusters})})


async def _watch(client: LocalClient, namespace: str, since: str, count: int) -> None:
    seen = 0
    async for event in client.watch(ResourceBinding, namespace, resource_version=since):
        if event.type == "MODIFIED":
            seen += 1
            if seen >= count:
                return


async def bench_client_updates(store: Store, clock: Clock, namespace: str, objects: int) -> dict[str, Any]:
    """Typed, admitted, unbatched ResourceBinding updates with a typed watcher (module docstring)."""
    client = LocalClient(store, admission=admission.admit, clock=clock,
                         admission_reads_old=admission.reads_old)
    written = [await client.create(_unsaved(namespace, i)) for i in range(objects)]
    watcher = asyncio.create_task(_watch(client, namespace, str(store.revision), objects))
    await asyncio.sleep(0)  # the watch is open before the first write
    start = clock.monotonic()
    for obj in written:
        await client.update(_moved(obj))
    await watcher
    seconds = clock.monotonic() - start
    if seconds <= 0:
        return {"client_updates_per_second": None, "client_update_us": None, "client_objects": objects}
    return {"client_updates_per_second": round(objects / seconds, 1),
            "client_update_us": round(seconds / objects * 1e6, 1), "client_objects": objects}


__all__ = ["bench_client_updates"]
