"""``PATCH``: JSON merge patch, JSON patch, strategic merge patch and server-side apply.

A patch is read-modify-write: read the stored object, apply the patch to a copy, run
admission, and write it back with the read ``resourceVersion`` as precondition. When a
concurrent writer wins that race the whole cycle is retried (up to
``ServerConfig.patch_retries``) — unless the *patch itself* named a resourceVersion,
which is the client's own precondition and answers ``409 Conflict`` at once.

Strategic merge patch is what kubectl sends for kinds compiled into it: for the kinds
fleetkeeper keeps unstructured (Deployment …) it is applied with merge keys
(:mod:`fleetkeeper.apiserver.strategic`); for fleetkeeper's typed kinds (whose lists
are atomic, like custom resources) it is read as a merge patch. Server-side apply
(:mod:`fleetkeeper.api.serverapply`) creates the object when it is absent (``201``).
"""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from fleetkeeper import errors
from fleetkeeper.api import serverapply as ssa
from fleetkeeper.api.jsoncopy import json_copy
from fleetkeeper.api.kubepatch import apply_kube_json_patch
from fleetkeeper.api.meta import Unstructured
from fleetkeeper.api.patch import apply_merge_patch
from fleetkeeper.apiserver import escalation, namespaces
from fleetkeeper.apiserver.admit import admit_object, check_strict, shape
from fleetkeeper.apiserver.fieldcheck import duplicate_fields
from fleetkeeper.apiserver.handlers import store_update
from fleetkeeper.apiserver.request import (
    APPLY_PATCH,
    JSON,
    JSON_PATCH,
    MERGE_PATCH,
    STRATEGIC_PATCH,
    decode,
    decode_object,
)
from fleetkeeper.apiserver.state import Context, ServerState, json_response
from fleetkeeper.apiserver.strategic import strategic_merge, strip_directives


def _patched(ctx: Context, old: dict[str, Any], patch: Any, content_type: str) -> dict[str, Any]:
    if content_type == JSON_PATCH:
        result = apply_kube_json_patch(old, patch)
    elif not isinstance(patch, dict):
        raise errors.BadRequest("a merge patch must be a JSON object")
    elif content_type == STRATEGIC_PATCH and issubclass(ctx.target.info.model, Unstructured):
        result = strategic_merge(old, patch)
    elif content_type == STRATEGIC_PATCH:
        result = apply_merge_patch(old, strip_directives(patch))
    else:
        result = apply_merge_patch(old, patch)
    if not isinstance(result, dict):
        raise errors.BadRequest("the patch does not leave a JSON object")
    return result


def _rv(obj: dict[str, Any]) -> str | None:
    meta = obj.get("metadata")
    value = meta.get("resourceVersion") if isinstance(meta, dict) else None
    return str(value) if value else None


async def _read(state: ServerState, ctx: Context) -> dict[str, Any]:
    target = ctx.target
    return await state.store.get(target.info.group_kind, target.namespace or "", target.name or "")


async def patch_object(state: ServerState, ctx: Context, body: bytes, content_type: str) -> Response:
    """Apply a merge, JSON or strategic patch (``content_type`` says which)."""
    if content_type == APPLY_PATCH:
        return await apply_object(state, ctx, body)
    if content_type not in (MERGE_PATCH, JSON_PATCH, STRATEGIC_PATCH):
        raise errors.UnsupportedMediaType(
            f"the patch type {content_type!r} is not supported; use {MERGE_PATCH}, {JSON_PATCH}, "
            f"{STRATEGIC_PATCH} or {APPLY_PATCH}")
    patch = decode(body, JSON)
    ctx.patching = True
    if ctx.field_validation(state.config.default_field_validation) != "Ignore":
        ctx.duplicates = duplicate_fields(body)
    for attempt in range(state.config.patch_retries):
        old = await _read(state, ctx)
        new = shape(ctx.target, _patched(ctx, old, patch, content_type))
        wanted = _rv(new)
        own_precondition = wanted is not None and wanted != _rv(old)
        if wanted is None:
            new["metadata"]["resourceVersion"] = _rv(old)
        try:
            updated, warnings = await store_update(state, ctx, new, old)
        except errors.Conflict:
            if own_precondition or attempt + 1 >= state.config.patch_retries:
                raise
            continue
        return json_response(updated, warnings=warnings)
    raise errors.Conflict("the object kept changing while the patch was applied; try again")


async def apply_object(state: ServerState, ctx: Context, body: bytes) -> Response:
    """Server-side apply: merge the manager's intent, with ownership and conflicts."""
    target = ctx.target
    manager = ctx.param("fieldManager")
    if not manager:
        raise errors.BadRequest("fieldManager is required for apply requests")
    intent = shape(target, decode_object(body, APPLY_PATCH))
    ctx.patching = True
    validation = ctx.field_validation(state.config.default_field_validation)
    if validation != "Ignore":
        ctx.duplicates = duplicate_fields(body)
    if validation == "Strict":
        check_strict(target.info, intent, duplicates=ctx.duplicates)
    own_precondition = _rv(intent) is not None
    for attempt in range(state.config.patch_retries):
        try:
            live: dict[str, Any] | None = await _read(state, ctx)
        except errors.NotFound:
            if target.subresource is not None:
                raise
            live = None
        request = ssa.ApplyRequest(
            manager=manager, force=ctx.flag("force"), api_version=target.info.api_version,
            now=state.clock.now(), subresource=target.subresource, has_status=target.info.has_status,
        )
        # a copy of its own: the result shares sub-trees with live and with intent, which a retry reuses
        result = json_copy(ssa.apply(live, intent, request))
        try:
            if live is None:
                return await _create_applied(state, ctx, result)
            updated, warnings = await store_update(state, ctx, result, live, record=False)
            return json_response(updated, warnings=warnings)
        except (errors.Conflict, errors.AlreadyExists):
            # a concurrent write won the race (field-manager conflicts were raised above)
            if own_precondition or attempt + 1 >= state.config.patch_retries:
                raise
    raise errors.Conflict("the object kept changing while it was applied; try again")


async def _create_applied(state: ServerState, ctx: Context, result: dict[str, Any]) -> Response:
    result.get("metadata", {}).pop("resourceVersion", None)
    await namespaces.check_create(state, ctx.target)
    admitted, warnings = admit_object(
        ctx.target.info, result, None, operation="CREATE", now=state.clock.now(), user=ctx.user,
        validation=ctx.field_validation(state.config.default_field_validation), duplicates=ctx.duplicates,
        patch=True,
    )
    escalation.check(state.authz.index if state.authz else None, ctx.user, ctx.target.info, admitted)
    created = await state.store.create(admitted, dry_run=ctx.dry_run)
    return json_response(created, 201, warnings=warnings)


__all__ = ["apply_object", "patch_object"]
