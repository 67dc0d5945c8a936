"""Admission of Cluster objects: the defaulting and validation Karmada's cluster API applies.

Defaulting (on every write): a lone deprecated ``zone`` moves into ``zones``;
``NoExecute`` taints without ``timeAdded`` get ``now``. Resource models: on create an
empty list becomes the default 9-grade cpu/memory model; a given list is normalised
(sorted by grade, first-grade minimums 0, last-grade maximums MaxInt64).

Validation: the name is an RFC 1123 label of at most 48 characters (15 are reserved for
the ``karmada-es-`` prefix); endpoints are URLs with a host (or fleetkeeper's
``kube://CONTEXT`` / ``kube:///path/to/kubeconfig#CONTEXT``); provider/region/zones are
label values; taints have qualified keys, an effect of NoSchedule or NoExecute and are
unique by key and effect; resource models are ordered, aligned and contiguous.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Final
from urllib.parse import urlsplit

from fleetkeeper.api import constants, validation
from fleetkeeper.api.cluster import Cluster, ClusterSpec, ResourceModel, ResourceModelRange
from fleetkeeper.api.quantity import MAX_INT64, parse_quantity
from fleetkeeper.api.validation import FieldErrors

_MAX: Final = str(MAX_INT64)
_CPU_BOUNDS: Final = ("0", "1", "2", "4", "8", "16", "32", "64", "128", _MAX)
_MEMORY_BOUNDS: Final = ("0", "4Gi", "16Gi", "32Gi", "64Gi", "128Gi", "256Gi", "512Gi", "1Ti", _MAX)


def default_resource_models() -> list[ResourceModel]:
    """Karmada's default model: 9 grades of cpu (0–1–2–4…128–∞) and memory (0–4Gi–16Gi…1Ti–∞)."""
    return [
        ResourceModel(grade=g, ranges=[
            ResourceModelRange(name="cpu", min=_CPU_BOUNDS[g], max=_CPU_BOUNDS[g + 1]),
            ResourceModelRange(name="memory", min=_MEMORY_BOUNDS[g], max=_MEMORY_BOUNDS[g + 1]),
        ])
        for g in range(9)
    ]


def standardize_resource_models(models: list[ResourceModel]) -> list[ResourceModel]:
    """Sorted by grade; first grade's minimums are 0 and last grade's maximums MaxInt64."""
    out = sorted((m.model_copy(deep=True) for m in models), key=lambda m: m.grade)
    if out:
        for r in out[0].ranges:
            r.min = "0"
        for r in out[-1].ranges:
            r.max = _MAX
    return out


def default_cluster(cluster: Cluster, *, creating: bool, now: datetime) -> None:
    """Apply the cluster defaults to ``cluster`` in place (it is the caller's copy)."""
    spec = cluster.spec
    if cluster.metadata.namespace:
        cluster.metadata.namespace = None
    for taint in spec.taints or ():
        if taint.effect == constants.EFFECT_NO_EXECUTE and taint.time_added is None:
            taint.time_added = now
    if spec.resource_models:
        spec.resource_models = standardize_resource_models(spec.resource_models)
    elif creating:
        spec.resource_models = default_resource_models()


def migrate_zone(spec: ClusterSpec) -> None:
    """Move a lone deprecated ``zone`` into ``zones`` (after validation, like Karmada)."""
    if spec.zone and not spec.zones:
        spec.zones = [spec.zone]
        spec.zone = None


def validate_cluster(cluster: Cluster, errs: FieldErrors) -> None:
    """Record every problem of ``cluster`` in ``errs``."""
    _validate_name(cluster.name, errs)
    spec = cluster.spec
    if spec.api_endpoint:
        _validate_endpoint("spec.apiEndpoint", spec.api_endpoint, errs)
    refs = (("secretRef", spec.secret_ref), ("impersonatorSecretRef", spec.impersonator_secret_ref))
    for field, ref in refs:
        if ref is not None:
            if not ref.namespace:
                errs.required(f"spec.{field}.namespace")
            if not ref.name:
                errs.required(f"spec.{field}.name")
    if spec.proxy_url:
        _validate_proxy("spec.proxyURL", spec.proxy_url, errs)
    _validate_location(spec, errs)
    _validate_taints(spec, errs)
    if spec.resource_models:
        _validate_models(spec.resource_models, errs)


def _validate_name(name: str, errs: FieldErrors) -> None:
    if not name:
        errs.required("metadata.name", "name or generateName is required")
    elif len(name) > constants.CLUSTER_NAME_MAX_LENGTH:
        errs.invalid("metadata.name", name,
                     f"must be no more than {constants.CLUSTER_NAME_MAX_LENGTH} characters")
    else:
        errs.invalid_all("metadata.name", name, validation.dns1123_label(name))


def _validate_endpoint(path: str, endpoint: str, errs: FieldErrors) -> None:
    if endpoint.startswith("kube://"):
        _validate_kube_endpoint(path, endpoint, errs)
        return
    form = "; desired format: hostname, hostname:port, IP or IP:port"
    try:
        parts = urlsplit(endpoint)
        host = parts.hostname
    except ValueError as exc:
        errs.invalid(path, endpoint, f"apiEndpoint must be a valid URL: {exc}{form}")
        return
    if not host:
        errs.invalid(path, endpoint, "host must be provided" + form)
    if "@" in parts.netloc:
        errs.invalid(path, endpoint, "user information is not permitted in the URL")
    if parts.fragment:
        errs.invalid(path, endpoint, "fragments are not permitted in the URL")
    if parts.query:
        errs.invalid(path, endpoint, "query parameters are not permitted in the URL")


def _validate_kube_endpoint(path: str, endpoint: str, errs: FieldErrors) -> None:
    """A kubeconfig context: ``kube://CONTEXT`` (of the plane's default kubeconfig) or
    ``kube:///path/to/kubeconfig#CONTEXT``, without parameters."""
    location, _, fragment = endpoint[len("kube://"):].partition("#")
    if "?" in location:
        errs.invalid(path, endpoint, "query parameters are not permitted in the URL")
    if fragment and not location.startswith("/"):
        errs.invalid(path, endpoint, "a #CONTEXT goes with a kubeconfig path: kube:///path/to/kubeconfig#CONTEXT")


def _validate_proxy(path: str, proxy: str, errs: FieldErrors) -> None:
    scheme = urlsplit(proxy).scheme
    if scheme not in ("http", "https", "socks5"):
        errs.invalid(path, proxy, f'unsupported scheme "{scheme}", must be http, https, or socks5')


def _validate_location(spec: ClusterSpec, errs: FieldErrors) -> None:
    for field, value in (("provider", spec.provider), ("region", spec.region), ("zone", spec.zone)):
        if value:
            errs.invalid_all(f"spec.{field}", value, validation.label_value(value))
    if spec.zone and spec.zones:
        errs.invalid("spec.zone", spec.zone, "zone and zones cannot co-exist (zone is deprecated, use zones)")
    for i, zone in enumerate(spec.zones or ()):
        errs.invalid_all(f"spec.zones[{i}]", zone, validation.label_value(zone))


def _validate_taints(spec: ClusterSpec, errs: FieldErrors) -> None:
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(spec.taints or ()):
        path = f"spec.taints[{i}]"
        errs.invalid_all(f"{path}.key", taint.key, validation.qualified_name(taint.key))
        if taint.value:
            errs.invalid_all(f"{path}.value", taint.value, validation.label_value(taint.value))
        if taint.effect not in constants.CLUSTER_TAINT_EFFECTS:
            errs.not_supported(f"{path}.effect", taint.effect, sorted(constants.CLUSTER_TAINT_EFFECTS))
        identity = (taint.key, taint.effect)
        if identity in seen:
            errs.duplicate(path, f"taints must be unique by key and effect pair ({taint.key}:{taint.effect})")
        seen.add(identity)


def _model_problem(models: list[ResourceModel]) -> str | None:
    bounds: list[list[tuple[Decimal, Decimal]]] = [
        [(parse_quantity(r.min), parse_quantity(r.max)) for r in m.ranges] for m in models]
    for i, model in enumerate(models):
        prev = models[i - 1] if i else None
        if prev is not None and prev.grade == model.grade:
            return "the grade of each model must be unique"
        if prev is not None and len(prev.ranges) != len(model.ranges):
            return "the number of resource types must be the same in every model"
        for j, rng in enumerate(model.ranges):
            low, high = bounds[i][j]
            if high <= low:
                return "the max value of each resource must be greater than the min value"
            if prev is None and low != 0:
                return "the min value of each resource in the first model must be 0"
            if prev is not None and prev.ranges[j].name != rng.name:
                return "the resource types of each model must be the same and in the same order"
            if prev is not None and bounds[i - 1][j][1] != low:
                return "model intervals for resources must be contiguous and non-overlapping"
            if i == len(models) - 1 and high < MAX_INT64:
                return "the max value of each resource in the last model must be MaxInt64"
    return None


def _validate_models(models: list[ResourceModel], errs: FieldErrors) -> None:
    parsable = True
    for i, model in enumerate(models):
        for j, rng in enumerate(model.ranges):
            for field in ("min", "max"):
                value = getattr(rng, field)
                try:
                    parse_quantity(value)
                except ValueError as exc:
                    parsable = False
                    errs.invalid(f"spec.resourceModels[{i}].ranges[{j}].{field}", value, str(exc))
    if not parsable:
        return
    problem = _model_problem(models)
    if problem:
        errs.invalid("spec.resourceModels", None, problem)


__all__ = [
    "default_cluster", "default_resource_models", "migrate_zone", "standardize_resource_models",
    "validate_cluster",
]
