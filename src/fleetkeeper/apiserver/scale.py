"""The ``/scale`` subresource of workload templates (``kubectl scale deploy nginx --replicas=3``).

kubectl scales through ``…/deployments/{name}/scale`` with an ``autoscaling/v1`` Scale:
``spec.replicas`` is the template's ``spec.replicas``, ``status.replicas`` and
``status.selector`` (label-selector string form) are read from the template. A read
returns the Scale; a write (``PUT`` a Scale, or any patch of one) changes only the
template's ``spec.replicas``, with the template's resourceVersion as precondition and
the same conflict retries as other patches. Only the workload kinds Kubernetes serves
``/scale`` for are scalable, and the kinds of CustomResourceDefinitions that declare a
``scale`` subresource: for those the replicas and the selector are where the CRD says
(``specReplicasPath``, ``statusReplicasPath``, ``labelSelectorPath``).
"""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from fleetkeeper import errors
from fleetkeeper.api.crd import ScalePaths, definition
from fleetkeeper.api.kubepatch import apply_kube_json_patch
from fleetkeeper.api.patch import apply_merge_patch
from fleetkeeper.api.scheme import ResourceInfo
from fleetkeeper.apiserver.admit import shape
from fleetkeeper.apiserver.discovery import SCALABLE
from fleetkeeper.apiserver.handlers import store_update
from fleetkeeper.apiserver.request import (
    JSON,
    JSON_PATCH,
    MERGE_PATCH,
    STRATEGIC_PATCH,
    Target,
    decode,
    decode_object,
)
from fleetkeeper.apiserver.state import Context, ServerState, json_response


def _selector(obj: dict[str, Any]) -> str:
    match = ((obj.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    return ",".join(f"{k}={v}" for k, v in sorted(match.items())) if isinstance(match, dict) else ""


def declared_paths(info: ResourceInfo) -> ScalePaths | None:
    """Where a CRD-defined kind keeps its replicas (None for the built-in workloads)."""
    custom = definition(info)
    version = custom.version(info.version) if custom is not None else None
    return version.scale if version is not None else None


def _at(obj: dict[str, Any], path: str) -> Any:
    node: Any = obj
    for part in path.strip(".").split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node


def _with(obj: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """``obj`` with ``value`` at ``path`` (the dicts on the way copied, so ``obj`` is left as it was)."""
    head, _, rest = path.strip(".").partition(".")
    if not rest:
        return {**obj, head: value}
    child = obj.get(head)
    return {**obj, head: _with(child if isinstance(child, dict) else {}, rest, value)}


def to_scale(obj: dict[str, Any], paths: ScalePaths | None = None) -> dict[str, Any]:
    """The ``autoscaling/v1`` Scale of a workload template (``paths``: a CRD's declared places)."""
    meta = obj.get("metadata") or {}
    if paths is None:
        replicas, current, selector = _at(obj, "spec.replicas"), _at(obj, "status.replicas"), _selector(obj)
        replicas = 1 if replicas is None else replicas
    else:
        replicas, current = _at(obj, paths.spec_replicas) or 0, _at(obj, paths.status_replicas)
        found = _at(obj, paths.label_selector) if paths.label_selector else None
        selector = found if isinstance(found, str) else ""
    return {
        "kind": "Scale", "apiVersion": "autoscaling/v1",
        "metadata": {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                     if k in meta},
        "spec": {"replicas": replicas},
        "status": {"replicas": current or 0, "selector": selector},
    }


def _replicas(scale: Any) -> int:
    spec = scale.get("spec") if isinstance(scale, dict) else None
    replicas = spec.get("replicas") if isinstance(spec, dict) else None
    if not isinstance(replicas, int) or isinstance(replicas, bool) or not 0 <= replicas <= 2**31 - 1:
        rule = "must be an integer from 0 to 2147483647"
        raise errors.Invalid(f"spec.replicas: Invalid value: {replicas!r}: {rule}",
                             causes=[errors.Cause("spec.replicas", rule)], kind="Scale")
    return replicas


async def get_scale(state: ServerState, ctx: Context) -> Response:
    target = ctx.target
    obj = await state.store.get(target.info.group_kind, target.namespace or "", target.name or "")
    return json_response(to_scale(obj, declared_paths(target.info)))


async def write_scale(state: ServerState, ctx: Context, body: bytes, content_type: str,
                      method: str) -> Response:
    """``PUT`` a Scale or patch one; the template's ``spec.replicas`` follows."""
    target = ctx.target
    whole = Target(target.info, target.namespace, target.name, None)
    main = Context(whole, ctx.user, ctx.query, ctx.accept, ctx.user_agent)
    change: Any = decode_object(body, content_type) if method == "PUT" else decode(body, JSON)
    paths = declared_paths(target.info)
    replicas_path = paths.spec_replicas if paths is not None else ".spec.replicas"
    for attempt in range(state.config.patch_retries):
        old = await state.store.get(target.info.group_kind, target.namespace or "", target.name or "")
        scale = to_scale(old, paths)
        if method == "PUT":
            wanted = change
        elif content_type == JSON_PATCH:
            wanted = apply_kube_json_patch(scale, change)
        elif content_type in (MERGE_PATCH, STRATEGIC_PATCH):
            wanted = apply_merge_patch(scale, change)
        else:
            raise errors.UnsupportedMediaType(f"the patch type {content_type!r} is not supported for /scale")
        meta = wanted.get("metadata") if isinstance(wanted, dict) else None
        pinned = meta.get("resourceVersion") if isinstance(meta, dict) else None
        if pinned is not None and not isinstance(pinned, str):
            raise errors.BadRequest(f"metadata.resourceVersion must be a string, got {pinned!r}")
        new = shape(whole, _with(old, replicas_path, _replicas(wanted)))
        new["metadata"] = {**new["metadata"], "resourceVersion": pinned or old["metadata"]["resourceVersion"]}
        try:
            updated, warnings = await store_update(state, main, new, old)
        except errors.Conflict:
            if (pinned and pinned != old["metadata"]["resourceVersion"]) \
                    or attempt + 1 >= state.config.patch_retries:
                raise
            continue
        return json_response(to_scale(updated, paths), warnings=warnings)
    raise errors.Conflict("the object kept changing while it was scaled; try again")


__all__ = ["SCALABLE", "declared_paths", "get_scale", "to_scale", "write_scale"]
