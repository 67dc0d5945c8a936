"""The scenario actions (docs/scenario-format.md, "Actions") and cluster joining.

Fault actions are method calls on the simulated cluster named after the action;
``apply``/``delete``/``patch``/``setCondition`` go through the control plane's client,
so admission validates them exactly as it validates ``kubectl``. A manifest that is
invalid on its own never gets here (the loader refuses the file); an action the control
plane refuses for what it holds at that moment (e.g. a namespace that is gone) is
reported as a failed step, not a crash.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fleetkeeper import errors
from fleetkeeper.api import cluster as cluster_api
from fleetkeeper.api import conditions
from fleetkeeper.api.meta import Condition
from fleetkeeper.api.scheme import SCHEME
from fleetkeeper.client.interface import Client
from fleetkeeper.simulation.admitted import cluster_manifest
from fleetkeeper.simulation.scenario import Action, ClusterDef

if TYPE_CHECKING:
    from fleetkeeper.simulation.driver import Driver


class ActionFailed(errors.FleetkeeperError):
    """The control plane refused an action of the scenario."""


async def join_clusters(driver: Driver, clusters: list[ClusterDef]) -> None:
    """Register every scenario cluster; start the agents of Pull clusters.

    A cluster the control plane refuses makes the file invalid: ``errors.ScenarioError``
    naming ``spec.clusters[i]``.
    """
    for i, c in enumerate(clusters):
        try:
            await apply_manifest(driver.client, cluster_manifest(c))
        except errors.ApiError as exc:
            raise errors.ScenarioError(f"spec.clusters[{i}]", refused(exc)) from None
        if c.sync_mode == "Pull":
            driver.start_agent(c.name)


async def apply_resources(client: Client, resources: list[dict[str, Any]]) -> None:
    """Apply the manifests of ``spec.resources`` in order; a refusal is ``errors.ScenarioError``."""
    for i, manifest in enumerate(resources):
        try:
            await apply_manifest(client, manifest)
        except errors.ApiError as exc:
            raise errors.ScenarioError(f"spec.resources[{i}]", refused(exc)) from None


def refused(exc: errors.ApiError) -> str:
    """How a control-plane refusal reads in a report."""
    return f"the control plane refused it: {exc.message}"


async def apply_manifest(client: Client, manifest: dict[str, Any]) -> None:
    """Create, or update in place (like ``kubectl apply``)."""
    model = SCHEME.model_for(manifest["apiVersion"], manifest["kind"])
    obj = model.from_dict(manifest)
    try:
        await client.create(obj)
        return
    except errors.AlreadyExists:
        pass
    current = await client.get(model, obj.name, obj.namespace)
    obj.metadata = current.metadata.model_copy(
        update={
            "labels": obj.metadata.labels if obj.metadata.labels is not None else current.metadata.labels,
            "annotations": obj.metadata.annotations
            if obj.metadata.annotations is not None
            else current.metadata.annotations,
        }
    )
    await client.update(obj)


async def perform(driver: Driver, action: Action) -> None:
    """Run one action; control-plane refusals raise :class:`ActionFailed`."""
    name, arg = action.name, action.arg
    try:
        if name in _CLUSTER_FAULTS:
            await _cluster_fault(driver, name, arg)
        elif name in ("crashWorkload", "healWorkload"):
            target = driver.cluster(arg["cluster"])
            call = target.crash_workload if name == "crashWorkload" else target.heal_workload
            call(arg["apiVersion"], arg["kind"], arg.get("namespace") or "", arg["name"])
            driver.note(f"{name} {arg['kind']}/{arg['name']} in {arg['cluster']}")
        elif name == "setNodes":
            driver.cluster(arg["cluster"]).set_nodes(arg["nodes"])
            driver.note(f"setNodes {arg['cluster']} to {arg['nodes']}")
        elif name == "apply":
            await apply_manifest(driver.client, arg)
            driver.note(f"apply {arg['kind']}/{arg['metadata']['name']}")
        elif name == "delete":
            model = SCHEME.model_for(arg["apiVersion"], arg["kind"])
            await driver.client.delete(model, arg["name"], arg.get("namespace") or "")
            driver.note(f"delete {arg['kind']}/{arg['name']}")
        elif name == "patch":
            model = SCHEME.model_for(arg["apiVersion"], arg["kind"])
            await driver.client.patch(
                model, arg["name"], arg.get("namespace") or "", patch=arg["patch"], patch_type="merge"
            )
            driver.note(f"patch {arg['kind']}/{arg['name']}")
        elif name == "setCondition":
            await _set_condition(driver, arg)
            driver.note(f"setCondition {arg['cluster']} {arg['type']}={arg['status']} ({arg['reason']})")
        else:  # the loader only lets known actions through
            raise ActionFailed(f"{action.where}: unknown action {name!r}")
    except errors.ApiError as exc:
        raise ActionFailed(f"{action.where}: {refused(exc)}") from exc


_CLUSTER_FAULTS = {
    "clusterDown": "down",
    "clusterBlackhole": "blackhole",
    "clusterUp": "up",
    "clusterUnhealthy": "unhealthy",
    "dnsDown": "dns_down",
    "dnsUp": "dns_up",
    "agentDown": "agent_down",
    "agentUp": "agent_up",
}


async def _cluster_fault(driver: Driver, name: str, cluster: str) -> None:
    target = driver.cluster(cluster)
    getattr(target, _CLUSTER_FAULTS[name])()
    if name == "agentDown":
        await driver.stop_agent(cluster)
    elif name == "agentUp":
        driver.start_agent(cluster)
    driver.note(f"{name} {cluster}")


async def _set_condition(driver: Driver, arg: dict[str, Any]) -> None:
    for _ in range(5):
        current = await driver.client.get(cluster_api.Cluster, arg["cluster"])
        status = current.status
        status.conditions = conditions.set_condition(
            status.conditions or [],
            Condition(
                type=arg["type"],
                status=arg["status"],
                reason=arg["reason"],
                message=str(arg.get("message", "")),
            ),
            driver.clock.now(),
        )
        try:
            await driver.client.update_status(current)
            return
        except errors.Conflict:
            continue
    raise ActionFailed(f"setCondition on {arg['cluster']}: kept conflicting with other writers")


__all__ = [
    "ActionFailed", "apply_manifest", "apply_resources", "cluster_manifest", "join_clusters", "perform",
    "refused",
]
