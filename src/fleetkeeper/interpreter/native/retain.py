"""Native Retain (spec B.2.3): keep what the member cluster owns when re-applying a template.

Before the control plane updates an object that already exists in a member cluster, it copies
back the fields the member (or its controllers) set and the template must not fight over:

* Deployment: ``spec.replicas`` from the member, but only when the template carries the label
  ``resourcetemplate.karmada.io/retain-replicas: "true"`` (an HPA in the member scales it);
* Pod: ``nodeName``, ``serviceAccountName``, ``volumes`` and per-container ``volumeMounts``
  (the scheduler and admission set them; they are immutable);
* Service: a positive ``healthCheckNodePort`` and a non-empty ``clusterIP`` (allocated by the member);
* ServiceAccount: ``secrets`` and ``imagePullSecrets`` merged, template entries first, then member
  entries whose name is new; the field is written even when both are empty (as ``None``);
* PersistentVolumeClaim ``volumeName``; PersistentVolume ``claimRef`` (binding results);
* Job: the generated ``spec.selector.matchLabels`` and template labels (immutable once set);
* Secret of type ``kubernetes.io/service-account-token``: the token ``data`` the member minted.

Every rule returns a new object; the inputs are left untouched.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fleetkeeper import errors
from fleetkeeper.interpreter import fields

Obj = dict[str, Any]
RETAIN_REPLICAS_LABEL = "resourcetemplate.karmada.io/retain-replicas"


def _deployment(desired: Obj, observed: Obj) -> Obj:
    labels = fields.get_map(desired, "metadata", "labels")
    if labels.get(RETAIN_REPLICAS_LABEL) != "true":
        return fields.deep(desired)
    replicas = fields.get(observed, "spec", "replicas")
    if replicas is None or isinstance(replicas, bool) or not isinstance(replicas, int | float) or (
            isinstance(replicas, float) and not replicas.is_integer()):
        raise errors.InterpreterError(
            f"failed to get spec.replicas from {observed.get('kind', '')} "
            f"{fields.meta(observed, 'namespace')}/{fields.meta(observed, 'name')}")
    out = fields.deep(desired)
    fields.set_field(out, int(replicas), "spec", "replicas")
    return out


def _copy_mounts(desired: list[Any], observed: list[Any]) -> None:
    for have in observed:
        if not isinstance(have, dict):
            continue
        for want in desired:
            if isinstance(want, dict) and want.get("name") == have.get("name"):
                _set_or_drop(want, "volumeMounts", fields.deep(have.get("volumeMounts")))
                break


def _set_or_drop(obj: Obj, key: str, value: Any) -> None:
    """Assign like a typed Go field: an empty slice or string leaves the key out."""
    if value in (None, "", []):
        obj.pop(key, None)
    else:
        obj[key] = value


def _pod(desired: Obj, observed: Obj) -> Obj:
    out = fields.deep(desired)
    spec = fields.ensure_map(out, "spec")
    have = fields.get_map(observed, "spec")
    for key in ("nodeName", "serviceAccountName", "volumes"):
        _set_or_drop(spec, key, fields.deep(have.get(key)))
    for key in ("containers", "initContainers"):
        _copy_mounts(fields.get_list(spec, key), fields.get_list(have, key))
    return out


def _service(desired: Obj, observed: Obj) -> Obj:
    out = fields.deep(desired)
    port = fields.get(observed, "spec", "healthCheckNodePort")
    if port is not None and fields.as_int(port, "spec.healthCheckNodePort") > 0:
        fields.set_field(out, int(port), "spec", "healthCheckNodePort")
    cluster_ip = fields.get_str(observed, "spec", "clusterIP")
    if cluster_ip:
        fields.set_field(out, cluster_ip, "spec", "clusterIP")
    return out


def _merge_named(desired: list[Any], observed: list[Any]) -> list[Any] | None:
    merged: list[Any] = []
    seen: set[Any] = set()
    for entry in [*desired, *observed]:
        name = entry.get("name") if isinstance(entry, dict) else None
        if name in seen:
            continue
        seen.add(name)
        merged.append(fields.deep(entry))
    return merged or None


def _service_account(desired: Obj, observed: Obj) -> Obj:
    out = fields.deep(desired)
    for key in ("secrets", "imagePullSecrets"):
        out[key] = _merge_named(fields.get_list(desired, key), fields.get_list(observed, key))
    return out


def _pvc(desired: Obj, observed: Obj) -> Obj:
    out = fields.deep(desired)
    volume = fields.get_str(observed, "spec", "volumeName")
    if volume:
        fields.set_field(out, volume, "spec", "volumeName")
    return out


def _pv(desired: Obj, observed: Obj) -> Obj:
    out = fields.deep(desired)
    spec = observed.get("spec")
    if isinstance(spec, dict) and "claimRef" in spec:
        fields.set_field(out, fields.deep(spec["claimRef"]), "spec", "claimRef")
    return out


def _string_map(obj: Obj, *path: str) -> dict[str, str] | None:
    value = fields.get(obj, *path)
    if value is None:
        return None
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise errors.InterpreterError(f"{'.'.join(path)}: expected a map of strings")
    return dict(value)


def _job(desired: Obj, observed: Obj) -> Obj:
    out = fields.deep(desired)
    for path in (("spec", "selector", "matchLabels"), ("spec", "template", "metadata", "labels")):
        labels = _string_map(observed, *path)
        if labels is not None:
            fields.set_field(out, labels, *path)
    return out


def _secret(desired: Obj, observed: Obj) -> Obj:
    out = fields.deep(desired)
    if desired.get("type") == "kubernetes.io/service-account-token":
        data = _string_map(observed, "data")
        if data is not None:
            out["data"] = data
    return out


RETAIN: dict[tuple[str, str], Callable[[Obj, Obj], Obj]] = {
    ("apps/v1", "Deployment"): _deployment,
    ("v1", "Pod"): _pod,
    ("v1", "Service"): _service,
    ("v1", "ServiceAccount"): _service_account,
    ("v1", "PersistentVolumeClaim"): _pvc,
    ("v1", "PersistentVolume"): _pv,
    ("batch/v1", "Job"): _job,
    ("v1", "Secret"): _secret,
}
