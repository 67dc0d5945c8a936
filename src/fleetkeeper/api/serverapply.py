"""Server-side apply (``PATCH`` with ``application/apply-patch+yaml``), for every API we serve.

The body is the manager's *intent*: the full configuration it wants to own. Applying it:

1. **conflicts** — a field the intent sets to a value different from the live one, and
   that another manager owns, is a conflict: ``409 Conflict`` naming every such field
   and its owner, unless ``force=true``, which takes the field over;
2. **merge** — maps merge recursively, everything else (lists included) is replaced;
3. **removal** — a field the manager applied last time but no longer does is removed,
   unless another manager owns it too (shared ownership keeps it);
4. **ownership** — the manager's ``Apply`` entry becomes exactly the intent's fields;
   forced-over fields leave their old owners; every other entry keeps its place.

``status`` is applied only through ``/status``; the metadata the server sets
(``creationTimestamp``, ``generation``, ``managedFields`` …) is never taken from an intent.
An intent for an absent object creates it. Repeating an apply gives an object equal to the
live one (:func:`unchanged` tells, JSON-strictly), which the server does not write.
The plane's API server and the simulated members both apply through here. Field sets are
in :mod:`fleetkeeper.api.managedfields`.

This runs on every apply to a simulated member, so it copies only what it changes: the
result shares unchanged sub-trees with ``live`` and ``intent`` (neither is changed).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson

from fleetkeeper import errors
from fleetkeeper.api import managedfields as fields

Paths = set[fields.Path]
#: the other managers' entries, each with the fields it owns
Owners = list[tuple[dict[str, Any], Paths]]

#: metadata the server sets, never read from an intent (``uid`` and ``resourceVersion`` stay: preconditions)
SERVER_SET = frozenset({
    "managedFields", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation",
    "selfLink",
})


@dataclass(frozen=True)
class ApplyRequest:
    """Who applies, and how (``now`` a time, or a timestamp already formatted)."""

    manager: str
    force: bool
    api_version: str
    now: datetime | str
    subresource: str | None = None
    has_status: bool = True


def _drop_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


def _without_nulls(intent: dict[str, Any]) -> dict[str, Any]:
    """``intent`` without its ``null`` fields: itself when it has none (judged from its JSON,
    where a string holding ``null`` only costs the copy)."""
    try:
        if b"null" not in orjson.dumps(intent):
            return intent
    except TypeError:  # not plain JSON: the checks on the write say what is wrong
        pass
    return dict(_drop_nulls(intent))


def _merged(live: dict[str, Any], intent: dict[str, Any]) -> dict[str, Any]:
    out = dict(live)
    for key, value in intent.items():
        old = live.get(key)
        out[key] = _merged(old, value) if isinstance(value, dict) and isinstance(old, dict) else value
    return out


def _path_text(path: fields.Path) -> str:
    return "." + ".".join(path)


def _conflicts(live: dict[str, Any], intent: dict[str, Any], applied: Paths,
               others: Owners) -> list[tuple[str, fields.Path]]:
    if not others:
        return []
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


def _intent_of(intent: dict[str, Any]) -> dict[str, Any]:
    """The intent without nulls, its metadata without what the server sets (a new top and metadata map)."""
    intent = _without_nulls(intent)
    meta = intent.get("metadata")
    own = {k: v for k, v in meta.items() if k not in SERVER_SET} if isinstance(meta, dict) else {}
    return {**intent, "metadata": own}


def apply(live: dict[str, Any] | None, intent: dict[str, Any], request: ApplyRequest) -> dict[str, Any]:
    """Return the object after applying ``intent`` over ``live`` (``None`` = absent).

    The result carries the new ``metadata.managedFields`` and, when ``live`` exists and
    the intent names no resourceVersion, the live resourceVersion as a precondition.
    """
    intent = _intent_of(intent)
    rendered = fields.fields_of(intent, subresource=request.subresource, has_status=request.has_status)
    base = live if live is not None else {}
    entries = fields.entries_of(live)
    mine: dict[str, Any] | None = None
    others: Owners = []
    for item in entries:
        if item.get("subresource") != request.subresource:
            continue
        if item.get("manager") == request.manager and item.get("operation") == "Apply":
            mine = item
        else:
            others.append((item, fields.from_fields_v1(item.get("fieldsV1"))))
    result: dict[str, Any] = _merged(base, _scoped(intent, request))
    taken: Paths = set()
    if others or (mine is not None and mine.get("fieldsV1") != rendered):
        # other owners to respect, or fields this manager no longer applies: the paths are needed
        applied = fields.leaf_paths(intent, subresource=request.subresource, has_status=request.has_status)
        found = _conflicts(base, intent, applied, others)
        if found and not request.force:
            raise _conflict_error(found, request.api_version)
        taken = {path for _, path in found}
        mine_before = fields.from_fields_v1(mine.get("fieldsV1")) if mine is not None else set()
        for path in _removed(mine_before - applied, applied, others, taken):
            result = fields.without_path(result, path)
    meta = result["metadata"] = dict(result["metadata"])
    mine_now = _my_entry(mine, rendered, request) if rendered else None
    meta["managedFields"] = _entries(entries, mine, mine_now, others, taken)
    if live is not None and not intent["metadata"].get("resourceVersion"):
        meta["resourceVersion"] = (live.get("metadata") or {}).get("resourceVersion")
    return result


def _removed(dropped: Paths, applied: Paths, others: Owners, taken: Paths) -> list[fields.Path]:
    """The fields the manager stopped applying that nobody else keeps, deepest first."""
    if not dropped:
        return []
    still_owned: Paths = set()
    for _, owned in others:
        still_owned |= owned - fields.overlapping(owned, taken)
    kept_by = (_Overlap(still_owned), _Overlap(applied))
    return [path for path in sorted(dropped, key=len, reverse=True)
            if not any(overlap.touches(path) for overlap in kept_by)]


def _entries(entries: list[dict[str, Any]], mine: dict[str, Any] | None, mine_now: dict[str, Any] | None,
             others: Owners, taken: Paths) -> list[dict[str, Any]]:
    """The new ``managedFields``: each entry in its place (an unchanged one as it was)."""
    owned_by = {id(item): owned for item, owned in others} if taken else {}
    out: list[dict[str, Any]] = []
    for item in entries:
        if item is mine:
            if mine_now is not None:
                out.append(mine_now)
            continue
        owned = owned_by.get(id(item), set())
        lost = fields.overlapping(owned, taken)
        if not lost:
            out.append(item)
        elif owned - lost:
            out.append({**item, "fieldsV1": fields.to_fields_v1(owned - lost)})
    if mine is None and mine_now is not None:
        out.append(mine_now)
    return out


def _my_entry(mine: dict[str, Any] | None, rendered: dict[str, Any], request: ApplyRequest) -> dict[str, Any]:
    """The applier's entry: the old one (its time too) when it owns the same fields as before."""
    if mine is not None and (mine.get("fieldsV1"), mine.get("apiVersion")) == (rendered, request.api_version):
        return mine
    return fields.entry(request.manager, "Apply", request.api_version, rendered, request.now,
                        request.subresource)


def unchanged(live: dict[str, Any] | None, result: dict[str, Any]) -> bool:
    """Whether an apply's result is the live object itself, as JSON: Python holds
    ``True == 1``, an API server does not, so ``replicas: true`` over 1 is a change (which the
    checks on the write then refuse), not a no-op."""
    if live is None or result != live:
        return False
    try:
        return orjson.dumps(result, option=_SORTED) == orjson.dumps(live, option=_SORTED)
    except TypeError:  # not plain JSON: the checks on the write say what is wrong
        return False


_SORTED = orjson.OPT_SORT_KEYS


class _Overlap:
    """``fields.overlapping(paths, {path})`` answered for many ``path`` in time linear in all of them."""

    def __init__(self, paths: Paths) -> None:
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


__all__ = ["SERVER_SET", "ApplyRequest", "apply", "unchanged"]
