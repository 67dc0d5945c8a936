"""Server-side apply (``PATCH`` with ``application/apply-patch+yaml``).

The body is the manager's *intent*: the full configuration it wants to own. Applying it:

1. **conflicts** — a field the intent sets to a value different from the live one, and
   that another manager owns, is a conflict: ``409 Conflict`` naming every such field
   and its owner, unless ``force=true``, which takes the field over;
2. **merge** — maps merge recursively, everything else (lists included) is replaced;
3. **removal** — a field the manager applied last time but no longer does is removed,
   unless another manager owns it too (shared ownership keeps it);
4. **ownership** — the manager's ``Apply`` entry becomes exactly the intent's fields;
   forced-over fields leave their old owners.

An intent for an absent object creates it (the caller answers ``201``). Field sets and
their simplifications are in :mod:`fleetkeeper.apiserver.fields`; which removed fields
another owner keeps is answered from prefix sets, in time linear in the fields.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from fleetkeeper import errors
from fleetkeeper.apiserver import fields


@dataclass(frozen=True)
class ApplyRequest:
    """Who applies, and how."""

    manager: str
    force: bool
    api_version: str
    now: datetime
    subresource: str | None = None
    has_status: bool = True


def _drop_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


def _deep_merge(live: Any, intent: Any) -> Any:
    if isinstance(live, dict) and isinstance(intent, dict):
        out = dict(live)
        for key, value in intent.items():
            out[key] = _deep_merge(live.get(key), value)
        return out
    return copy.deepcopy(intent)


def _path_text(path: fields.Path) -> str:
    return "." + ".".join(path)


def _conflicts(
    live: dict[str, Any], intent: dict[str, Any], applied: set[fields.Path],
    others: list[tuple[dict[str, Any], set[fields.Path]]],
) -> list[tuple[str, fields.Path]]:
    differing = {p for p in applied if fields.get_path(live, p) != fields.get_path(intent, p)}
    found: list[tuple[str, fields.Path]] = []
    for item, owned in others:
        for path in sorted(fields.overlapping(owned, differing)):
            found.append((str(item.get("manager", "")), path))
    return found


def _conflict_error(found: list[tuple[str, fields.Path]], api_version: str) -> errors.Conflict:
    parts = [f'conflict with "{manager}" using {api_version}: {_path_text(path)}' for manager, path in found]
    noun = "conflict" if len(found) == 1 else "conflicts"
    if len(parts) == 1:
        message = f"Apply failed with 1 conflict: {parts[0]}"
    else:
        message = f"Apply failed with {len(found)} {noun}: " + "\n".join(parts)
    causes = [errors.Cause(field=_path_text(p), message=f'conflict with "{m}"', reason="FieldManagerConflict")
              for m, p in found]
    return errors.Conflict(message, causes=causes)


def apply(live: dict[str, Any] | None, intent: dict[str, Any], request: ApplyRequest) -> dict[str, Any]:
    """Return the object after applying ``intent`` over ``live`` (``None`` = absent).

    The result carries the new ``metadata.managedFields`` and, when ``live`` exists and
    the intent names no resourceVersion, the live resourceVersion as a precondition.
    """
    intent = dict(_drop_nulls(intent))
    intent_meta = intent.setdefault("metadata", {})
    intent_meta.pop("managedFields", None)
    applied = fields.leaf_paths(intent, subresource=request.subresource, has_status=request.has_status)
    base = copy.deepcopy(live) if live is not None else {}
    entries = fields.entries_of(live)
    mine_before: set[fields.Path] = set()
    others: list[tuple[dict[str, Any], set[fields.Path]]] = []
    for item in entries:
        owned = fields.from_fields_v1(item.get("fieldsV1"))
        if (item.get("manager") == request.manager and item.get("operation") == "Apply"
                and item.get("subresource") == request.subresource):
            mine_before = owned
        elif item.get("subresource") == request.subresource:
            others.append((item, owned))
    found = _conflicts(base, intent, applied, others)
    if found and not request.force:
        raise _conflict_error(found, request.api_version)
    taken = {path for _, path in found}
    result: dict[str, Any] = _deep_merge(base, _scoped(intent, request))
    still_owned = set().union(*(owned - fields.overlapping(owned, taken) for _, owned in others)) \
        if others else set()
    kept_by = (_Overlap(still_owned), _Overlap(applied))
    for path in sorted(mine_before - applied, key=len, reverse=True):
        if not any(overlap.touches(path) for overlap in kept_by):
            fields.remove_path(result, path)
    new_entries: list[dict[str, Any]] = [
        item for item in entries if item.get("subresource") != request.subresource
    ]
    for item, owned in others:
        kept = owned - fields.overlapping(owned, taken)
        if kept:
            new_entries.append({**item, "fieldsV1": fields.to_fields_v1(kept)})
    if applied:
        new_entries.append(fields.entry(request.manager, "Apply", request.api_version, applied, request.now,
                                        request.subresource))
    meta = result.setdefault("metadata", {})
    meta["managedFields"] = fields.keep_times(fields.entries_of(live), new_entries)
    if live is not None and not intent_meta.get("resourceVersion"):
        meta["resourceVersion"] = (live.get("metadata") or {}).get("resourceVersion")
    return result


class _Overlap:
    """``fields.overlapping(paths, {path})`` answered for many ``path`` in time linear in all of them."""

    def __init__(self, paths: set[fields.Path]) -> None:
        self.paths = paths
        self.prefixes = fields.prefixes(paths)

    def touches(self, path: fields.Path) -> bool:
        """Whether a member of the set equals, contains or sits inside ``path``."""
        return path in self.prefixes or any(path[:end] in self.paths for end in range(1, len(path)))


def _scoped(intent: dict[str, Any], request: ApplyRequest) -> dict[str, Any]:
    """The part of the intent this endpoint may change (status only on ``/status``)."""
    if request.subresource == "status":
        return {k: v for k, v in intent.items() if k in ("status", "apiVersion", "kind", "metadata")}
    if request.has_status:
        return {k: v for k, v in intent.items() if k != "status"}
    return intent


__all__ = ["ApplyRequest", "apply"]
