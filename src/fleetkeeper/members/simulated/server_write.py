"""Writes through the member API server: create, update, apply, merge patch, delete.

Every write becomes one server-side apply on the simulated cluster (the only way in
that keeps the cluster's field ownership, ``generation`` and ``resourceVersion``
rules), so the verbs differ only in what they check first:

* ``POST`` (create) — ``AlreadyExists`` when the object is there; ``generateName`` works;
* ``PUT`` (update) — ``NotFound`` when absent; a ``metadata.resourceVersion`` in the
  body is a precondition (``Conflict`` when stale), as in Kubernetes;
* ``PATCH`` ``application/apply-patch+yaml`` — server-side apply proper: ``fieldManager``
  is required, ``force`` takes over fields other managers own; creates when absent (201);
* ``PATCH`` ``application/merge-patch+json`` (and ``strategic-merge-patch+json``, treated
  the same) — the live object with the patch merged in (RFC 7386), applied by the
  patching manager;
* ``DELETE`` — ``NotFound`` when absent, else the cluster deletes it (with its
  dependents) and answers a success ``Status``.

Non-apply writes are applied with ``force``: an update or a patch always wins, as it
does against a real server. The field manager of a non-apply write is ``fieldManager``
or, as Kubernetes does, the first word of the client's User-Agent.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

import orjson
import yaml
from starlette.requests import Request
from starlette.responses import Response

from fleetkeeper import errors
from fleetkeeper.api import fieldlabels
from fleetkeeper.api.selectors import FieldRequirements
from fleetkeeper.members.interface import ObjectRef
from fleetkeeper.members.simulated.cluster import SimulatedCluster
from fleetkeeper.members.simulated.objects import Obj, ObjectKey
from fleetkeeper.members.simulated.server_discovery import Served, not_found

APPLY = "application/apply-patch+yaml"
MERGE_PATCHES = ("application/merge-patch+json", "application/strategic-merge-patch+json")
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def _json(body: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(body), status_code=status, media_type="application/json")


@dataclass(frozen=True, slots=True)
class FieldFilter:
    """What a ``fieldSelector`` keeps: checked on the key where it names only the name and
    namespace, on the object for the other fields the kind may be selected by."""

    requirements: FieldRequirements = ()

    def keeps_key(self, key: ObjectKey) -> bool:
        for requirement in self.requirements:
            if requirement.path in _KEY_FIELDS:
                actual = key.name if requirement.path == "metadata.name" else key.namespace
                if (actual == requirement.value) != requirement.equal:
                    return False
        return True

    def keeps(self, obj: Obj) -> bool:
        return all(requirement.matches(obj) for requirement in self.requirements)


_KEY_FIELDS = frozenset({"metadata.name", "metadata.namespace"})


def fields_filter(selector: str | None, served: Served) -> FieldFilter:
    """The filter of a ``fieldSelector`` on ``served``'s kind: the fields kube-apiserver lets it
    name (``errors.BadRequest`` naming another)."""
    return FieldFilter(fieldlabels.checked(selector, served.group, served.kind))


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return patch
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


async def write(request: Request, cluster: SimulatedCluster, served: Served, namespace: str | None,
                name: str | None) -> Response:
    """One write request on a resource (collection: ``name`` None)."""
    params = request.query_params
    if params.get("dryRun"):
        raise errors.BadRequest("dryRun is not supported by the simulated member's API server")
    manager = params.get("fieldManager") or request.headers.get("user-agent", "unknown").split("/")[0]
    method = request.method
    if method == "DELETE" and name is not None:
        return await _delete(cluster, served, namespace, name)
    raw = await request.body()
    content_type = request.headers.get("content-type", "").split(";")[0].strip()
    if method in ("POST", "PUT") and content_type not in ("", "application/json", "application/yaml"):
        raise errors.UnsupportedMediaType(
            f"the body of the request was in an unknown format ({content_type}); accepted: application/json")
    if method == "PATCH" and name is not None:
        if content_type == APPLY:
            if not params.get("fieldManager"):
                raise errors.BadRequest("fieldManager is required for apply requests")
            body = _manifest(_parse(raw, yaml_ok=True), served, namespace, name)
            created = await cluster.get(_ref(body)) is None
            live = await cluster.apply(body, field_manager=manager,
                                       force=(params.get("force") or "").lower() in ("true", "1"))
            return _json(live, 201 if created else 200)
        if content_type in MERGE_PATCHES:
            ref = ObjectRef(served.group_version, served.kind, namespace or "", name)
            current = await cluster.get(ref)
            if current is None:
                raise not_found(served, name)
            merged = merge_patch(_writable(current), _parse(raw))
            live = await cluster.apply(_manifest(merged, served, namespace, name), field_manager=manager,
                                       force=True)
            return _json(live)
        raise errors.UnsupportedMediaType(f"the body of the request was in an unknown format "
                                          f"({content_type}); accepted: {APPLY}, {', '.join(MERGE_PATCHES)}")
    body = _manifest(_parse(raw, yaml_ok=content_type == "application/yaml"), served, namespace, name)
    exists = await cluster.get(_ref(body)) is not None
    if method == "POST" and name is None:
        if exists:
            resource = f"{served.plural}.{served.group}" if served.group else served.plural
            raise errors.AlreadyExists(f'{resource} "{body["metadata"]["name"]}" already exists',
                                       name=body["metadata"]["name"], group=served.group, kind=served.plural)
        return _json(await cluster.apply(body, field_manager=manager, force=True), 201)
    if method == "PUT" and name is not None:
        if not exists:
            raise not_found(served, name)
        return _json(await cluster.apply(body, field_manager=manager, force=True))
    raise errors.MethodNotAllowed(f"{method} is not supported here")


async def _delete(cluster: SimulatedCluster, served: Served, namespace: str | None, name: str) -> Response:
    ref = ObjectRef(served.group_version, served.kind, namespace or "", name)
    live = await cluster.get(ref)
    if live is None:
        raise not_found(served, name)
    await cluster.delete(ref)
    details = {"name": name, "group": served.group, "kind": served.plural, "uid": live["metadata"].get("uid")}
    return _json({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                  "details": details})


def _parse(raw: bytes, *, yaml_ok: bool = False) -> dict[str, Any]:
    try:
        body = yaml.safe_load(raw) if yaml_ok else orjson.loads(raw or b"null")
    except (yaml.YAMLError, orjson.JSONDecodeError) as exc:
        what = "YAML" if yaml_ok else "JSON"
        raise errors.BadRequest(f"the request body is not valid {what}: {exc}") from None
    if not isinstance(body, dict):
        raise errors.BadRequest("the request body must be an object")
    return body


def _writable(live: dict[str, Any]) -> dict[str, Any]:
    """The live object without what the server owns (what a merge patch is applied over)."""
    meta = {k: v for k, v in live["metadata"].items()
            if k not in ("resourceVersion", "managedFields", "uid", "creationTimestamp", "generation")}
    return {k: v for k, v in {**live, "metadata": meta}.items() if k != "status"}


def _manifest(body: dict[str, Any], served: Served, namespace: str | None,
              name: str | None) -> dict[str, Any]:
    """Check a body against its URL and fill what the URL says (namespace, name, kind)."""
    api_version = body.setdefault("apiVersion", served.group_version)
    kind = body.setdefault("kind", served.kind)
    if api_version != served.group_version or (served.kind and kind != served.kind) or not kind:
        raise errors.BadRequest(f"the body says {api_version}/{kind}; the URL is for "
                                f"{served.group_version} {served.plural}")
    meta = body.get("metadata")
    if not isinstance(meta, dict):
        meta = body["metadata"] = {}
    for field, wanted in (("namespace", namespace), ("name", name)):
        given = meta.get(field)
        if wanted is not None and given and given != wanted:
            raise errors.BadRequest(f"metadata.{field} {given!r} does not match the URL ({wanted!r})")
        if wanted is not None:
            meta[field] = wanted
    if not meta.get("name"):
        prefix = meta.get("generateName")
        if not prefix:
            cause = errors.Cause("metadata.name", "Required value", "FieldValueRequired")
            raise errors.Invalid(f"{kind}: metadata.name or metadata.generateName is required",
                                 causes=[cause], kind=kind)
        meta["name"] = prefix + "".join(secrets.choice(_NAME_ALPHABET) for _ in range(5))
    return body


def _ref(body: dict[str, Any]) -> ObjectRef:
    meta = body["metadata"]
    return ObjectRef(body["apiVersion"], body["kind"], meta.get("namespace") or "", meta["name"])


__all__ = ["APPLY", "MERGE_PATCHES", "FieldFilter", "fields_filter", "merge_patch", "write"]
