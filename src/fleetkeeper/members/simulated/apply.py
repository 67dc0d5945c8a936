"""Server-side apply, approximated at a granularity a failover simulation needs.

Kubernetes tracks, per field manager, the set of fields it applied (``managedFields``)
and on each apply: sets what the manager sends, removes what it sent last time but not
now (unless another manager also owns it), and refuses (``Conflict``) to take over a
field another manager owns with a different value unless ``force`` is given.

We do exactly that, with fields tracked at this granularity:

* ``metadata.labels.<key>`` and ``metadata.annotations.<key>`` — one field per key, so
  two managers can own different labels of one object;
* ``metadata.ownerReferences`` and ``metadata.finalizers`` — as wholes;
* every other top-level field (``spec``, ``data``, ``stringData``, ``rules`` …) — as a
  whole: the applied value replaces the live one.

``status`` is never touched by apply (controllers own it), nor are the fields the server
owns (``uid``, ``resourceVersion``, ``generation``, ``creationTimestamp``). Ownership is
kept where Kubernetes keeps it, in ``metadata.managedFields`` (``FieldsV1`` form), so
``get`` shows who owns what and there is one source of truth. An apply that changes nothing
is no write, where "nothing" is judged as JSON: ``true`` is no ``1``.

The function here is pure: it computes the new object; the store stamps revisions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from fleetkeeper import errors

Path = tuple[str, ...]

_KEYED_META = ("labels", "annotations")
_WHOLE_META = ("ownerReferences", "finalizers")
_NOT_APPLIED = frozenset({"apiVersion", "kind", "metadata", "status"})


@dataclass(frozen=True, slots=True)
class ApplyResult:
    object: dict[str, Any]
    #: anything at all changed (a write is needed)
    changed: bool
    #: something outside metadata and status changed (generation bumps)
    body_changed: bool


def applied_paths(manifest: dict[str, Any]) -> set[Path]:
    """The fields a manifest sets, at the granularity described above."""
    paths: set[Path] = {(key,) for key in manifest if key not in _NOT_APPLIED}
    meta = manifest.get("metadata") or {}
    for section in _KEYED_META:
        paths.update(("metadata", section, key) for key in meta.get(section) or {})
    paths.update(("metadata", section) for section in _WHOLE_META if section in meta)
    return paths


def server_side_apply(live: dict[str, Any] | None, manifest: dict[str, Any], *, manager: str, force: bool,
                      now: str) -> ApplyResult:
    """The object after ``manager`` applies ``manifest`` over ``live`` (None: create)."""
    owners = owned_fields(live)
    mine = applied_paths(manifest)
    _take_ownership(owners, mine, live, manifest, manager=manager, force=force)
    previous = owners.get(manager, set())
    owners[manager] = mine
    others = set().union(*(paths for m, paths in owners.items() if m != manager))
    result = _copy_shell(live, manifest)
    for path in sorted(previous - mine):
        if path not in others:
            _remove(result, path)
    for path in sorted(mine):
        _set(result, path, _get(manifest, path))
    old_entries = (live or {}).get("metadata", {}).get("managedFields") or []
    api_version = manifest["apiVersion"]
    result["metadata"]["managedFields"] = _render_managed(old_entries, owners, api_version, manager, "")
    if live is not None and result == live and _same_json(result, live, mine):
        return ApplyResult(live, changed=False, body_changed=False)
    result["metadata"]["managedFields"] = _render_managed(old_entries, owners, api_version, manager, now)
    body_changed = live is None or any(
        result.get(key) != live.get(key) for key in set(result) | set(live) if key not in _NOT_APPLIED
    )
    return ApplyResult(result, changed=True, body_changed=body_changed)


def owned_fields(obj: dict[str, Any] | None) -> dict[str, set[Path]]:
    """Per manager, the fields it applied (read from ``metadata.managedFields``)."""
    owners: dict[str, set[Path]] = {}
    for entry in ((obj or {}).get("metadata") or {}).get("managedFields") or []:
        if entry.get("operation") == "Apply":
            owners[str(entry.get("manager", ""))] = set(_paths_of(entry.get("fieldsV1") or {}, ()))
    return owners


def _take_ownership(owners: dict[str, set[Path]], mine: set[Path], live: dict[str, Any] | None,
                    manifest: dict[str, Any], *, manager: str, force: bool) -> None:
    conflicts: list[errors.Cause] = []
    for other in sorted(owners):
        if other == manager:
            continue
        for path in sorted(owners[other] & mine):
            if _get(live or {}, path) == _get(manifest, path):
                continue  # shared ownership of an equal value is fine
            if force:
                owners[other].discard(path)
            else:
                conflicts.append(
                    errors.Cause(".".join(path), f"conflict with {other!r}", "FieldManagerConflict"))
    if conflicts:
        raise errors.Conflict(
            f"Apply failed with {len(conflicts)} conflict(s): "
            + "; ".join(f"{c.message}: .{c.field}" for c in conflicts),
            causes=conflicts,
        )


def _copy_shell(live: dict[str, Any] | None, manifest: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``live`` deep enough to edit metadata maps and replace top-level fields."""
    if live is None:
        meta = manifest.get("metadata") or {}
        return {"apiVersion": manifest["apiVersion"], "kind": manifest["kind"],
                "metadata": {k: meta[k] for k in ("name", "namespace") if meta.get(k)}}
    result = dict(live)
    result["apiVersion"] = manifest["apiVersion"]
    meta = dict(live["metadata"])
    for section in _KEYED_META:
        if section in meta:
            meta[section] = dict(meta[section])
    result["metadata"] = meta
    return result


def _same_json(result: dict[str, Any], live: dict[str, Any], paths: set[Path]) -> bool:
    """Whether the applied fields of two equal objects are the same JSON too: Python holds
    ``True == 1``, an API server does not, so ``replicas: true`` over 1 is a change (which the
    cluster's checks then refuse), not a no-op."""
    try:
        return all(orjson.dumps(_get(result, path), option=orjson.OPT_SORT_KEYS)
                   == orjson.dumps(_get(live, path), option=orjson.OPT_SORT_KEYS) for path in paths)
    except TypeError:  # not plain JSON: the checks on a write say what is wrong
        return False


def _get(obj: dict[str, Any], path: Path) -> Any:
    node: Any = obj
    for part in path:
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _set(obj: dict[str, Any], path: Path, value: Any) -> None:
    node = obj
    for part in path[:-1]:
        node = node.setdefault(part, {})
    node[path[-1]] = value


def _remove(obj: dict[str, Any], path: Path) -> None:
    parent = _get(obj, path[:-1]) if len(path) > 1 else obj
    if isinstance(parent, dict):
        parent.pop(path[-1], None)
        if len(path) == 3 and not parent:  # an emptied labels/annotations map disappears
            obj["metadata"].pop(path[1], None)


def _paths_of(fields: dict[str, Any], prefix: Path) -> list[Path]:
    out: list[Path] = []
    for key, child in fields.items():
        path = (*prefix, key.removeprefix("f:"))
        if isinstance(child, dict) and child:
            out.extend(_paths_of(child, path))
        else:
            out.append(path)
    return out


def _fields_v1(paths: set[Path]) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    for path in sorted(paths):
        node = tree
        for part in path:
            node = node.setdefault(f"f:{part}", {})
    return tree


def _render_managed(old: list[dict[str, Any]], owners: dict[str, set[Path]], api_version: str, manager: str,
                    now: str) -> list[dict[str, Any]]:
    """``managedFields`` with the Apply entries rewritten; other entries kept in place."""
    entries: list[dict[str, Any]] = []
    seen: set[str] = set()
    for entry in old:
        name = str(entry.get("manager", ""))
        if entry.get("operation") != "Apply":
            entries.append(entry)
            continue
        seen.add(name)
        if owners.get(name) and name == manager:
            entries.append(_entry(name, owners[name], api_version, now or entry.get("time")))
        elif owners.get(name):
            entries.append(_entry(name, owners[name], entry.get("apiVersion"), entry.get("time")))
    if manager not in seen and owners.get(manager):
        entries.append(_entry(manager, owners[manager], api_version, now or None))
    return entries


def _entry(manager: str, paths: set[Path], api_version: Any, time: Any) -> dict[str, Any]:
    entry = {"manager": manager, "operation": "Apply", "apiVersion": api_version, "time": time,
             "fieldsType": "FieldsV1", "fieldsV1": _fields_v1(paths)}
    return {k: v for k, v in entry.items() if v is not None}


__all__ = ["ApplyResult", "Path", "applied_paths", "owned_fields", "server_side_apply"]
