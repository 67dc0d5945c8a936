"""Semantic comparison of wire objects, as Go compares typed objects after a round trip.

Karmada's tests compare typed Kubernetes objects, where a zero field and a missing field are the
same thing. ``typed(obj)`` drops zero values (``None``, ``0``, ``""``, ``False``, ``{}``, ``[]``)
from every mapping, recursively, so two wire objects compare equal exactly when their typed
forms would.
"""

from __future__ import annotations

from typing import Any


def typed(value: Any) -> Any:
    if isinstance(value, dict):
        out = {k: typed(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v not in (None, 0, "", False, {}, [])}
    if isinstance(value, list):
        return [typed(v) for v in value]
    return value
