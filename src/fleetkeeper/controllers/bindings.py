"""What differs between the two binding kinds, and how Works point back at their binding.

A binding of either kind is :data:`fleetkeeper.api.work.Binding` (the kind a key names,
the template it stands for: :mod:`fleetkeeper.api.work`), and both kinds' caches are
:class:`fleetkeeper.runtime.bindings.BindingInformers`. The per-kind facts the pipeline
writes (permanent-id label, finalizer, reference annotations) live here, next to the index
every Work-reading controller shares.

Works find their binding two ways, as in Karmada: by the binding's permanent-id label
(the ``binding-id`` index of the shared Work informer, used to list a binding's Works)
and by the binding-reference annotations (used to map a Work event to the binding's
key). :func:`ensure_work_index` adds the index once per informer, whichever controller
asks first. This is a helper module, not a controller.
"""

from __future__ import annotations

import contextlib
import functools
import uuid

from fleetkeeper.api import constants
from fleetkeeper.api.work import Binding, ClusterResourceBinding, Work
from fleetkeeper.runtime.informer import Informer
from fleetkeeper.runtime.reconcile import Request

#: the index of the shared Work informer: ``rb:<id>`` / ``crb:<id>``
WORKS_BY_BINDING_ID = "binding-id"
#: the index of the shared Work informer by namespace (= member cluster)
WORKS_BY_NAMESPACE = "namespace"

#: the namespace of the deterministic ids fleetkeeper derives (uuid5), so runs repeat
_ID_NAMESPACE = uuid.UUID("5c1f1d6e-0b4e-4a43-9d39-6a8f3e2b7c10")


@functools.lru_cache(maxsize=16384)
def derive_id(*parts: str) -> str:
    """A permanent id derived from stable inputs (a uid, a name): the same every run (and
    remembered: the binding controller derives every Work's id on every pass)."""
    return str(uuid.uuid5(_ID_NAMESPACE, "/".join(parts)))


def is_cluster_scoped(binding: Binding) -> bool:
    return isinstance(binding, ClusterResourceBinding)


def id_label(namespaced: bool) -> str:
    """The binding permanent-id label key of a kind (also put on Works and member objects)."""
    return constants.RB_PERMANENT_ID_LABEL if namespaced else constants.CRB_PERMANENT_ID_LABEL


def binding_id(binding: Binding) -> str:
    """The binding's permanent id (``""`` when it has none yet)."""
    return binding.labels().get(id_label(not is_cluster_scoped(binding)), "")


def finalizer(namespaced: bool) -> str:
    """The binding controller's finalizer on a binding of this kind."""
    return (constants.BINDING_CONTROLLER_FINALIZER if namespaced
            else constants.CLUSTER_RESOURCE_BINDING_CONTROLLER_FINALIZER)


def reference_annotations(binding: Binding) -> dict[str, str]:
    """The annotations that point a Work (and its manifest) at the binding."""
    if is_cluster_scoped(binding):
        return {constants.CRB_NAME_ANNOTATION: binding.name}
    return {constants.RB_NAMESPACE_ANNOTATION: binding.namespace, constants.RB_NAME_ANNOTATION: binding.name}


def binding_request_of_work(work: Work) -> Request | None:
    """The key of the binding a Work belongs to, from its reference annotations."""
    annotations = work.annotations()
    name = annotations.get(constants.RB_NAME_ANNOTATION)
    if name:
        return Request(annotations.get(constants.RB_NAMESPACE_ANNOTATION, ""), name)
    name = annotations.get(constants.CRB_NAME_ANNOTATION)
    return Request("", name) if name else None


def work_index_values(work: Work) -> list[str]:
    labels = work.labels()
    out = []
    if labels.get(constants.RB_PERMANENT_ID_LABEL):
        out.append("rb:" + labels[constants.RB_PERMANENT_ID_LABEL])
    if labels.get(constants.CRB_PERMANENT_ID_LABEL):
        out.append("crb:" + labels[constants.CRB_PERMANENT_ID_LABEL])
    return out


def ensure_work_index(works: Informer[Work]) -> None:
    """Index the shared Work informer by binding permanent id (once, whoever asks first)."""
    with contextlib.suppress(ValueError):  # another controller of the pipeline added it already
        works.add_indexer(WORKS_BY_BINDING_ID, work_index_values)


def ensure_namespace_index(works: Informer[Work]) -> None:
    """Index the shared Work informer by namespace, i.e. by member cluster (once)."""
    with contextlib.suppress(ValueError):
        works.add_indexer(WORKS_BY_NAMESPACE, lambda work: [work.namespace])


def works_in_cluster(works: Informer[Work], cluster: str) -> list[Work]:
    """The cached Works of one member cluster."""
    return works.by_index(WORKS_BY_NAMESPACE, constants.execution_namespace(cluster))


def works_of(works: Informer[Work], binding: Binding) -> list[Work]:
    """The cached Works carrying the binding's permanent id (sorted by key)."""
    ident = binding_id(binding)
    if not ident:
        return []
    prefix = "crb:" if is_cluster_scoped(binding) else "rb:"
    return works.by_index(WORKS_BY_BINDING_ID, prefix + ident)


def works_selector(binding: Binding) -> str:
    """A label selector for the binding's Works (for live lists)."""
    return f"{id_label(not is_cluster_scoped(binding))}={binding_id(binding)}"


def cluster_of_work(work: Work) -> str | None:
    """The member cluster a Work is for (from its execution namespace), or None."""
    try:
        return constants.cluster_of_execution_namespace(work.namespace)
    except ValueError:
        return None


__all__ = [
    "WORKS_BY_BINDING_ID",
    "WORKS_BY_NAMESPACE",
    "binding_id",
    "binding_request_of_work",
    "cluster_of_work",
    "derive_id",
    "ensure_namespace_index",
    "ensure_work_index",
    "finalizer",
    "id_label",
    "is_cluster_scoped",
    "reference_annotations",
    "work_index_values",
    "works_in_cluster",
    "works_of",
    "works_selector",
]
