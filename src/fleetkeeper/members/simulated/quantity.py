"""Resource arithmetic for the simulated scheduler: milli-units in, canonical strings out.

Quantities are :mod:`fleetkeeper.api.quantity`'s (every form Kubernetes accepts: ``500m``,
``2Gi``, ``1.5``, ``3k``, ``1e3``). Here values become integers in *milli-units*
(Kubernetes' ``MilliValue``, rounding a finer value up), so sums are exact and a
scheduling decision is integer comparison. ``format_milli`` prints a sum back in the
canonical form Kubernetes would (``"24"``, ``"500m"``, ``"96Gi"``, ``"3k"``): binary
suffixes for byte amounts (memory, storage) of at least 1Ki, decimal ones otherwise.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping

from fleetkeeper.api.quantity import Format, Quantity, parse_quantity

#: ``resource name → milli-units``; what the scheduler and the summaries add up.
MilliList = dict[str, int]

_BYTE_RESOURCES = ("memory", "ephemeral-storage", "storage")


def to_milli(text: str | int | float) -> int:
    """A quantity in milli-units, rounded up (``"0.1m"`` → 1, ``"2"`` → 2000); ``ValueError`` if malformed."""
    return math.ceil(parse_quantity(text) * 1000)


def milli_list(resources: Mapping[str, str | int | float] | None) -> MilliList:
    """Parse a ``ResourceList`` (``{"cpu": "500m"}`` → ``{"cpu": 500}``)."""
    return {name: to_milli(value) for name, value in (resources or {}).items()}


def add_into(total: MilliList, other: Mapping[str, int], sign: int = 1) -> None:
    """``total += sign * other``, resource by resource."""
    for name, value in other.items():
        total[name] = total.get(name, 0) + sign * value


def sum_lists(lists: Iterable[Mapping[str, int]]) -> MilliList:
    """The resource-by-resource sum of several lists."""
    total: MilliList = {}
    for item in lists:
        add_into(total, item)
    return total


def fits(request: Mapping[str, int], free: Mapping[str, int]) -> bool:
    """Whether every requested amount is available."""
    return all(value <= 0 or value <= free.get(name, 0) for name, value in request.items())


def is_byte_resource(name: str) -> bool:
    """Whether a resource is an amount of bytes (printed with binary suffixes)."""
    return name in _BYTE_RESOURCES or name.startswith("hugepages-")


@functools.lru_cache(maxsize=4096)
def format_milli(milli: int, *, binary: bool = False) -> str:
    """The canonical quantity string of a milli-unit amount (binary suffixes for byte amounts)."""
    return str(Quantity.from_milli(milli, Format.BINARY_SI if binary else Format.DECIMAL_SI))


def format_list(resources: Mapping[str, int]) -> dict[str, str]:
    """Print a milli-unit list as a ``ResourceList``, keys sorted."""
    return {name: format_milli(resources[name], binary=is_byte_resource(name)) for name in sorted(resources)}


__all__ = [
    "MilliList", "add_into", "fits", "format_list", "format_milli", "is_byte_resource", "milli_list",
    "sum_lists", "to_milli",
]
