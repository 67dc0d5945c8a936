"""The expectation checks of a scenario step (docs/scenario-format.md, "Expectations").

Values compare as JSON: numbers by value (``3 == 3.0``) but never a boolean with a
number; strings, lists and maps structurally. ``contains`` is recursive subset
matching; ``equalsUnordered`` is multiset equality of list items.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

CHECKS = ("exists", "absent", "equals", "equalsUnordered", "contains", "count")


def json_equal(a: Any, b: Any) -> bool:
    """Equality with JSON semantics (see the module docstring)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return float(a) == float(b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if type(a) is not type(b) and not (a is None or b is None):
        return False
    return bool(a == b)


def contains(actual: Any, expected: Any) -> bool:
    """``expected`` is a subset of ``actual``."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            k in actual and contains(actual[k], v) for k, v in expected.items()
        )
    if isinstance(expected, list):
        return isinstance(actual, list) and all(any(contains(a, e) for a in actual) for e in expected)
    return json_equal(actual, expected)


def equals_unordered(actual: Any, expected: list[Any]) -> bool:
    """Same items in any order (multiset)."""
    if not isinstance(actual, list) or len(actual) != len(expected):
        return False
    remaining = list(actual)
    for item in expected:
        for i, candidate in enumerate(remaining):
            if json_equal(candidate, item):
                del remaining[i]
                break
        else:
            return False
    return True


def evaluate(check: str, expected: Any, *, found: bool, actual: Any) -> str | None:
    """None when the check holds, else a short reason."""
    rule: Callable[[], bool]
    if check == "exists":
        return None if found == bool(expected) else ("does not exist" if expected else "exists")
    if check == "absent":
        return None if (not found) == bool(expected) else ("exists" if expected else "does not exist")
    if check == "count":
        n = 0 if not found or actual is None else (len(actual) if isinstance(actual, list) else -1)
        if n < 0:
            return "value is not a list"
        return None if n == expected else f"has {n} items"
    if not found:
        return "path not found"
    if check == "equals":
        rule = lambda: json_equal(actual, expected)  # noqa: E731
    elif check == "equalsUnordered":
        rule = lambda: equals_unordered(actual, expected)  # noqa: E731
    elif check == "contains":
        rule = lambda: contains(actual, expected)  # noqa: E731
    else:
        raise ValueError(f"unknown check {check!r}")
    return None if rule() else "value differs"


__all__ = ["CHECKS", "contains", "equals_unordered", "evaluate", "json_equal"]
