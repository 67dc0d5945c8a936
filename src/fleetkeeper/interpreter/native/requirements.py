"""What one replica of a pod template needs: node claim and summed resource requests.

This is Karmada's ``GenerateReplicaRequirements`` (spec B.2.1), used by the native replica rules
and by ``kube.accuratePodRequirements`` in Lua:

* the node claim is ``{nodeSelector, tolerations, hardNodeAffinity}`` where hardNodeAffinity is the
  pod's *required* node affinity; it is None when all three are unset (an empty tolerations list
  counts as unset, an empty nodeSelector map does not);
* the resource request is the sum over containers, then the per-resource max with each init
  container, plus the pod overhead, after a limit without a request has become the request;
* only cpu, memory, ephemeral-storage, pods and scalar resources (extended, ``hugepages-*``,
  ``*kubernetes.io/*``, ``attachable-volumes-*``) count; values are rounded up to whole units
  (milli for cpu) and printed canonically: cpu as milli DecimalSI, memory, ephemeral-storage and
  hugepages as BinarySI, the rest DecimalSI; zero values are left out.

The result is a wire dict (``workv1alpha2.ReplicaRequirements``) or None when there is nothing to
require. ``priorityClassName`` and ``namespace`` are filled when the caller asks (Karmada does it
under the ``ResourceQuotaEstimate`` gate); the Lua helper leaves them out, as Karmada's does.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from fleetkeeper import errors
from fleetkeeper.api.quantity import Format, Quantity, QuantityError
from fleetkeeper.interpreter import fields

Obj = dict[str, Any]

_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def replica_requirements(template: Mapping[str, Any] | None, *, namespace: str = "",
                         with_priority: bool = True) -> Obj | None:
    """Requirements of one replica of ``template`` (a PodTemplateSpec wire dict), or None."""
    spec = fields.get_map(template, "spec")
    claim = node_claim(spec)
    request = resource_request(spec)
    if claim is None and request is None:
        return None
    out: Obj = {}
    if claim is not None:
        out["nodeClaim"] = claim
    if request is not None:
        out["resourceRequest"] = request
    if with_priority:
        if namespace:
            out["namespace"] = namespace
        priority = fields.get_str(spec, "priorityClassName")
        if priority:
            out["priorityClassName"] = priority
    return out


def node_claim(spec: Mapping[str, Any]) -> Obj | None:
    """``GenerateNodeClaimByPodSpec``: the scheduling constraints of a pod spec, or None."""
    selector = spec.get("nodeSelector")
    tolerations = fields.get_list(spec, "tolerations")
    affinity = fields.get(spec, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution")
    if selector is None and affinity is None and not tolerations:
        return None
    claim: Obj = {}
    if affinity is not None:
        claim["hardNodeAffinity"] = affinity
    if selector:
        claim["nodeSelector"] = selector
    if tolerations:
        claim["tolerations"] = tolerations
    return claim


def resource_request(spec: Mapping[str, Any]) -> Obj | None:
    """Summed requests of a pod spec as a canonical ResourceList, or None when empty."""
    total: dict[str, int] = {}
    for index, container in enumerate(fields.get_list(spec, "containers")):
        for name, amount in _requests(container, f"spec.containers[{index}]").items():
            total[name] = total.get(name, 0) + amount
    for index, container in enumerate(fields.get_list(spec, "initContainers")):
        for name, amount in _requests(container, f"spec.initContainers[{index}]").items():
            total[name] = max(total.get(name, 0), amount)
    for name, amount in _amounts(fields.get_map(spec, "overhead"), "spec.overhead").items():
        total[name] = total.get(name, 0) + amount
    out: Obj = {}
    for name in sorted(total):
        if total[name] > 0:
            out[name] = str(_render(name, total[name]))
    return out or None


def _requests(container: object, where: str) -> dict[str, int]:
    """A container's requests, a limit standing in for a missing request."""
    if not isinstance(container, Mapping):
        raise errors.InterpreterError(f"{where}: expected an object")
    requests = dict(fields.get_map(container, "resources", "requests"))
    for name, value in fields.get_map(container, "resources", "limits").items():
        requests.setdefault(name, value)
    return _amounts(requests, f"{where}.resources")


def _amounts(resources: Mapping[str, Any], where: str) -> dict[str, int]:
    """Integer amounts (milli for cpu) of the resources that count."""
    out: dict[str, int] = {}
    for name, raw in resources.items():
        try:
            quantity = Quantity.of(raw)
        except QuantityError as exc:
            raise errors.InterpreterError(f"{where}.{name}: {exc}") from exc
        if name == "cpu":
            out[name] = quantity.milli_value()
        elif name in ("memory", "ephemeral-storage", "pods") or is_scalar_resource(name):
            out[name] = quantity.int_value()
    return out


def _render(name: str, amount: int) -> Quantity:
    if name == "cpu":
        return Quantity.from_milli(amount, Format.DECIMAL_SI)
    if name in ("memory", "ephemeral-storage") or name.startswith("hugepages-"):
        return Quantity.from_int(amount, Format.BINARY_SI)
    return Quantity.from_int(amount, Format.DECIMAL_SI)


def is_scalar_resource(name: str) -> bool:
    """``IsScalarResourceName``: extended, hugepages, prefixed-native or attachable-volume."""
    return (_is_extended(name) or name.startswith("hugepages-") or "kubernetes.io/" in name
            or name.startswith("attachable-volumes-"))


def _is_extended(name: str) -> bool:
    native = "/" not in name or "kubernetes.io/" in name
    if native or name.startswith("requests."):
        return False
    prefix, _, short = ("requests." + name).rpartition("/")
    return (0 < len(short) <= 63 and bool(_QUALIFIED_NAME.match(short))
            and len(prefix) <= 253 and bool(_DNS_SUBDOMAIN.match(prefix)))
