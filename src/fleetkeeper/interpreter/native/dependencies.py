"""Native GetDependencies (spec B.2.6): what else must travel with a workload to each cluster.

A Deployment is useless in a cluster that lacks the ConfigMaps, Secrets, ServiceAccount and
PersistentVolumeClaims its pods mount or read, so the dependencies distributor propagates them
too. For every kind with a pod template (Deployment, ReplicaSet, StatefulSet, DaemonSet, Job,
CronJob through ``spec.jobTemplate``, and Pod itself) the references are collected from:

* ConfigMaps: ``envFrom[].configMapRef``, ``env[].valueFrom.configMapKeyRef`` in every init,
  regular and ephemeral container; ``configMap`` and ``projected`` volume sources;
* Secrets: ``imagePullSecrets``, ``envFrom[].secretRef``, ``env[].valueFrom.secretKeyRef``, and the
  secret of a volume — only the *first* set volume source is inspected, in Kubernetes' order;
* the ServiceAccount, unless it is empty or ``default``; PVCs from ``persistentVolumeClaim`` volumes.

A StatefulSet's PVCs that come from its own ``volumeClaimTemplates`` are not dependencies. An
Ingress depends on its TLS secrets; a ServiceImport on its derived Service and EndpointSlices.
Every reference is ``{apiVersion, kind, namespace, name}`` (or a labelSelector), and the result is
validated like Karmada's ``VerifyDependencies``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from fleetkeeper import errors
from fleetkeeper.interpreter import fields

Obj = dict[str, Any]

#: Volume sources that may name a secret, in the order Kubernetes inspects them, with the path of
#: the secret name inside the source.
_SECRET_VOLUME_SOURCES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("azureFile", ("secretName",)), ("cephfs", ("secretRef", "name")), ("cinder", ("secretRef", "name")),
    ("flexVolume", ("secretRef", "name")), ("projected", ()), ("rbd", ("secretRef", "name")),
    ("secret", ("secretName",)), ("scaleIO", ("secretRef", "name")), ("iscsi", ("secretRef", "name")),
    ("storageos", ("secretRef", "name")), ("csi", ("nodePublishSecretRef", "name")),
)


def _containers(spec: Mapping[str, Any]) -> Iterator[Obj]:
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for container in fields.get_list(spec, key):
            if isinstance(container, dict):
                yield container


def _env_refs(container: Obj, from_key: str, key_ref: str) -> Iterator[str]:
    for source in fields.get_list(container, "envFrom"):
        yield fields.get_str(source, from_key, "name")
    for var in fields.get_list(container, "env"):
        yield fields.get_str(var, "valueFrom", key_ref, "name")


def _config_maps(spec: Mapping[str, Any]) -> Iterator[str]:
    for container in _containers(spec):
        yield from _env_refs(container, "configMapRef", "configMapKeyRef")
    for volume in fields.get_list(spec, "volumes"):
        if fields.get(volume, "projected") is not None:
            for source in fields.get_list(volume, "projected", "sources"):
                yield fields.get_str(source, "configMap", "name")
        elif fields.get(volume, "configMap") is not None:
            yield fields.get_str(volume, "configMap", "name")


def _secrets(spec: Mapping[str, Any]) -> Iterator[str]:
    for ref in fields.get_list(spec, "imagePullSecrets"):
        yield fields.get_str(ref, "name")
    for container in _containers(spec):
        yield from _env_refs(container, "secretRef", "secretKeyRef")
    for volume in fields.get_list(spec, "volumes"):
        for source, path in _SECRET_VOLUME_SOURCES:
            if fields.get(volume, source) is None:
                continue
            if source == "projected":
                for item in fields.get_list(volume, "projected", "sources"):
                    yield fields.get_str(item, "secret", "name")
            else:
                yield fields.get_str(volume, source, *path)
            break


def _pvcs(spec: Mapping[str, Any]) -> Iterator[str]:
    for volume in fields.get_list(spec, "volumes"):
        yield fields.get_str(volume, "persistentVolumeClaim", "claimName")


def _unique(names: Iterator[str]) -> list[str]:
    return sorted({name for name in names if name})


def pod_dependencies(spec: Mapping[str, Any], namespace: str) -> list[Obj]:
    """References a pod spec needs, ConfigMaps, Secrets, ServiceAccounts then PVCs."""
    account = fields.get_str(spec, "serviceAccountName")
    groups = (
        ("ConfigMap", _unique(_config_maps(spec))),
        ("Secret", _unique(_secrets(spec))),
        ("ServiceAccount", [account] if account and account != "default" else []),
        ("PersistentVolumeClaim", _unique(_pvcs(spec))),
    )
    return [{"apiVersion": "v1", "kind": kind, "namespace": namespace, "name": name}
            for kind, names in groups for name in names]


def _template_kind(*path: str) -> Callable[[Obj], list[Obj]]:
    def dependencies(obj: Obj) -> list[Obj]:
        return pod_dependencies(fields.get_map(obj, *path, "spec"), fields.meta(obj, "namespace"))

    return dependencies


def _pod(obj: Obj) -> list[Obj]:
    return pod_dependencies(fields.get_map(obj, "spec"), fields.meta(obj, "namespace"))


def _stateful_set(obj: Obj) -> list[Obj]:
    deps = _template_kind("spec", "template")(obj)
    templates = fields.get_list(obj, "spec", "volumeClaimTemplates")
    claims = {fields.get_str(t, "metadata", "name") for t in templates}
    return [d for d in deps if d["kind"] != "PersistentVolumeClaim" or d["name"] not in claims]


def _ingress(obj: Obj) -> list[Obj]:
    namespace = fields.meta(obj, "namespace")
    return [{"apiVersion": "v1", "kind": "Secret", "namespace": namespace,
             "name": fields.get_str(tls, "secretName")} for tls in fields.get_list(obj, "spec", "tls")]


def _service_import(obj: Obj) -> list[Obj]:
    namespace, derived = fields.meta(obj, "namespace"), "derived-" + fields.meta(obj, "name")
    return [
        {"apiVersion": "v1", "kind": "Service", "namespace": namespace, "name": derived},
        {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "namespace": namespace,
         "labelSelector": {"matchLabels": {"kubernetes.io/service-name": derived}}},
    ]


GET_DEPENDENCIES: dict[tuple[str, str], Callable[[Obj], list[Obj]]] = {
    ("apps/v1", "Deployment"): _template_kind("spec", "template"),
    ("apps/v1", "ReplicaSet"): _template_kind("spec", "template"),
    ("apps/v1", "DaemonSet"): _template_kind("spec", "template"),
    ("apps/v1", "StatefulSet"): _stateful_set,
    ("batch/v1", "Job"): _template_kind("spec", "template"),
    ("batch/v1", "CronJob"): _template_kind("spec", "jobTemplate", "spec", "template"),
    ("v1", "Pod"): _pod,
    ("networking.k8s.io/v1", "Ingress"): _ingress,
    ("multicluster.x-k8s.io/v1alpha1", "ServiceImport"): _service_import,
}

_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
_LABEL_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_OPERATORS = {"In", "NotIn", "Exists", "DoesNotExist"}


def verify(dependencies: list[Obj]) -> list[Obj]:
    """``VerifyDependencies``: every reference names its kind and an object or a selector."""
    problems: list[str] = []
    for index, dep in enumerate(dependencies):
        where = f"dependencies[{index}]"
        if not dep.get("apiVersion"):
            problems.append(f"{where}.apiVersion: Invalid value: \"\": missing required apiVersion")
        if not dep.get("kind"):
            problems.append(f"{where}.kind: Invalid value: \"\": missing required kind")
        if not dep.get("name") and dep.get("labelSelector") is None:
            problems.append(f"{where}: Invalid value: dependency can not leave name and labelSelector "
                            "all empty")
        problems.extend(_selector_problems(dep.get("labelSelector"), f"{where}.labelSelector"))
    if problems:
        raise errors.InterpreterError("; ".join(problems))
    return dependencies


def _selector_problems(selector: object, where: str) -> list[str]:
    if selector is None:
        return []
    if not isinstance(selector, Mapping):
        return [f"{where}: expected an object"]
    problems = []
    for key, value in (selector.get("matchLabels") or {}).items():
        if not _valid_label_key(key):
            problems.append(f"{where}.matchLabels: Invalid value: {key!r}: not a valid label key")
        if not isinstance(value, str) or len(value) > 63 or not _LABEL_VALUE.fullmatch(value):
            problems.append(f"{where}.matchLabels: Invalid value: {value!r}: not a valid label value")
    for index, expr in enumerate(selector.get("matchExpressions") or []):
        problems.extend(_expression_problems(expr, f"{where}.matchExpressions[{index}]"))
    return problems


def _expression_problems(expr: object, where: str) -> list[str]:
    if not isinstance(expr, Mapping):
        return [f"{where}: expected an object"]
    operator, values = expr.get("operator"), expr.get("values") or []
    problems = []
    if operator not in _OPERATORS:
        problems.append(f"{where}.operator: Invalid value: {operator!r}: not a valid selector operator")
    elif operator in ("In", "NotIn") and not values:
        problems.append(f"{where}.values: Required value: must be specified when `operator` is "
                        "'In' or 'NotIn'")
    elif operator in ("Exists", "DoesNotExist") and values:
        problems.append(f"{where}.values: Forbidden: may not be specified when `operator` is "
                        "'Exists' or 'DoesNotExist'")
    if not _valid_label_key(expr.get("key")):
        problems.append(f"{where}.key: Invalid value: {expr.get('key')!r}: not a valid label key")
    return problems


def _valid_label_key(key: object) -> bool:
    if not isinstance(key, str):
        return False
    prefix, _, name = key.rpartition("/")
    if "/" in key and (not prefix or len(prefix) > 253 or not _DNS_SUBDOMAIN.fullmatch(prefix)):
        return False
    return 0 < len(name) <= 63 and bool(_LABEL_NAME.fullmatch(name))
