"""What the simulated API server refuses before it stores an object, as kube-apiserver would.

Objects reach a member from Works, and a Work's manifests are whatever its writer put there:
they were not admitted as templates by the control plane. A real cluster refuses a Deployment
whose containers are not objects, a label that is a number or a ``status`` that is a string —
and the simulated workload controllers, which read these fields, rely on it. So every write
through the simulated cluster (the apply of a Work's manifest, the member API server's create,
update and patch) is checked on the result of the apply, before it is stored:

* ``metadata`` has its types (names, labels and annotations of strings, ownerReferences that
  are objects …) and ``status`` is an object;
* the kinds that describe pods, which the simulated controllers and scheduler act on, pass the
  control plane's admission (:func:`fleetkeeper.api.admission.admit`: pod templates, selectors,
  counts, names, finalizers), whose defaults are not kept — the simulated API server stores what
  was applied. Other kinds are stored as they come, as before.

A refusal is :class:`fleetkeeper.errors.Invalid` naming the field, as from a real cluster.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final

from fleetkeeper import errors
from fleetkeeper.api import admission
from fleetkeeper.api.builtin import BUILTIN
from fleetkeeper.api.jsoncopy import json_copy
from fleetkeeper.api.meta import ObjectMeta
from fleetkeeper.api.validation import FieldErrors

Obj = dict[str, Any]
#: the kinds fully admitted: the workloads and the pods the simulated cluster runs
WORKLOADS: Final = frozenset(
    {"Deployment", "StatefulSet", "ReplicaSet", "DaemonSet", "Job", "CronJob", "Pod"})


def check(obj: Obj, *, now: datetime) -> None:
    """Raise ``errors.Invalid`` when a real API server would refuse to store ``obj``."""
    api_version, kind = str(obj.get("apiVersion") or ""), str(obj.get("kind") or "")
    model = BUILTIN.get(kind) if kind in WORKLOADS else None
    if model is not None and model.API_VERSION.rpartition("/")[0] == api_version.rpartition("/")[0]:
        decoded = model.from_dict(json_copy(obj))
        admission.admit(decoded, None, operation="CREATE", now=now)
        return
    meta = obj.get("metadata")
    errs = FieldErrors()
    try:
        ObjectMeta.from_dict(meta, path="metadata")
    except errors.Invalid as exc:
        errs.causes.extend(exc.causes)
    status = obj.get("status")
    if status is not None and not isinstance(status, dict):
        errs.wrong_type("status", status, "an object")
    name = str(meta.get("name") or "") if isinstance(meta, dict) else ""
    errs.raise_if_any(kind=kind, name=name, group=api_version.rpartition("/")[0])


__all__ = ["WORKLOADS", "check"]
