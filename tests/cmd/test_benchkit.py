"""What the pipeline benchmarks share: completion is noted as the plane's cache changes."""

from __future__ import annotations

import asyncio
import time

from fleetkeeper.api.work import ResourceBinding
from fleetkeeper.client.local import LocalClient
from fleetkeeper.clock import VirtualClock
from fleetkeeper.cmd.benchkit import Completion, healthy
from fleetkeeper.runtime.informer import Informer
from fleetkeeper.store import open_store


def binding(name: str, *healths: str) -> ResourceBinding:
    return ResourceBinding.from_dict({
        "metadata": {"name": name, "namespace": "bench"},
        "spec": {"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name}},
        "status": {"aggregatedStatus": [{"clusterName": f"member{i}", "applied": True, "health": h}
                                        for i, h in enumerate(healths)]},
    })


def test_completion_counts_bindings_as_they_finish_and_notes_when_the_last_did() -> None:
    clock = VirtualClock()

    async def main() -> tuple[list[int], bool]:
        client = LocalClient(open_store("memory://", clock=clock), clock=clock)
        informer: Informer[ResourceBinding] = Informer(client, ResourceBinding, clock=clock)
        task = asyncio.create_task(informer.run())
        stored = await client.create(binding("a", "Healthy", "Healthy"))
        await client.update_status(stored)
        await client.create(binding("b"))
        await informer.wait_for_sync()
        done = Completion(informer, lambda b: healthy(b, 2))  # "a" is cached already: replayed
        counts = [done.count()]
        before = time.perf_counter()
        late = await client.get(ResourceBinding, "b", "bench")
        healthy_now = binding("b", "Healthy", "Healthy").status
        await client.update_status(late.model_copy(update={"status": healthy_now}))
        await clock.sleep(1)
        counts.append(done.count())
        noted_at_the_change = done.last_at is not None and done.last_at >= before
        sick = await client.get(ResourceBinding, "a", "bench")
        unknown_now = binding("a", "Healthy", "Unknown").status
        await client.update_status(sick.model_copy(update={"status": unknown_now}))
        await clock.sleep(1)
        counts.append(done.count())  # a finished binding stays finished
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return counts, noted_at_the_change

    counts, noted = clock.run(main())
    assert counts == [1, 2, 2] and noted


def test_a_closed_completion_notes_nothing_more() -> None:
    clock = VirtualClock()

    async def main() -> tuple[int, set[str]]:
        client = LocalClient(open_store("memory://", clock=clock), clock=clock)
        informer: Informer[ResourceBinding] = Informer(client, ResourceBinding, clock=clock)
        task = asyncio.create_task(informer.run())
        await client.create(binding("a"))
        await informer.wait_for_sync()
        done = Completion(informer, lambda b: healthy(b, 1))
        done.close()
        stored = await client.get(ResourceBinding, "a", "bench")
        await client.update_status(stored.model_copy(update={"status": binding("a", "Healthy").status}))
        await clock.sleep(1)
        cached = informer.get("bench/a")
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        assert cached is not None and healthy(cached, 1), "the change never reached the cache"
        return done.count(), done.finished

    assert clock.run(main()) == (0, set())
