"""Deep copies of JSON-shaped values (wire dicts), fast.

Manifests, member objects and reflected status travel as plain JSON-shaped dicts, and
the code that handles them copies before it changes anything — the resource
interpreter's rules, the simulated clusters' reads. ``copy.deepcopy`` pays for
generality (a memo of every object, the copy protocol per value); a round trip through
orjson's C encoder and parser builds the same tree several times faster. Values that
are not plain JSON (datetimes, dataclasses, subclasses of the JSON types, keys that are
not strings, integers beyond 64 bits) take an exact recursive copy instead; tuples come
back as lists, as JSON has no tuples.
"""

from __future__ import annotations

from typing import Any, TypeVar, cast

import orjson

T = TypeVar("T")

#: what orjson must refuse rather than convert, so the exact path takes it
_EXACT = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_SUBCLASS


def json_copy(value: T) -> T:
    """An independent deep copy of a JSON-shaped value."""
    if isinstance(value, dict | list):
        try:
            return cast(T, orjson.loads(orjson.dumps(value, option=_EXACT)))
        except TypeError:  # orjson.JSONEncodeError: not plain JSON
            pass
    return cast(T, _exact(value))


def _exact(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _exact(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_exact(v) for v in value]
    return value


__all__ = ["json_copy"]
