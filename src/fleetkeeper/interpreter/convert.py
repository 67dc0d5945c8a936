"""Lua results back to wire values, with Karmada's quirks (spec B.4.3).

Lua has one table type for both JSON objects and arrays, so an *empty* table comes back as ``[]``
whatever it was meant to be. Karmada repairs that with *reference objects* (the inputs of the
call), and scripts written for Karmada rely on the repair:

* a whole result of ``[]`` becomes ``{}`` when an object is expected;
* every other ``[]`` at field path P (object keys only, array indices skipped) becomes ``{}`` if
  P held an empty object in a reference, stays ``[]`` if P held an empty list there, and is
  **deleted** otherwise. Retain uses (desired, observed) as references, ReviseReplica the input
  object, and every other operation none — so an empty table nested in their results vanishes.

Numbers: Lua integers and integral floats become ``int`` (Go prints ``3``, not ``3.0``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

Path = tuple[str, ...]


def empty_paths(references: Iterable[Any]) -> tuple[set[Path], set[Path]]:
    """Field paths (array indices skipped) holding an empty list, and an empty object."""
    lists: set[Path] = set()
    objects: set[Path] = set()

    def walk(value: Any, path: Path) -> None:
        items = value.items() if isinstance(value, dict) else ((None, v) for v in value)
        for key, child in items:
            here = path if key is None else (*path, key)
            if isinstance(child, list) and not child:
                lists.add(here)
            elif isinstance(child, dict) and not child:
                objects.add(here)
            elif isinstance(child, dict | list):
                walk(child, here)

    for reference in references:
        if isinstance(reference, dict | list):
            walk(reference, ())
    return lists, objects


def fix_empty_tables(result: Any, *, expect_object: bool, references: Iterable[Any] = ()) -> Any:
    """Repair the empty tables of a converted Lua result (see the module notes)."""
    if result == []:
        return {} if expect_object else []
    lists, objects = empty_paths(references)
    return _fix(result, (), lists, objects)


def _fix(value: Any, path: Path, lists: set[Path], objects: set[Path]) -> Any:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, child in value.items():
            here = (*path, key)
            if isinstance(child, list) and not child:
                if here in objects:
                    out[key] = {}
                elif here in lists:
                    out[key] = []
                continue
            out[key] = _fix(child, here, lists, objects)
        return out
    if isinstance(value, list):
        items: list[Any] = []
        for child in value:
            if isinstance(child, list) and not child:
                if path in objects:
                    items.append({})
                elif path in lists:
                    items.append([])
                continue
            items.append(_fix(child, path, lists, objects))
        return items
    return value
