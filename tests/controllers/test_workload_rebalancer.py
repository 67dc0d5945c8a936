"""The workload-rebalancer on virtual time: a rebalancer's workloads get their bindings rescheduled,
each request a timeline entry on the binding, whose reason reads as every timeline reason does."""

from __future__ import annotations

import re

from fleetkeeper.api import timeline as tl
from fleetkeeper.api.apps import WorkloadRebalancer
from fleetkeeper.api.work import ResourceBinding
from fleetkeeper.clock import VirtualClock
from fleetkeeper.controllers import workload_rebalancer

from .failover_world import make_world

WEB = {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default", "name": "web"}


def test_a_rebalanced_binding_gets_a_camel_case_reason_on_its_timeline() -> None:
    clock = VirtualClock()

    async def main() -> None:
        world = await make_world(clock, ("member1",))
        try:
            await world.client.create(ResourceBinding.from_dict({
                "metadata": {"name": "web-deployment", "namespace": "default"},
                "spec": {"resource": WEB, "replicas": 1, "clusters": [{"name": "member1", "replicas": 1}]}}))
            world.start([workload_rebalancer.SPEC])
            asked = await world.client.create(WorkloadRebalancer.from_dict({
                "metadata": {"name": "back"}, "spec": {"workloads": [WEB]}}))
            await world.until(10)
            binding = await world.client.get(ResourceBinding, "web-deployment", "default")
            assert binding.spec.reschedule_triggered_at == asked.metadata.creation_timestamp
            (entry,) = await world.timeline("web-deployment", tl.RESCHEDULE_REQUESTED)
            assert (entry.reason, entry.component) == ("WorkloadRebalancer", "workload-rebalancer")
            assert re.fullmatch(r"(?:[A-Z][a-z0-9]+)+", entry.reason), "one CamelCase word"
            assert entry.message == "rescheduling requested by WorkloadRebalancer back"
        finally:
            await world.close()

    clock.run(main())
