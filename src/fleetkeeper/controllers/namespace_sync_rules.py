"""Which namespaces go to the members, and the Work that carries one there.

As Karmada's namespace sync (``pkg/controllers/namespace``) decides it, a Namespace of the
control plane is propagated to every member cluster unless it is ``default``, a reserved
one (``karmada-system``, ``karmada-cluster``, ``karmada-es-*``), matched by one of the
``--skipped-propagating-namespaces`` patterns (each matching the whole name; ``kube-.*`` by
default), or labelled ``namespace.karmada.io/skip-auto-propagation: "true"``.

Its Work in ``karmada-es-CLUSTER`` is named as Karmada names the Work of any cluster-scoped
object (:func:`~fleetkeeper.api.constants.work_name`), is owned by the Namespace (a
controlling ownerReference, so it is told apart from a Work a ClusterPropagationPolicy
made for the same Namespace) and carries one manifest: the Namespace's name, labels and
annotations with Karmada's managed label and its Work annotations. Pure functions; the
controller compares and writes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from fleetkeeper.api import constants
from fleetkeeper.api.core import Namespace
from fleetkeeper.api.meta import ObjectMeta, OwnerReference
from fleetkeeper.api.work import Work, WorkloadTemplate, WorkSpec


def is_synced(name: str, skipped: Sequence[re.Pattern[str]]) -> bool:
    """Whether a namespace of this name may be propagated at all (not default, not reserved,
    matched by no skipped pattern)."""
    if name == constants.DEFAULT_NAMESPACE or constants.is_reserved_namespace(name):
        return False
    return not any(pattern.fullmatch(name) for pattern in skipped)


def opted_out(namespace: Namespace) -> bool:
    """The namespace says ``namespace.karmada.io/skip-auto-propagation: "true"`` (any case)."""
    value = namespace.labels().get(constants.NAMESPACE_SKIP_AUTO_PROPAGATION_LABEL, "")
    return value.lower() == "true"


def work_name(namespace: str) -> str:
    """The name of a namespace's Work (the same in every execution namespace)."""
    return constants.work_name(Namespace.KIND, namespace, "")


def owned_by(work: Work, namespace: Namespace | None = None) -> str | None:
    """The namespace whose Work this is (the name its controlling ownerReference gives, and the
    uid matching ``namespace`` when given); None for any other Work."""
    for ref in work.metadata.owner_references or ():
        if ref.controller and ref.kind == Namespace.KIND and ref.api_version == Namespace.API_VERSION:
            if namespace is not None and ref.uid != (namespace.metadata.uid or ""):
                return None
            return ref.name
    return None


def manifest(namespace: Namespace, cluster: str) -> dict[str, Any]:
    """What the member gets: the namespace's name, labels and annotations, marked as Karmada's."""
    name = work_name(namespace.name)
    labels = {**namespace.labels(),
              constants.MANAGED_BY_KARMADA_LABEL: constants.MANAGED_BY_KARMADA_LABEL_VALUE}
    annotations = {**namespace.annotations(),
                   constants.RESOURCE_TEMPLATE_UID_ANNOTATION: namespace.metadata.uid or "",
                   constants.WORK_NAME_ANNOTATION: name,
                   constants.WORK_NAMESPACE_ANNOTATION: constants.execution_namespace(cluster)}
    return {"apiVersion": Namespace.API_VERSION, "kind": Namespace.KIND,
            "metadata": {"name": namespace.name, "labels": labels, "annotations": annotations}}


def desired_work(namespace: Namespace, cluster: str, current: Work | None) -> Work:
    """The Work carrying ``namespace`` to ``cluster``; ``current``'s other labels, annotations and
    finalizers are kept."""
    owner = OwnerReference(api_version=Namespace.API_VERSION, kind=Namespace.KIND, name=namespace.name,
                           uid=namespace.metadata.uid or "", controller=True, block_owner_deletion=True)
    spec = WorkSpec(workload=WorkloadTemplate(manifests=[manifest(namespace, cluster)]))
    if current is None:
        meta = ObjectMeta(name=work_name(namespace.name), namespace=constants.execution_namespace(cluster),
                          owner_references=[owner], finalizers=[constants.EXECUTION_CONTROLLER_FINALIZER])
        return Work(metadata=meta, spec=spec)
    finalizers = list(current.metadata.finalizers or ())
    if constants.EXECUTION_CONTROLLER_FINALIZER not in finalizers:
        finalizers.append(constants.EXECUTION_CONTROLLER_FINALIZER)
    others = [r for r in current.metadata.owner_references or () if not r.controller]
    meta = current.metadata.model_copy(update={"owner_references": [owner, *others],
                                               "finalizers": finalizers})
    return current.model_copy(update={"metadata": meta, "spec": spec})


def differs(current: Work, desired: Work) -> bool:
    """Whether ``desired`` (built from ``current``) needs a write."""
    return current.metadata != desired.metadata or current.spec != desired.spec


__all__ = ["desired_work", "differs", "is_synced", "manifest", "opted_out", "owned_by", "work_name"]
