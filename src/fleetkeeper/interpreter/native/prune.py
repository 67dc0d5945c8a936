"""Prune (spec B.3): strip a resource template of what must not travel to a member cluster.

A template copied into a ``Work`` must look like a fresh object to the member's API server, so the
control-plane bookkeeping goes: ``creationTimestamp``, ``deletionTimestamp``,
``deletionGracePeriodSeconds``, ``generation``, ``managedFields``, ``resourceVersion``, ``selfLink``,
``uid``, ``ownerReferences``, ``finalizers`` and the whole ``status``. Some kinds carry values the
control plane's own controllers generated, which would clash in the member:

* Deployment: the ``deployment.kubernetes.io/revision`` (and ``-history``) annotations;
* Job (unless ``spec.manualSelector``): the generated ``controller-uid``/``job-name`` labels in the
  selector and pod template; ``spec.ttlSecondsAfterFinished`` too when ``remove_job_ttl`` is set;
* ServiceAccount: token secrets ``<name>-token-*``; Service: an allocated ``clusterIP``/``clusterIPs``
  (``None`` — headless — is kept); a service-account-token Secret: its uid annotation and ``data``;
* PersistentVolumeClaim: the ``volume.kubernetes.io/selected-node`` annotation.

Prune is native only (no customization hook) and returns a new object.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fleetkeeper.interpreter import fields

Obj = dict[str, Any]

_METADATA = ("creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation",
             "managedFields", "resourceVersion", "selfLink", "uid", "ownerReferences", "finalizers")


def _deployment(obj: Obj) -> None:
    for key in ("deployment.kubernetes.io/revision", "deployment.kubernetes.io/revision-history"):
        fields.remove_field(obj, "metadata", "annotations", key)


def _drop_labels(obj: Obj, keys: tuple[str, ...], *path: str) -> None:
    labels = fields.get(obj, *path)
    if isinstance(labels, dict):
        for key in keys:
            labels.pop(key, None)


def _job(obj: Obj) -> None:
    if fields.get(obj, "spec", "manualSelector") is True:
        return
    _drop_labels(obj, ("controller-uid", "batch.kubernetes.io/controller-uid"),
                 "spec", "selector", "matchLabels")
    _drop_labels(obj, ("controller-uid", "job-name", "batch.kubernetes.io/controller-uid",
                       "batch.kubernetes.io/job-name"), "spec", "template", "metadata", "labels")


def _service_account(obj: Obj) -> None:
    secrets = obj.get("secrets")
    if isinstance(secrets, list) and secrets:
        prefix = f"{fields.meta(obj, 'name')}-token-"
        obj["secrets"] = [s for s in secrets
                          if not (isinstance(s, dict) and str(s.get("name", "")).startswith(prefix))]


def _service(obj: Obj) -> None:
    spec = obj.get("spec")
    if isinstance(spec, dict) and isinstance(spec.get("clusterIP"), str) and spec["clusterIP"] != "None":
        spec.pop("clusterIP", None)
        spec.pop("clusterIPs", None)


def _secret(obj: Obj) -> None:
    if obj.get("type") == "kubernetes.io/service-account-token":
        fields.remove_field(obj, "metadata", "annotations", "kubernetes.io/service-account.uid")
        obj["data"] = None


def _pvc(obj: Obj) -> None:
    if fields.get(obj, "metadata", "annotations", "volume.kubernetes.io/selected-node"):
        fields.remove_field(obj, "metadata", "annotations", "volume.kubernetes.io/selected-node")


_BY_KIND: dict[str, Callable[[Obj], None]] = {
    "Deployment": _deployment, "Job": _job, "Secret": _secret, "ServiceAccount": _service_account,
    "Service": _service, "PersistentVolumeClaim": _pvc,
}


def prune(obj: Obj, *, remove_job_ttl: bool = False) -> Obj:
    """A copy of ``obj`` without the fields listed in the module notes."""
    out = fields.deep(obj)
    for key in _METADATA:
        fields.remove_field(out, "metadata", key)
    out.pop("status", None)
    rule = _BY_KIND.get(str(out.get("kind", "")))
    if rule is not None:
        rule(out)
    if remove_job_ttl and out.get("kind") == "Job":
        fields.remove_field(out, "spec", "ttlSecondsAfterFinished")
    return out
