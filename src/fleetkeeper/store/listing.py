"""Listing: scan a backend in key order, filter by selectors, cut pages.

The backend scans records of one kind sorted by (namespace, name); this module pulls
them in chunks until a page is full, so a selective list with a small ``limit`` reads
only what it needs. The continue point is the (namespace, name) of the last item
returned; a page carries one whenever more records follow (the next page may then turn
out empty, as Kubernetes allows). Records are merged in over the scan (``overlay``):
inside a batch, the owner's staged writes, so it reads its own writes; on a later page,
the state at the first page's revision of whatever changed since (from the history: the
store's ``_as_of``), so a paged list is one consistent snapshot, as in Kubernetes. They
are merged chunk by chunk, so a page with a limit still reads only what it needs.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

import orjson

from fleetkeeper import errors
from fleetkeeper.api.scheme import GroupKind
from fleetkeeper.api.selectors import FieldRequirements, LabelRequirements, field_selector_matches
from fleetkeeper.store.backend import Backend, Key, Record

#: records fetched per backend scan when a page size is given (at least; at most :data:`MAX_CHUNK`)
CHUNK = 256
#: the most records one scan fetches, whatever page size was asked (``limit`` may be any int64)
MAX_CHUNK = 4096


def matches(labels: LabelRequirements, fields: FieldRequirements, obj: dict[str, Any]) -> bool:
    """Whether ``obj`` passes both selectors."""
    if labels:
        have = obj["metadata"].get("labels") or {}
        for req in labels:
            if not req.matches(have):
                return False
    return not fields or field_selector_matches(fields, obj)


def _position(obj: dict[str, Any]) -> tuple[str, str]:
    meta = obj["metadata"]
    return (meta.get("namespace") or "", meta["name"])


class Lister:
    """Lists over one backend (see the module docstring)."""

    def __init__(self, backend: Backend) -> None:
        self._backend = backend

    async def page(
        self,
        gk: GroupKind,
        namespace: str | None,
        labels: LabelRequirements,
        fields: FieldRequirements,
        *,
        after: tuple[str, str] | None,
        limit: int | None,
        overlay: dict[Key, Record | None] | None = None,
    ) -> tuple[list[dict[str, Any]], tuple[str, str] | None]:
        """The page of matching objects and where the next page starts (``None``: the end)."""
        pending = _pending(overlay, namespace, after)
        if limit is None and not pending:
            records = await self._backend.scan(gk, namespace, after=after)
            return self._page(records, labels, fields, None, full=False)
        items: list[dict[str, Any]] = []
        chunk = None if limit is None else min(max(CHUNK, limit + 1), MAX_CHUNK)
        for _ in range(1 << 30):  # bounded by the number of records
            records = await self._backend.scan(gk, namespace, after=after, limit=chunk)
            full = len(records) == chunk
            end = _position(records[-1].obj) if full else None
            if pending:  # the overlay's records up to the end of this chunk, merged in
                records, pending = _merge(records, pending, end)
            page, last = self._page(records, labels, fields, None if limit is None else limit - len(items),
                                    full=full)
            items.extend(page)
            if last is not None or end is None:
                return items, last
            after = end
        return items, None  # pragma: no cover

    @staticmethod
    def _page(
        records: list[Record], labels: LabelRequirements, fields: FieldRequirements, limit: int | None,
        *, full: bool,
    ) -> tuple[list[dict[str, Any]], tuple[str, str] | None]:
        items: list[dict[str, Any]] = []
        selective = bool(labels or fields)
        for i, record in enumerate(records):
            if selective and not matches(labels, fields, record.obj):
                continue
            items.append(record.copy())
            if limit is not None and len(items) >= limit:
                more = full or i < len(records) - 1
                return items, _position(record.obj) if more else None
        return items, None



Pending = list[tuple[tuple[str, str], Record | None]]


def _pending(overlay: dict[Key, Record | None] | None, namespace: str | None,
             after: tuple[str, str] | None) -> Pending:
    """The overlay's records (``None``: absent) this list still reaches, by position."""
    if not overlay:
        return []
    found = [((key.namespace, key.name), record) for key, record in overlay.items()
             if (namespace is None or key.namespace == namespace)
             and (after is None or (key.namespace, key.name) > after)]
    return sorted(found, key=lambda item: item[0])


def _merge(records: list[Record], pending: Pending,
           end: tuple[str, str] | None) -> tuple[list[Record], Pending]:
    """``records`` (a chunk of the scan, ending at ``end``; ``None``: the last chunk) with
    the pending records up to ``end`` in their places; and the pending ones left."""
    by_position = {_position(record.obj): record for record in records}
    taken = 0
    for position, record in pending:
        if end is not None and position > end:
            break
        taken += 1
        if record is None:
            by_position.pop(position, None)
        else:
            by_position[position] = record
    return [by_position[p] for p in sorted(by_position)], pending[taken:]


def encode_continue(revision: int, last: tuple[str, str]) -> str:
    """The continue token of a page: the revision its list was cut at and its last (namespace, name)."""
    return base64.urlsafe_b64encode(orjson.dumps({"rv": revision, "start": list(last)})).decode()


def decode_continue(token: str) -> tuple[int, tuple[str, str]]:
    """What :func:`encode_continue` made (``BadRequest`` for anything else)."""
    try:
        data = orjson.loads(base64.urlsafe_b64decode(token.encode()))
        revision, (namespace, name) = int(data["rv"]), data["start"]
        return revision, (str(namespace), str(name))
    except (binascii.Error, ValueError, KeyError, TypeError, orjson.JSONDecodeError):
        raise errors.BadRequest(f"invalid continue token {token!r}") from None


__all__ = ["CHUNK", "MAX_CHUNK", "Lister", "decode_continue", "encode_continue", "matches"]
