"""Strategic merge patch without Go struct tags.

kubectl sends ``application/strategic-merge-patch+json`` for the kinds compiled into it
(Deployment, ConfigMap, Service …), computing the patch from the Go types' tags: lists
such as ``containers`` merge element by element on a *merge key* (``name``) instead of
being replaced, and directives steer the merge (``$patch: delete|replace|merge``,
``$retainKeys``, ``$setElementOrder/<list>``, ``$deleteFromPrimitiveList/<list>``).

We keep those kinds as unstructured JSON, so the merge keys come from a table of the
Kubernetes field names that carry ``patchStrategy: merge`` (:data:`MERGE_KEYS`). A list
whose field is not in the table is atomic (replaced), which is also the rule for custom
resources: for fleetkeeper's own kinds the server treats a strategic patch as a JSON
merge patch after dropping directives, exactly like a merge patch would.

Elements are found by their merge key's value through a dict, so a merge takes time linear
in the list and the patch; a ``$setElementOrder`` naming an element many times places it once
(listing it again would copy it into the result that many times).
"""

from __future__ import annotations

import copy
from collections import deque
from typing import Any

import orjson

from fleetkeeper import errors

#: list field → candidate merge keys (the first present in every patch element wins)
MERGE_KEYS: dict[str, tuple[str, ...]] = {
    "containers": ("name",),
    "initContainers": ("name",),
    "ephemeralContainers": ("name",),
    "volumes": ("name",),
    "env": ("name",),
    "volumeMounts": ("mountPath",),
    "volumeDevices": ("devicePath",),
    "ports": ("containerPort", "port"),
    "imagePullSecrets": ("name",),
    "hostAliases": ("ip",),
    "conditions": ("type",),
    "ownerReferences": ("uid",),
    "readinessGates": ("conditionType",),
    "resourceClaims": ("name",),
    "topologySpreadConstraints": ("topologyKey",),
    "subsets": (),
}
#: lists of scalars merged as sets (``patchStrategy: merge`` on a primitive list)
MERGED_PRIMITIVE_LISTS = frozenset({"finalizers"})

_PATCH = "$patch"
_RETAIN = "$retainKeys"
_ORDER = "$setElementOrder/"
_DELETE_PRIMITIVE = "$deleteFromPrimitiveList/"


def strip_directives(patch: Any) -> Any:
    """Drop every ``$…`` directive (used when a strategic patch is read as a merge patch)."""
    if isinstance(patch, dict):
        return {k: strip_directives(v) for k, v in patch.items() if not k.startswith("$")}
    if isinstance(patch, list):
        return [strip_directives(v) for v in patch if not _is_directive_only(v)]
    return patch


def _is_directive_only(value: Any) -> bool:
    return isinstance(value, dict) and _PATCH in value and len(value) == 1


def strategic_merge(target: Any, patch: Any) -> Any:
    """Apply a strategic merge patch to ``target`` (see the module notes)."""
    if not isinstance(patch, dict):
        raise errors.BadRequest("a strategic merge patch must be a JSON object")
    return _merge_map(target if isinstance(target, dict) else {}, patch)


def _merge_map(target: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    directive = patch.get(_PATCH)
    if directive == "replace":
        return strip_directives({k: v for k, v in patch.items() if k != _PATCH})  # type: ignore[no-any-return]
    if directive not in (None, "merge", "delete"):
        raise errors.BadRequest(f"unknown strategic merge patch directive {_PATCH}: {directive!r}")
    result = copy.deepcopy(target)
    orders: dict[str, list[Any]] = {}
    for key, value in patch.items():
        if key in (_PATCH, _RETAIN):
            continue
        if key.startswith(_ORDER):
            orders[key[len(_ORDER):]] = value if isinstance(value, list) else []
        elif key.startswith(_DELETE_PRIMITIVE):
            field = key[len(_DELETE_PRIMITIVE):]
            if isinstance(result.get(field), list) and isinstance(value, list):
                gone = {_identity_key(v) for v in value}
                result[field] = [v for v in result[field] if _identity_key(v) not in gone]
        elif value is None:
            result.pop(key, None)
        elif isinstance(value, dict):
            if value.get(_PATCH) == "delete":
                result.pop(key, None)
            else:
                current = result.get(key)
                result[key] = _merge_map(current if isinstance(current, dict) else {}, value)
        elif isinstance(value, list):
            result[key] = _merge_list(key, result.get(key), value)
        else:
            result[key] = copy.deepcopy(value)
    for field, order in orders.items():
        if isinstance(result.get(field), list):
            result[field] = _reorder(field, result[field], order)
    retain = patch.get(_RETAIN)
    if isinstance(retain, list):
        result = {k: v for k, v in result.items() if k in retain}
    return result


def _merge_key(field: str, items: list[Any]) -> str | None:
    dicts = [v for v in items if isinstance(v, dict) and v.get(_PATCH) != "replace"]
    if not dicts:
        return None
    for candidate in MERGE_KEYS.get(field, ()):
        if all(candidate in d for d in dicts):
            return candidate
    return None


def _merge_list(field: str, current: Any, patch: list[Any]) -> list[Any]:
    if any(isinstance(v, dict) and v.get(_PATCH) == "replace" for v in patch):
        return [strip_directives(v) for v in patch if not (isinstance(v, dict) and _PATCH in v)]
    live = current if isinstance(current, list) else []
    if field in MERGED_PRIMITIVE_LISTS and all(not isinstance(v, (dict, list)) for v in patch):
        seen = {_identity_key(v) for v in live}
        return copy.deepcopy(live) + [v for v in patch if _identity_key(v) not in seen]
    key = _merge_key(field, patch)
    if key is None:
        return strip_directives(patch)  # type: ignore[no-any-return]
    result: list[Any] = copy.deepcopy(live)
    at: dict[str, deque[int]] = {}  # a merge key's value → the positions of the elements holding it
    for i, v in enumerate(result):
        if isinstance(v, dict):
            at.setdefault(_identity_key(v.get(key)), deque()).append(i)
    removed: set[int] = set()
    for element in patch:
        if not isinstance(element, dict):
            continue
        places = at.setdefault(_identity_key(element[key]), deque())
        if element.get(_PATCH) == "delete":
            if places:
                removed.add(places.popleft())
        elif not places:
            places.append(len(result))
            result.append(_merge_map({}, element))
        else:
            result[places[0]] = _merge_map(result[places[0]], element)
    return [v for i, v in enumerate(result) if i not in removed]


def _reorder(field: str, items: list[Any], order: list[Any]) -> list[Any]:
    key = _merge_key(field, order) if all(isinstance(v, dict) for v in order) else None

    def identity(v: Any) -> Any:
        return v.get(key) if key is not None and isinstance(v, dict) else v

    rank: dict[str, int] = {}  # the order's identities, each once, by their JSON
    for v in order:
        rank.setdefault(_identity_key(identity(v)), len(rank))
    ranked: list[tuple[int, int, Any]] = []
    rest: list[Any] = []
    for i, v in enumerate(items):
        position = rank.get(_identity_key(identity(v)))
        if position is None:
            rest.append(v)
        else:
            ranked.append((position, i, v))
    ranked.sort(key=lambda entry: entry[:2])
    return [v for _, _, v in ranked] + rest


def _identity_key(value: Any) -> str:
    """A hashable stand-in for an element's identity (a merge key's value or a whole scalar)."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode() if isinstance(value, (dict, list)) \
        else repr((type(value).__name__, value))


__all__ = ["MERGED_PRIMITIVE_LISTS", "MERGE_KEYS", "strategic_merge", "strip_directives"]
