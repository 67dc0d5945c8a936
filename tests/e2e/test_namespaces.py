"""Namespaces follow the workloads into a member that, like a real cluster, has none of them.

A control plane on real time reaches one ``fleetkeeper member-sim`` process only over HTTPS
(the kubernetes member backend). The member starts with Kubernetes' four namespaces and
refuses an object of any other. A Deployment in a new namespace ``shop`` lands there: the
namespace sync propagates ``shop`` (labels kept, marked as Karmada's) and the Deployment's
Work, which may come first, waits for it. A namespace labelled
``namespace.karmada.io/skip-auto-propagation: "true"`` stays home, and a Deployment in it
waits, its Work saying why. Deleting ``shop`` removes it from the member.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from fleetkeeper import errors
from fleetkeeper.api import constants
from fleetkeeper.api.builtin import Deployment
from fleetkeeper.api.conditions import get_condition
from fleetkeeper.api.core import Namespace
from fleetkeeper.api.policy import PropagationPolicy
from fleetkeeper.api.work import Work
from fleetkeeper.clock import SystemClock
from fleetkeeper.cmd.app import ControlPlane
from fleetkeeper.members.interface import ObjectRef
from fleetkeeper.members.kubernetes_pool import KubernetesMembers
from fleetkeeper.options import Options
from fleetkeeper.store import open_store
from members.member_sim import MemberSim

from .test_member_sim import Story, cluster, secret, secret_reader

#: bound on the whole story (seconds of real time)
STORY = 60.0
OPT_OUT = {constants.NAMESPACE_SKIP_AUTO_PROPAGATION_LABEL: "true"}


def deployment(namespace: str) -> Any:
    template = {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx"}]}}
    return Deployment.from_dict({
        "metadata": {"name": "web", "namespace": namespace, "labels": {"app": "web"}},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}}, "template": template}})


def policy(namespace: str) -> PropagationPolicy:
    return PropagationPolicy.from_dict({"metadata": {"name": "web", "namespace": namespace}, "spec": {
        "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}],
        "placement": {"clusterAffinity": {"clusterNames": ["member1"]}}}})


async def story(sim: MemberSim) -> None:
    clock = SystemClock()
    options = Options(leader_elect=False, cluster_status_update_frequency=0.5, cluster_success_threshold=0.5,
                      cluster_probe_timeout=2.0)
    store = open_store("memory://", clock=clock)
    planes: list[ControlPlane] = []
    members = KubernetesMembers(secret_reader(lambda: planes[0].client), clock=clock)
    plane = ControlPlane(store=store, clock=clock, members=members, options=options)
    planes.append(plane)
    told = Story(plane, {"member1": sim})
    member = told.readers["member1"]
    running = asyncio.get_running_loop().create_task(plane.run())
    client = plane.client
    try:
        await client.create(secret(sim))
        await client.create(cluster(sim))
        assert await member.get(ObjectRef("v1", "Namespace", "", "shop")) is None
        for name, labels in (("shop", {"team": "shop"}), ("private", OPT_OUT)):
            await client.create(Namespace.from_dict({"metadata": {"name": name, "labels": labels}}))
            await client.create(deployment(name))
            await client.create(policy(name))

        async def copy(namespace: str) -> dict[str, Any] | None:
            return await member.get(ObjectRef("apps/v1", "Deployment", namespace, "web"))

        await told.until(lambda: copy("shop"), "shop/web in member1")
        shop = await member.get(ObjectRef("v1", "Namespace", "", "shop"))
        assert shop is not None and shop["metadata"]["labels"]["team"] == "shop"
        assert shop["metadata"]["labels"][constants.MANAGED_BY_KARMADA_LABEL] == "true"

        async def waiting() -> str | None:
            try:
                work = await client.get(Work, constants.work_name("Deployment", "web", "private"),
                                        constants.execution_namespace("member1"))
            except errors.NotFound:
                return None
            applied = get_condition(work.status.conditions, constants.COND_WORK_APPLIED)
            return applied.message if applied is not None and applied.status == "False" else None

        message = await told.until(waiting, "private/web's Work waiting for its namespace")
        assert 'namespaces "private" not found' in message
        assert await member.get(ObjectRef("v1", "Namespace", "", "private")) is None
        assert await copy("private") is None

        await client.delete(Namespace, "shop")

        async def shop_gone() -> bool:
            return await member.get(ObjectRef("v1", "Namespace", "", "shop")) is None

        await told.until(shop_gone, "shop removed from member1")
        assert await copy("shop") is None
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)
        await members.close()
        await member.close()
        await store.close()


def test_a_namespace_reaches_a_member_that_has_none_unless_it_opts_out(tmp_path: Path) -> None:
    sim = MemberSim(tmp_path / "member1", "member1", pod_startup=0.5)
    try:
        sim.wait()

        async def bounded() -> None:
            async with asyncio.timeout(STORY):
                await story(sim)

        asyncio.run(bounded())
    finally:
        assert sim.stop() == 0, sim.err.read_text()
