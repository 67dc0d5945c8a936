"""Reading YAML the way Kubernetes does: ``yaml.safe_load`` that refuses duplicate mapping keys.

PyYAML keeps the last of two equal keys in a mapping; Kubernetes' parser (sigs.k8s.io/yaml over
go-yaml) refuses the document with ``mapping key "x" already defined at line N``. A file that
says ``timeline:`` twice almost always lost half of what its author meant, so every reader of
user-written YAML (scenario files, ``schedule`` and ``interpret`` inputs) checks that the bytes
are UTF-8 with :func:`text_of`, then loads the text with :func:`load` or :func:`load_all`.

Everything else is ``yaml.safe_load``: the same tags, the same types, and merge keys (``<<``)
still give way to the keys written beside them. A duplicate raises :class:`DuplicateKeyError`,
a ``yaml.YAMLError``, so callers that already catch YAML errors report it with the rest.

PyYAML composes nested collections recursively, so a document nested a few hundred levels
deep would end in ``RecursionError``. :class:`BoundedLoader` (the base of every loader here and
of the API server's) refuses a collection nested deeper than :data:`~.limits.MAX_DEPTH` as it
composes it, with :class:`NestingError`, a ``yaml.YAMLError`` too.
"""

from __future__ import annotations

import sys
from collections.abc import Hashable
from pathlib import Path
from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError

from fleetkeeper.api.limits import MAX_DEPTH

_MERGE_TAG = "tag:yaml.org,2002:merge"


class NestingError(ComposerError):
    """A document nests collections deeper than :data:`~.limits.MAX_DEPTH`."""


class BoundedLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses collections nested deeper than :data:`~.limits.MAX_DEPTH`."""

    _depth = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        if not self.check_event(yaml.SequenceStartEvent, yaml.MappingStartEvent):
            return super().compose_node(parent, index)
        if self._depth >= MAX_DEPTH:
            mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
            raise NestingError(None, None, f"collections are nested more than {MAX_DEPTH} levels deep "
                               "(the limit)", mark)
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


class DuplicateKeyError(ConstructorError):
    """A mapping names the same key twice (the message gives the key and both lines)."""


class _Loader(BoundedLoader):
    """``yaml.SafeLoader`` that checks each mapping's own keys for duplicates before building it."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, yaml.Node] = {}
            for key_node, _ in node.value:
                if key_node.tag == _MERGE_TAG:
                    continue
                key = self.construct_object(key_node, deep=True)  # cached: built once
                try:
                    first = seen.setdefault(key, key_node)
                except TypeError:  # an unhashable key: the base class reports it
                    continue
                if first is not key_node:
                    raise DuplicateKeyError(
                        None, None,
                        f"mapping key {_shown(key)} already defined at line {first.start_mark.line + 1}",
                        key_node.start_mark,
                    )
        return super().construct_mapping(node, deep=deep)


def _shown(key: Any) -> str:
    return f'"{key}"' if isinstance(key, str) else repr(key)


def text_of(raw: bytes) -> str:
    """``raw`` decoded as UTF-8; ``ValueError("not UTF-8 text (byte 0xff at offset 12)")`` if it is not."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})") from None


def load(text: str) -> Any:
    """The one document in ``text``, as ``yaml.safe_load`` builds it; duplicate keys are refused."""
    return yaml.load(text, Loader=_Loader)


def load_all(text: str) -> list[Any]:
    """Every document in ``text`` (``None`` for an empty one), as ``yaml.safe_load_all`` builds them."""
    return list(yaml.load_all(text, Loader=_Loader))


class Unreadable(ValueError):
    """A YAML file that cannot be used; the message names the file and why."""


def read_all(path: str) -> list[Any]:
    """Every document of the file at ``path`` (``-``: standard input), ``None`` for an empty one;
    :class:`Unreadable` when it cannot be read, is not UTF-8 or is not valid YAML."""
    try:
        text = text_of(sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes())
    except OSError as exc:
        raise Unreadable(f"{path}: cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise Unreadable(f"{path}: cannot read: {exc}") from None
    try:
        return load_all(text)
    except yaml.YAMLError as exc:
        raise Unreadable(f"{path}: invalid YAML: {exc}") from None


def list_items(doc: Any) -> list[Any] | None:
    """The objects of a ``List`` document, or ``None`` for any other document.

    ``kubectl get … -o yaml`` prints several objects as ``apiVersion: v1, kind: List, items:
    […]``; kubectl reads that (and a typed list, ``kind: …List`` with ``items``) as its items.
    ``ValueError`` when ``items`` is not a list."""
    if not isinstance(doc, dict) or not isinstance(doc.get("kind"), str):
        return None
    if doc["kind"] != "List" and not (doc["kind"].endswith("List") and "items" in doc):
        return None
    items = doc.get("items")
    if items is None:
        return []
    if not isinstance(items, list):
        raise ValueError(f"items: Invalid value: {type(items).__name__}: must be a list of objects")
    return items


__all__ = [
    "BoundedLoader", "DuplicateKeyError", "NestingError", "Unreadable", "list_items", "load", "load_all",
    "read_all", "text_of",
]
