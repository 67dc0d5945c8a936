"""Kubernetes resource quantities (``"500m"``, ``"2Gi"``, ``"1e3"``) as exact decimals.

API types keep quantities as their strings; this module parses them for comparisons
(resource-model validation) and arithmetic (the scheduler's estimator). Values are
:class:`decimal.Decimal`, exact for every suffix Kubernetes accepts.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Final

MAX_INT64: Final = 2**63 - 1

_QUANTITY: Final = re.compile(
    r"^(?P<num>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?:(?P<exp>[eE][+-]?[0-9]+)|(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?)$"
)
_BINARY: Final = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL: Final = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}


def parse_quantity(text: str | int | float) -> Decimal:
    """The exact value of a quantity; ``ValueError`` when it is not one."""
    if isinstance(text, int | float) and not isinstance(text, bool):
        return Decimal(str(text))
    if not isinstance(text, str):
        raise ValueError(f"quantity must be a string, got {type(text).__name__}")
    match = _QUANTITY.match(text.strip())
    if match is None:
        raise ValueError(f"quantities must match the regular expression "
                         f"'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': {text!r}")
    try:
        number = Decimal(match["num"])
    except InvalidOperation as exc:  # pragma: no cover - the regex admits only decimals
        raise ValueError(f"invalid quantity {text!r}") from exc
    if match["exp"]:
        scaled: Decimal = number.scaleb(int(match["exp"][1:]))
        return scaled
    suffix = match["suffix"] or ""
    if suffix in _BINARY:
        return number * _BINARY[suffix]
    result: Decimal = number.scaleb(_DECIMAL[suffix])
    return result


def is_quantity(text: str) -> bool:
    """Whether ``text`` parses as a quantity."""
    try:
        parse_quantity(text)
    except ValueError:
        return False
    return True


__all__ = ["MAX_INT64", "is_quantity", "parse_quantity"]
