"""Field ownership (``metadata.managedFields``), kept the way Kubernetes keeps it.

Every write names a *field manager* (``?fieldManager=``, or the client's user agent).
The server records, per manager and operation (``Update`` or ``Apply``), the set of
fields that manager last set, in the ``FieldsV1`` form (``{"f:spec": {"f:replicas": {}}}``).
Server-side apply (:mod:`fleetkeeper.api.serverapply`) uses the sets to detect
conflicts with other managers and to remove fields a manager stopped applying; the plane's
API server also records here what its other writes changed.

Simplifications, chosen on purpose and documented: a field set is a set of *leaf
paths*; every list is atomic (a leaf), which is exactly Kubernetes' rule for custom
resources without ``x-kubernetes-list-type`` and a coarser but safe rule for built-in
associative lists; identity and bookkeeping fields (``metadata.name``,
``resourceVersion``, ``managedFields`` …) are never owned.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from fleetkeeper.api.base import format_time

Path = tuple[str, ...]

#: top-level fields and metadata fields nobody owns
IGNORED_TOP = frozenset({"apiVersion", "kind"})
IGNORED_METADATA = frozenset({
    "name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp",
    "deletionTimestamp", "deletionGracePeriodSeconds", "managedFields", "selfLink", "generateName",
})


def leaf_paths(obj: Any, *, subresource: str | None = None, has_status: bool = True) -> set[Path]:
    """The owned leaf paths of an object (see the module notes for what is skipped)."""
    out: set[Path] = set()
    if not isinstance(obj, dict):
        return out
    for key, value in obj.items():
        if key in IGNORED_TOP:
            continue
        if subresource == "status" and key != "status":
            continue
        if subresource is None and has_status and key == "status":
            continue
        if key == "metadata" and isinstance(value, dict):
            for mkey, mvalue in value.items():
                if mkey not in IGNORED_METADATA:
                    _collect(mvalue, ("metadata", mkey), out)
        else:
            _collect(value, (key,), out)
    return out


def _collect(value: Any, prefix: Path, out: set[Path]) -> None:
    if not isinstance(value, dict) or not value:
        out.add(prefix)
        return
    for key, child in value.items():
        path = (*prefix, str(key))
        if isinstance(child, dict) and child:
            _collect(child, path, out)
        else:
            out.add(path)


def fields_of(obj: Any, *, subresource: str | None = None, has_status: bool = True) -> dict[str, Any]:
    """``to_fields_v1(leaf_paths(obj, …))`` in one walk, in the object's order (``==`` on
    ``FieldsV1`` ignores order; :func:`entry` stores it sorted): an apply that owns the same
    fields as before needs no more."""
    out: dict[str, Any] = {}
    if not isinstance(obj, dict):
        return out
    for key, value in obj.items():
        if key in IGNORED_TOP or (subresource == "status" and key != "status") or (
                subresource is None and has_status and key == "status"):
            continue
        if key == "metadata" and isinstance(value, dict):
            meta = {f"f:{k}": _tree(v) for k, v in value.items() if k not in IGNORED_METADATA}
            if meta:
                out["f:metadata"] = meta
        else:
            out[f"f:{key}"] = _tree(value)
    return out


def _tree(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        return {}
    return {f"f:{key}": _tree(child) if isinstance(child, dict) and child else {}
            for key, child in value.items()}


def _sorted(tree: dict[str, Any]) -> dict[str, Any]:
    """``FieldsV1`` with every map's keys in order, as Kubernetes writes it."""
    return {key: _sorted(tree[key]) if tree[key] else {} for key in sorted(tree)}


def get_path(obj: Any, path: Path) -> Any:
    """The value at ``path`` or ``None``."""
    node = obj
    for part in path:
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def without_path(obj: dict[str, Any], path: Path) -> dict[str, Any]:
    """``obj`` without the value at ``path``, maps it leaves empty below the top pruned: a new
    object sharing what it does not change (``obj`` is left as it is)."""
    chain: list[dict[str, Any]] = [obj]
    for part in path[:-1]:
        child = chain[-1].get(part)
        if not isinstance(child, dict):
            return obj
        chain.append(child)
    if path[-1] not in chain[-1]:
        return obj
    # chain[d] is the map at path[:d]; an emptied one goes, never a top-level field itself
    node: dict[str, Any] = {k: v for k, v in chain[-1].items() if k != path[-1]}
    for depth in range(len(chain) - 2, -1, -1):
        parent = dict(chain[depth])
        if node or depth == 0:
            parent[path[depth]] = node
        else:
            del parent[path[depth]]
        node = parent
    return node


def prefixes(paths: Iterable[Path]) -> set[Path]:
    """Every proper and improper prefix of every path (for overlap checks)."""
    out: set[Path] = set()
    for path in paths:
        for end in range(1, len(path) + 1):
            out.add(path[:end])
    return out


def overlapping(owned: set[Path], paths: set[Path]) -> set[Path]:
    """The members of ``owned`` that equal, contain or sit inside a member of ``paths``."""
    if not owned or not paths:
        return set()
    inner = prefixes(paths)
    return {p for p in owned if p in inner or any(p[:end] in paths for end in range(1, len(p)))}


def to_fields_v1(paths: Iterable[Path]) -> dict[str, Any]:
    """Render a path set in the ``FieldsV1`` form."""
    root: dict[str, Any] = {}
    for path in sorted(paths):
        node = root
        for part in path:
            node = node.setdefault(f"f:{part}", {})
    return root


def from_fields_v1(fields: Any, prefix: Path = ()) -> set[Path]:
    """Parse ``FieldsV1``; keys other than ``f:…`` (list keys, values) make their parent a leaf."""
    out: set[Path] = set()
    _parse(fields, prefix, out)
    return out


def _parse(fields: Any, prefix: Path, out: set[Path]) -> None:
    if isinstance(fields, dict):
        children = [(key, value) for key, value in fields.items() if key != "."]
        if children and all(key.startswith("f:") for key, _ in children):
            for key, value in children:
                _parse(value, (*prefix, key[2:]), out)
            return
    if prefix:
        out.add(prefix)


def entry(manager: str, operation: str, api_version: str, paths: set[Path] | dict[str, Any],
          now: datetime | str, subresource: str | None = None) -> dict[str, Any]:
    """One ``managedFields`` item (``paths`` a path set or its ``FieldsV1``; ``now`` a time, or a
    timestamp already formatted)."""
    item: dict[str, Any] = {
        "manager": manager,
        "operation": operation,
        "apiVersion": api_version,
        "time": now if isinstance(now, str) else format_time(now.replace(microsecond=0)),
        "fieldsType": "FieldsV1",
        "fieldsV1": _sorted(paths) if isinstance(paths, dict) else to_fields_v1(paths),
    }
    if subresource:
        item["subresource"] = subresource
    return item


def keep_times(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``new`` entries, each keeping its old ``time`` when the same manager's fields did not
    change: a write that changes nothing must leave the object — and its resourceVersion —
    untouched, as Kubernetes does for a repeated apply."""

    def ident(item: dict[str, Any]) -> tuple[Any, ...]:
        return (item.get("manager"), item.get("operation"), item.get("subresource"), item.get("apiVersion"),
                json.dumps(item.get("fieldsV1"), sort_keys=True))

    times = {ident(item): item.get("time") for item in old}
    out: list[dict[str, Any]] = []
    for item in new:
        before = times.get(ident(item))
        out.append({**item, "time": before} if before is not None else item)
    return out


def entries_of(obj: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The ``managedFields`` of an object (a list, possibly empty)."""
    if not obj:
        return []
    found = (obj.get("metadata") or {}).get("managedFields")
    return [e for e in found if isinstance(e, dict)] if isinstance(found, list) else []


def record_update(
    old: dict[str, Any] | None,
    new: dict[str, Any],
    *,
    manager: str,
    api_version: str,
    now: datetime,
    subresource: str | None = None,
    has_status: bool = True,
) -> list[dict[str, Any]]:
    """The managedFields after a non-apply write by ``manager`` that turned ``old`` into ``new``.

    Fields the write set or changed move to ``manager`` (operation ``Update``); fields it
    removed are dropped from every manager; untouched fields keep their owners.
    """
    new_paths = leaf_paths(new, subresource=subresource, has_status=has_status)
    old_paths = leaf_paths(old, subresource=subresource, has_status=has_status) if old else set()
    changed = {p for p in new_paths if old is None or get_path(old, p) != get_path(new, p)}
    removed = old_paths - new_paths
    touched = changed | removed
    result: list[dict[str, Any]] = []
    mine: set[Path] = set(changed)
    for item in entries_of(old):
        owned = from_fields_v1(item.get("fieldsV1"))
        same = (item.get("manager") == manager and item.get("operation") == "Update"
                and item.get("subresource") == subresource)
        if not same and item.get("subresource") != subresource:
            result.append(item)
            continue
        kept = owned - overlapping(owned, touched)
        if same:
            mine |= kept
        elif kept:
            result.append({**item, "fieldsV1": to_fields_v1(kept)})
    if mine:
        result.append(entry(manager, "Update", api_version, mine, now, subresource))
    return keep_times(entries_of(old), result)


__all__ = [
    "IGNORED_METADATA", "IGNORED_TOP", "Path", "entries_of", "entry", "fields_of", "from_fields_v1",
    "get_path",
    "keep_times", "leaf_paths", "overlapping", "prefixes", "record_update", "to_fields_v1", "without_path",
]
