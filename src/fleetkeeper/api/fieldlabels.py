"""Which fields a ``fieldSelector`` may name, kind by kind, as kube-apiserver allows them.

Every kind supports ``metadata.name`` and ``metadata.namespace``; a few built-in kinds add
the fields Kubernetes indexes for them (a Pod's ``spec.nodeName`` and ``status.phase``, an
Event's ``involvedObject.*``, …), and a TimelineEntry its subject, action, reason and
component. Any other field is refused with ``400 field label not supported: spec.foo``, as
Kubernetes refuses it — a misspelt selector that silently matched nothing would look like
an empty list. The plane's API server and the simulated members' servers read the same table.
"""

from __future__ import annotations

from typing import Final

from fleetkeeper import errors
from fleetkeeper.api.selectors import FieldRequirements, parse_field_selector

COMMON: Final = frozenset({"metadata.name", "metadata.namespace"})
#: (group, kind) → the fields beside :data:`COMMON` that kube-apiserver selects on
EXTRA: Final[dict[tuple[str, str], frozenset[str]]] = {
    ("", "Pod"): frozenset({"spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
                            "spec.serviceAccountName", "spec.hostNetwork", "status.phase", "status.podIP",
                            "status.podIPs", "status.nominatedNodeName"}),
    ("", "Event"): frozenset({"involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
                              "involvedObject.uid", "involvedObject.apiVersion",
                              "involvedObject.resourceVersion", "involvedObject.fieldPath", "reason",
                              "reportingComponent", "source", "type"}),
    ("", "Secret"): frozenset({"type"}),
    ("", "Namespace"): frozenset({"status.phase"}),
    ("", "Node"): frozenset({"spec.unschedulable"}),
    ("", "Service"): frozenset({"spec.clusterIP", "spec.type"}),
    ("apps", "ReplicaSet"): frozenset({"status.replicas"}),
    ("batch", "Job"): frozenset({"status.successful"}),
    # fleetkeeper's own kind declares what ``fleetkeeper describe`` and ``get timeline`` select on,
    # as a CustomResourceDefinition declares its selectableFields
    ("fleetkeeper.io", "TimelineEntry"): frozenset({"subject.apiVersion", "subject.kind", "subject.name",
                                                    "subject.namespace", "action", "reason", "component"}),
}


def supported(group: str, kind: str) -> frozenset[str]:
    """The fields a selector may name for this kind."""
    return COMMON | EXTRA.get((group, kind), frozenset())


def checked(text: str | None, group: str, kind: str) -> FieldRequirements:
    """The requirements of a ``fieldSelector`` on this kind (``errors.BadRequest`` naming a field it
    may not name)."""
    requirements = parse_field_selector(text or "")
    allowed = supported(group, kind)
    for requirement in requirements:
        if requirement.path not in allowed:
            raise errors.BadRequest(f"field label not supported: {requirement.path}")
    return requirements


__all__ = ["COMMON", "EXTRA", "checked", "supported"]
