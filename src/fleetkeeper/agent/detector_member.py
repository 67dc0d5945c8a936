"""Where the detector keeps node verdicts and its Lease: in the member cluster.

Every detector instance stores its node's verdict on its node, and the instances elect
their leader with a Lease in the member. Two ways to reach a member:

* :class:`ApiNodes` — a Kubernetes API client (the ``fleetkeeper detector`` command with
  the member's kubeconfig): the verdict is a real ``ServiceDomainNameResolutionReady``
  **Node condition** written through ``nodes/status``, exactly as Karmada's agent writes
  it; the client itself serves as the Lease client.
* :class:`MemberNodes` / :class:`MemberLeases` — the ``Member`` protocol (simulated
  members now, any member later). A Member only *applies* objects and apply never
  writes status, so the verdict — the same node-condition dict, as JSON — is kept in the
  node annotation :data:`VERDICT_ANNOTATION`. The Lease is compare-and-swapped with
  apply's ``resourceVersion`` precondition, and created with ``force=False``: of two
  candidates creating it at once, the second meets the first one's field ownership and
  gets a Conflict, so exactly one leads.

A verdict is stored on exactly the node it was read from (its ``uid`` is a
precondition), so a detector outliving its node never re-creates it.
"""

from __future__ import annotations

import builtins
import json
from typing import Any, Protocol, TypeVar

from fleetkeeper import errors
from fleetkeeper.agent import detector_rules as rules
from fleetkeeper.api.builtin import BUILTIN
from fleetkeeper.api.meta import Resource
from fleetkeeper.client.interface import Client, ObjectList, PatchType
from fleetkeeper.members.interface import FIELD_MANAGER, Member, ObjectRef, bounded

T = TypeVar("T", bound=Resource)

#: field manager of the verdict annotations
MANAGER = "service-name-resolution-detector"
VERDICT_ANNOTATION = "detector.fleetkeeper.io/service-domain-name-resolution-ready"
NODE = BUILTIN["Node"]


class NodeAccess(Protocol):
    """Where node verdicts live (in the member)."""

    async def reports(self) -> list[rules.NodeReport]:
        """Every node: Ready or not, and its stored verdict."""
        ...

    async def report(self, node: str) -> rules.NodeReport | None:
        """One node (None when it does not exist)."""
        ...

    async def store(self, node: rules.NodeReport, verdict: rules.NodeVerdict) -> None:
        """Store the node's verdict (on exactly that node: never re-creates a deleted one)."""
        ...


class ApiNodes:
    """Verdicts as ``ServiceDomainNameResolutionReady`` Node conditions, over a Kubernetes API."""

    def __init__(self, client: Client) -> None:
        self._client = client

    async def reports(self) -> list[rules.NodeReport]:
        return [self._report(node) for node in (await self._client.list(NODE)).items]

    async def report(self, node: str) -> rules.NodeReport | None:
        try:
            return self._report(await self._client.get(NODE, node))
        except errors.NotFound:
            return None

    async def store(self, node: rules.NodeReport, verdict: rules.NodeVerdict) -> None:
        current = await self._client.get(NODE, node.name)
        if current.metadata.uid != node.uid:
            return
        status = dict(current.to_dict().get("status") or {})
        kept = [c for c in status.get("conditions") or () if c.get("type") != rules.CONDITION]
        status["conditions"] = [*kept, verdict.to_wire()]
        current.set_field("status", status)
        await self._client.update_status(current)

    @staticmethod
    def _report(node: Resource) -> rules.NodeReport:
        wire = node.to_dict()
        verdict = rules.verdict_in((wire.get("status") or {}).get("conditions") or ())
        return rules.NodeReport(node.name, rules.node_ready(wire), verdict, uid=node.metadata.uid or "")


class MemberNodes:
    """Verdicts in a node annotation, over the Member protocol (see the module notes)."""

    def __init__(self, member: Member, *, timeout: float = 5.0) -> None:
        self._member = member
        self._timeout = timeout

    async def reports(self) -> list[rules.NodeReport]:
        nodes = await bounded(self._member.list("v1", "Node"), self._timeout, self._member.name)
        return [self._report(node) for node in nodes]

    async def report(self, node: str) -> rules.NodeReport | None:
        found = await bounded(self._member.get(ObjectRef("v1", "Node", "", node)), self._timeout,
                              self._member.name)
        return None if found is None else self._report(found)

    async def store(self, node: rules.NodeReport, verdict: rules.NodeVerdict) -> None:
        text = json.dumps(verdict.to_wire(), sort_keys=True)
        meta = {"name": node.name, "uid": node.uid, "annotations": {VERDICT_ANNOTATION: text}}
        manifest = {"apiVersion": "v1", "kind": "Node", "metadata": meta}
        await bounded(self._member.apply(manifest, field_manager=MANAGER), self._timeout, self._member.name)

    @staticmethod
    def _report(node: dict[str, Any]) -> rules.NodeReport:
        meta = node.get("metadata") or {}
        verdict = rules.NodeVerdict.from_wire((meta.get("annotations") or {}).get(VERDICT_ANNOTATION))
        return rules.NodeReport(str(meta.get("name")), rules.node_ready(node), verdict,
                                uid=str(meta.get("uid") or ""))


class MemberLeases:
    """Leases in a member, over the Member protocol (compare-and-swap through apply)."""

    def __init__(self, member: Member, identity: str) -> None:
        self._member = member
        self._manager = f"{FIELD_MANAGER}-{identity}"

    async def get(self, model: type[T], name: str, namespace: str = "") -> T:
        found = await self._member.get(ObjectRef(model.API_VERSION, model.KIND, namespace, name))
        if found is None:
            raise errors.NotFound(f'{model.KIND} "{name}" not found', kind=model.KIND, name=name)
        return model.from_dict(found)

    async def list(self, model: type[T], namespace: str | None = None, *, label_selector: str | None = None,
                   field_selector: str | None = None) -> ObjectList[T]:
        items = await self._member.list(model.API_VERSION, model.KIND, namespace,
                                        label_selector=label_selector)
        return ObjectList([model.from_dict(item) for item in items], "")

    async def create(self, obj: T) -> T:
        return await self._apply(obj, precondition=False)

    async def update(self, obj: T) -> T:
        return await self._apply(obj, precondition=True)

    async def patch(self, model: type[T], name: str, namespace: str = "", *,
                    patch: dict[str, Any] | builtins.list[Any], patch_type: PatchType = "merge",
                    subresource: str | None = None) -> T:
        raise errors.MethodNotAllowed("a member's leases are written whole (create/update), not patched")

    async def delete(self, model: type[T], name: str, namespace: str = "", *,
                     resource_version: str | None = None) -> None:
        await self._member.delete(ObjectRef(model.API_VERSION, model.KIND, namespace, name))

    async def _apply(self, obj: T, *, precondition: bool) -> T:
        meta: dict[str, Any] = {"name": obj.name, "namespace": obj.metadata.namespace}
        if precondition:
            meta["resourceVersion"] = obj.metadata.resource_version
        manifest = {"apiVersion": obj.api_version, "kind": obj.kind, "metadata": meta,
                    "spec": obj.to_dict().get("spec") or {}}
        return type(obj).from_dict(await self._member.apply(manifest, field_manager=self._manager,
                                                              force=precondition))


__all__ = ["MANAGER", "NODE", "VERDICT_ANNOTATION", "ApiNodes", "MemberLeases", "MemberNodes", "NodeAccess"]
