"""Resource verbs over the Store: list, get, create, update, delete, deletecollection.

Each handler takes the shared :class:`~fleetkeeper.apiserver.state.ServerState` and the
routed :class:`~fleetkeeper.apiserver.state.Context` and returns a response; errors are
raised as :class:`fleetkeeper.errors.ApiError` and rendered as ``Status`` by the app.
Patch and apply live in :mod:`fleetkeeper.apiserver.patching`, watch in
:mod:`fleetkeeper.apiserver.watch`.

Writes run admission (:mod:`fleetkeeper.apiserver.admit`) and record field ownership
(:mod:`fleetkeeper.api.managedfields`) before the store sees them. The store owns the
storage semantics (revisions, generation, ``/status`` isolation, finalizers), so a
``/status`` write simply goes to ``store.update(..., subresource="status")``.

Delete answers ``200`` with the removed object, or with the object carrying its
``deletionTimestamp`` while finalizers still hold it — kubectl then watches for the
final removal (``kubectl delete --wait``). As kube-apiserver does, it answers ``202``
for a held object only when the request asked ``orphanDependents: false``.
``propagationPolicy`` (and the older ``orphanDependents``) decide what becomes of a resource
template's binding (:mod:`~fleetkeeper.apiserver.cascade`: orphaned, or deleted first);
``gracePeriodSeconds`` is accepted (and checked) for compatibility.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from starlette.responses import Response

from fleetkeeper import errors
from fleetkeeper.api import managedfields as fields
from fleetkeeper.api.crd import definition
from fleetkeeper.api.printing.table import include_object, wants_table
from fleetkeeper.apiserver import cascade, escalation, fieldlabels, namespaces, tables
from fleetkeeper.apiserver.admit import admit_object, shape
from fleetkeeper.apiserver.request import INT64_MAX, parse_int
from fleetkeeper.apiserver.state import Context, ServerState, json_response
from fleetkeeper.store import objects as o

PROPAGATION_POLICIES = ("Orphan", "Background", "Foreground")


def _table_or(state: ServerState, ctx: Context, objects: list[dict[str, Any]], resource_version: str,
              continue_token: str | None = None) -> dict[str, Any] | None:
    if not wants_table(ctx.accept):
        return None
    include = include_object(ctx.param("includeObject"))
    info = ctx.target.info
    return tables.table(info.group, info.kind, objects, now=state.clock.now(),
                        resource_version=resource_version, include_object=include,
                        continue_token=continue_token, custom=definition(info))


async def list_objects(state: ServerState, ctx: Context) -> Response:
    info, target = ctx.target.info, ctx.target
    limit = parse_int("limit", ctx.param("limit"), minimum=0)
    result = await state.store.list(
        info.group_kind, target.namespace,
        label_selector=ctx.param("labelSelector") or None, field_selector=fieldlabels.field_selector(ctx),
        limit=limit or None, continue_token=ctx.param("continue") or None,
    )
    rv = str(result.revision)
    table = _table_or(state, ctx, result.items, rv, result.continue_token)
    if table is not None:
        return json_response(table)
    metadata: dict[str, Any] = {"resourceVersion": rv}
    if result.continue_token:
        metadata["continue"] = result.continue_token
    return json_response({"kind": f"{info.kind}List", "apiVersion": info.api_version,
                          "metadata": metadata, "items": result.items})


async def get_object(state: ServerState, ctx: Context) -> Response:
    target = ctx.target
    obj = await state.store.get(target.info.group_kind, target.namespace or "", target.name or "")
    table = _table_or(state, ctx, [obj], str((obj.get("metadata") or {}).get("resourceVersion", "")))
    return json_response(table if table is not None else obj)


async def create_object(state: ServerState, ctx: Context, body: dict[str, Any]) -> Response:
    target = ctx.target
    if target.namespace is None:
        raise errors.MethodNotAllowed(f"{target.resource_name} is namespaced: create it under "
                                      "/namespaces/{namespace}/")
    obj = shape(target, body)
    await namespaces.check_create(state, target)
    admitted, warnings = admit_object(
        target.info, obj, None, operation="CREATE", now=state.clock.now(), user=ctx.user,
        validation=ctx.field_validation(state.config.default_field_validation), duplicates=ctx.duplicates,
    )
    escalation.check(state.authz.index if state.authz else None, ctx.user, target.info, admitted)
    meta = admitted.setdefault("metadata", {})
    meta["managedFields"] = fields.record_update(
        None, admitted, manager=ctx.field_manager, api_version=target.info.api_version, now=state.clock.now(),
        has_status=target.info.has_status,
    )
    created = await state.store.create(admitted, dry_run=ctx.dry_run)
    return json_response(created, 201, warnings=warnings)


async def store_update(state: ServerState, ctx: Context, new: dict[str, Any], old: dict[str, Any], *,
                       record: bool = True) -> tuple[dict[str, Any], list[str]]:
    """Admit ``new`` over ``old`` and write it (the shared tail of update, patch and apply).

    ``record=False`` keeps the ``managedFields`` already computed (server-side apply).
    """
    target = ctx.target
    admitted, warnings = admit_object(
        target.info, new, old, operation="UPDATE", now=state.clock.now(), user=ctx.user,
        validation=ctx.field_validation(state.config.default_field_validation),
        subresource=target.subresource, duplicates=ctx.duplicates, patch=ctx.patching,
    )
    if target.subresource is None:
        escalation.check(state.authz.index if state.authz else None, ctx.user, target.info, admitted, old)
    if record and target.subresource is None:
        admitted.setdefault("metadata", {})["managedFields"] = fields.record_update(
            old, admitted, manager=ctx.field_manager, api_version=target.info.api_version,
            now=state.clock.now(), has_status=target.info.has_status,
        )
    return await state.store.update(admitted, subresource=target.subresource, dry_run=ctx.dry_run), warnings


async def update_object(state: ServerState, ctx: Context, body: dict[str, Any]) -> Response:
    target = ctx.target
    new = shape(target, body)
    old = await state.store.get(target.info.group_kind, target.namespace or "", target.name or "")
    updated, warnings = await store_update(state, ctx, new, old)
    return json_response(updated, warnings=warnings)


@dataclass(frozen=True)
class _DeleteOptions:
    resource_version: str | None
    uid: str | None
    #: ``orphanDependents: false`` was asked (a held object is then answered 202)
    no_orphans: bool
    #: Background, Orphan or Foreground (:mod:`~fleetkeeper.apiserver.cascade`)
    propagation: str = "Background"


def _delete_options(ctx: Context, body: dict[str, Any] | None) -> _DeleteOptions:
    """Check DeleteOptions (body and query); the preconditions and what the answer depends on."""
    options = body or {}
    policy = options.get("propagationPolicy") or ctx.param("propagationPolicy")
    if policy is not None and policy not in PROPAGATION_POLICIES:
        raise errors.BadRequest(f"propagationPolicy must be one of {', '.join(PROPAGATION_POLICIES)}, "
                                f"got {policy!r}")
    grace = options.get("gracePeriodSeconds")
    if grace is None:
        parse_int("gracePeriodSeconds", ctx.param("gracePeriodSeconds"), minimum=0)
    elif isinstance(grace, bool) or not isinstance(grace, int) or not 0 <= grace <= INT64_MAX:
        raise errors.BadRequest(f"gracePeriodSeconds must be an integer from 0 to {INT64_MAX}, got {grace!r}")
    orphan = options.get("orphanDependents", ctx.param("orphanDependents"))
    if orphan is not None and not isinstance(orphan, bool) and orphan not in ("true", "false"):
        raise errors.BadRequest(f"orphanDependents must be true or false, got {orphan!r}")
    preconditions = options.get("preconditions") or {}
    if not isinstance(preconditions, dict):
        raise errors.BadRequest("preconditions must be an object")
    rv, uid = preconditions.get("resourceVersion"), preconditions.get("uid")
    return _DeleteOptions(str(rv) if rv else None, str(uid) if uid else None, orphan in (False, "false"),
                          cascade.policy_of(policy, orphan in (True, "true")))


async def delete_object(state: ServerState, ctx: Context, body: dict[str, Any] | None) -> Response:
    target = ctx.target
    options = _delete_options(ctx, body)
    namespaces.check_delete(target)
    gk, namespace, name = target.info.group_kind, target.namespace or "", target.name or ""
    if ctx.dry_run:
        return json_response(await state.store.get(gk, namespace, name))
    version = options.resource_version
    if options.propagation != "Background":
        current = await state.store.get(gk, namespace, name)
        _check_preconditions(current, options)  # before the dependents are touched
        if options.propagation == "Orphan":
            await cascade.orphan(state, current)
        elif await cascade.hold_for_dependents(state, current):
            version = None  # the finalizer write moved it on; the precondition held before
    result = await state.store.delete(gk, namespace, name, resource_version=version, uid=options.uid)
    held = bool((result.get("metadata") or {}).get("deletionTimestamp"))
    return json_response(result, 202 if held and options.no_orphans else 200)


def _check_preconditions(current: dict[str, Any], options: _DeleteOptions) -> None:
    """The DELETE's preconditions, as the store checks them (answered the same way)."""
    key, meta = o.key_of(current), current.get("metadata") or {}
    if options.uid and options.uid != meta.get("uid"):
        raise o.conflict(key, f"Precondition failed: UID in precondition: {options.uid}, "
                              f"UID in object meta: {meta.get('uid')}")
    if options.resource_version and options.resource_version != meta.get("resourceVersion"):
        raise o.conflict(key, o.STALE)


async def delete_collection(state: ServerState, ctx: Context, body: dict[str, Any] | None) -> Response:
    target = ctx.target
    _delete_options(ctx, body)
    gk = target.info.group_kind
    listed = await state.store.list(gk, target.namespace, label_selector=ctx.param("labelSelector") or None,
                                    field_selector=fieldlabels.field_selector(ctx))
    removed: list[dict[str, Any]] = []
    for item in listed.items:
        meta = item.get("metadata") or {}
        if gk == namespaces.NAMESPACE and meta.get("name") in namespaces.IMMORTAL:
            continue  # as a delete of each would be refused
        if ctx.dry_run:
            removed.append(item)
            continue
        try:
            removed.append(await state.store.delete(gk, meta.get("namespace") or "", meta.get("name") or ""))
        except errors.NotFound:
            continue
    return json_response({"kind": f"{target.info.kind}List", "apiVersion": target.info.api_version,
                          "metadata": {"resourceVersion": str(state.store.revision)}, "items": removed})


__all__ = [
    "create_object", "delete_collection", "delete_object", "get_object", "list_objects", "store_update",
    "update_object",
]
