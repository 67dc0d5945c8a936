"""Status decisions of the work-status and binding-status controllers, as pure functions
(Karmada: ``pkg/controllers/status``).

* **Manifest status** (work-status): one entry per manifest the member holds — the
  identifier (ordinal, group, version, kind, resource, namespace, name), the reflected
  status and the health: ``Healthy``/``Unhealthy`` from the kind's health rule
  (``Healthy`` when the kind has none), ``Unknown`` when the rule fails or when the
  member cannot be reached — then the last reflected status is kept and only its health
  turns ``Unknown``, since nobody can tell any more.
* **Aggregated status** (binding-status): one item per Work of the binding that is not
  being deleted, sorted by cluster name: not applied → ``applied: false`` with the
  ``Applied`` message and health ``Unknown``; applied → the manifest status of the
  template (matched by identifier) with its health, ``Unknown`` until one is known.
* **FullyApplied** is True iff the binding has existing clusters, one item for each, and
  every item applied.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from fleetkeeper.api import constants
from fleetkeeper.api.conditions import get_condition
from fleetkeeper.api.meta import Condition, default_plural
from fleetkeeper.api.policy import ResourceHealth
from fleetkeeper.api.scheme import SCHEME, split_api_version
from fleetkeeper.api.work import AggregatedStatusItem, ManifestStatus, ResourceIdentifier, Work
from fleetkeeper.controllers.bindings import cluster_of_work

Obj = dict[str, Any]


def identifier(ordinal: int, manifest: Obj) -> ResourceIdentifier:
    """The identifier of the ``ordinal``-th manifest of a Work."""
    api_version = str(manifest.get("apiVersion") or "")
    kind = str(manifest.get("kind") or "")
    meta = manifest.get("metadata") or {}
    group, version = split_api_version(api_version)
    info = SCHEME.lookup(api_version, kind)
    return ResourceIdentifier(ordinal=ordinal, group=group, version=version, kind=kind,
                              resource=info.plural if info is not None else default_plural(kind),
                              namespace=meta.get("namespace") or None, name=str(meta.get("name") or ""))


def health_of(verdict: bool | None) -> ResourceHealth:
    """A health rule's verdict (None: the rule failed) as a health value."""
    if verdict is None:
        return "Unknown"
    return "Healthy" if verdict else "Unhealthy"


def unknown(previous: ManifestStatus) -> ManifestStatus:
    """What is known of a manifest while its member cannot be reached."""
    return previous.model_copy(update={"health": "Unknown"})


def previous_entry(statuses: Sequence[ManifestStatus] | None,
                   ident: ResourceIdentifier) -> ManifestStatus | None:
    for entry in statuses or ():
        if entry.identifier == ident:
            return entry
    return None


def same_object(ident: ResourceIdentifier, api_version: str, kind: str, namespace: str, name: str) -> bool:
    """Whether an identifier names the template (group, kind, namespace, name)."""
    group, _ = split_api_version(api_version)
    return ((ident.group or "") == group and ident.kind == kind and (ident.namespace or "") == namespace
            and ident.name == name)


def template_ordinal(work: Work, api_version: str, kind: str, namespace: str, name: str) -> int | None:
    """The index of the template's manifest in a Work (None when the Work does not hold it)."""
    group, _ = split_api_version(api_version)
    for ordinal, manifest in enumerate(work.spec.workload.manifests or []):
        meta = manifest.get("metadata") or {}
        same_group = split_api_version(str(manifest.get("apiVersion") or ""))[0] == group
        if (same_group and manifest.get("kind") == kind and (meta.get("namespace") or "") == namespace
                and meta.get("name") == name):
            return ordinal
    return None


def aggregated_item(work: Work, api_version: str, kind: str, namespace: str,
                    name: str) -> AggregatedStatusItem:
    """The aggregated status item of one Work for the template it holds."""
    cluster = cluster_of_work(work) or ""
    applied = get_condition(work.status.conditions, constants.COND_WORK_APPLIED)
    if applied is None or applied.status != "True":
        message = applied.message if applied is not None else None
        return AggregatedStatusItem(cluster_name=cluster, applied=False, applied_message=message or None,
                                    health="Unknown")
    item = AggregatedStatusItem(cluster_name=cluster, applied=True, health="Unknown")
    if template_ordinal(work, api_version, kind, namespace, name) is None:
        return item
    for entry in work.status.manifest_statuses or ():
        if same_object(entry.identifier, api_version, kind, namespace, name):
            return item.model_copy(update={"status": entry.status, "health": entry.health or "Unknown"})
    return item


def aggregated_status(works: Iterable[Work], api_version: str, kind: str, namespace: str,
                      name: str) -> list[AggregatedStatusItem]:
    """One item per Work not being deleted, sorted by cluster name."""
    items = [aggregated_item(w, api_version, kind, namespace, name) for w in works
             if w.metadata.deletion_timestamp is None]
    return sorted(items, key=lambda item: item.cluster_name)


def fully_applied(items: Sequence[AggregatedStatusItem], existing: set[str]) -> Condition:
    """The ``FullyApplied`` condition."""
    ok = (bool(existing) and len(items) == len(existing)
          and all(item.applied and item.cluster_name in existing for item in items))
    if ok:
        return Condition(type=constants.COND_FULLY_APPLIED, status="True",
                         reason=constants.REASON_FULLY_APPLIED_SUCCESS,
                         message=constants.MSG_FULLY_APPLIED_SUCCESS)
    return Condition(type=constants.COND_FULLY_APPLIED, status="False",
                     reason=constants.REASON_FULLY_APPLIED_FAILED, message=constants.MSG_FULLY_APPLIED_FAILED)


__all__ = [
    "aggregated_item", "aggregated_status", "fully_applied", "health_of", "identifier", "previous_entry",
    "same_object", "template_ordinal", "unknown",
]
