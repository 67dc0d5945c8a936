"""Kubernetes resource quantities (``"500m"``, ``"2Gi"``, ``"1e3"``), exactly as apimachinery does them.

The one implementation of ``k8s.io/apimachinery/pkg/api/resource`` in fleetkeeper: admission
validates with it, the scheduler's estimator and the simulated members count with it, and
the interpreter's Lua ``kube`` library prints with it — Karmada's test vectors compare
those strings, so parsing, ``Add`` and the *canonical form* match apimachinery:

* a quantity is an exact number plus the format its suffix had (DecimalSI ``m k M G…``,
  BinarySI ``Ki Mi Gi…``, DecimalExponent ``e3``);
* parsing rounds a value with more precision than nano *up* (away from zero) to the next nano,
  and caps BinarySI magnitudes at 2^63-1;
* the canonical string has no fractional digits and the largest suffix that loses nothing:
  ``"1.5"`` prints as ``"1500m"``, ``"1.5Gi"`` as ``"1536Mi"``; a BinarySI value below 1024 or not
  integral prints as DecimalSI;
* ``a + b`` keeps the format of the first non-zero operand.

Values are held as :class:`fractions.Fraction`, so no step ever rounds by accident.
:func:`parse_quantity` reads text in the form the API accepts (:data:`PATTERN`, surrounding
blanks ignored) with the same scanner, as an exact :class:`decimal.Decimal` for comparisons
and sums (admission, the scheduler's estimator, the simulated members).
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from fractions import Fraction
from typing import Final

MAX_INT64: Final = 2**63 - 1
#: the form of a quantity the API accepts (Kubernetes' schema pattern, integral exponents)
PATTERN: Final = re.compile(
    r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+|Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?")
_FORMAT_MESSAGE: Final = ("quantities must match the regular expression "
                          "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")


class Format(StrEnum):
    """How a quantity is printed; remembered from the suffix it was parsed with."""

    DECIMAL_EXPONENT = "DecimalExponent"
    BINARY_SI = "BinarySI"
    DECIMAL_SI = "DecimalSI"


_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_BY_EXPONENT = {v: k for k, v in _DECIMAL_SUFFIXES.items()}
_BINARY_BY_EXPONENT = {0: "", **{v: k for k, v in _BINARY_SUFFIXES.items()}}
_SUFFIX_CHARS = set("eEinumkKMGTP")
_NANO = Fraction(1, 10**9)
#: the largest decimal exponent (``1e1000``) a quantity may have: exact arithmetic on anything
#: larger costs seconds of CPU for a value no resource ever has
MAX_EXPONENT = 1000
OUT_OF_RANGE = "quantity is out of range"
_MAX_BINARY = Fraction(2**63 - 1)


class QuantityError(ValueError):
    """A string is not a Kubernetes quantity."""


@dataclass(frozen=True)
class Quantity:
    """An exact amount and the format it prints in."""

    value: Fraction
    format: Format = Format.DECIMAL_SI

    @classmethod
    def parse(cls, text: str) -> Quantity:
        """Parse like ``resource.ParseQuantity``; raise :class:`QuantityError` when malformed."""
        if text == "":
            raise QuantityError("quantities must match the regular expression "
                                "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
        if text == "0":
            return cls(Fraction(0), Format.DECIMAL_SI)
        negative, num, denom, suffix = _scan(text)
        base, exponent, fmt = _interpret_suffix(suffix, text)
        amount = Fraction(int(num + denom or "0"), 10 ** len(denom)) * Fraction(base) ** exponent
        if amount.denominator != 1 and (amount / _NANO).denominator != 1:
            amount = math.ceil(amount / _NANO) * _NANO
        if fmt is Format.BINARY_SI and amount > _MAX_BINARY:
            amount = _MAX_BINARY
        if fmt is Format.BINARY_SI and 0 < amount < 1:
            fmt = Format.DECIMAL_SI
        return cls(-amount if negative else amount, fmt)

    @classmethod
    def of(cls, value: object) -> Quantity:
        """A quantity from wire JSON: a string, or a number (as ``json.Unmarshal`` accepts)."""
        if isinstance(value, Quantity):
            return value
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise QuantityError(f"a quantity must be a string or a number, not {type(value).__name__}")
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        return cls.parse(value if isinstance(value, str) else repr(value))

    @classmethod
    def from_int(cls, value: int, fmt: Format) -> Quantity:
        """``resource.NewQuantity``."""
        return cls(Fraction(value), fmt)

    @classmethod
    def from_milli(cls, milli: int, fmt: Format) -> Quantity:
        """``resource.NewMilliQuantity``."""
        return cls(Fraction(milli, 1000), fmt)

    def __add__(self, other: Quantity) -> Quantity:
        fmt = other.format if self.value == 0 else self.format
        return Quantity(self.value + other.value, fmt)

    def is_zero(self) -> bool:
        return self.value == 0

    def int_value(self) -> int:
        """``Value()``: the value rounded up to an integer."""
        return math.ceil(self.value)

    def milli_value(self) -> int:
        """``MilliValue()``: the value in thousandths, rounded up."""
        return math.ceil(self.value * 1000)

    def approximate_float(self) -> float:
        """``AsApproximateFloat64()``."""
        return float(self.value)

    def __str__(self) -> str:
        if self.value == 0:
            return "0"
        fmt = self.format
        if fmt is Format.BINARY_SI and (-1024 < self.value < 1024 or self.value.denominator != 1):
            fmt = Format.DECIMAL_SI
        if fmt is Format.BINARY_SI:
            return _binary_string(int(self.value))
        return _decimal_string(self.value, fmt)


def _scan(text: str) -> tuple[bool, str, str, str]:
    """Split into sign, integer digits, fraction digits and suffix (``parseQuantityString``)."""
    pos, end = 0, len(text)
    negative = False
    if text[0] in "+-":
        negative = text[0] == "-"
        pos = 1
    while pos < end and text[pos] == "0":
        pos += 1
    start = pos
    while pos < end and text[pos].isdigit() and text[pos].isascii():
        pos += 1
    num = text[start:pos] or "0"
    denom = ""
    if pos < end and text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos].isdigit() and text[pos].isascii():
            pos += 1
        denom = text[start:pos]
    suffix = text[pos:]
    rest = suffix
    while rest and rest[0] in _SUFFIX_CHARS:
        rest = rest[1:]
    if rest and rest[0] in "+-":
        rest = rest[1:]
    if rest and not (rest.isdigit() and rest.isascii()):
        raise QuantityError(f"quantity {text!r} must match the regular expression "
                            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
    return negative, num, denom, suffix


def _interpret_suffix(suffix: str, text: str) -> tuple[int, int, Format]:
    if suffix in _DECIMAL_SUFFIXES:
        return 10, _DECIMAL_SUFFIXES[suffix], Format.DECIMAL_SI
    if suffix in _BINARY_SUFFIXES:
        return 2, _BINARY_SUFFIXES[suffix], Format.BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        digits = suffix[1:]
        body = digits[1:] if digits[:1] in ("+", "-") else digits
        if body.isdigit() and body.isascii():
            if len(body) > len(str(MAX_EXPONENT)) or int(body) > MAX_EXPONENT:
                raise QuantityError(f"{OUT_OF_RANGE}: the exponent of {text[:64]!r} is beyond "
                                    f"±{MAX_EXPONENT}")
            return 10, int(digits), Format.DECIMAL_EXPONENT
    raise QuantityError(f"unable to parse quantity's suffix in {text[:64]!r}")


def _decimal_string(value: Fraction, fmt: Format) -> str:
    exponent = -9
    mantissa = value / _NANO
    while mantissa.denominator != 1:  # only BinarySI values finer than nano can land here
        mantissa *= 10
        exponent -= 1
    amount = int(mantissa)
    while amount % 10 == 0:
        amount //= 10
        exponent += 1
    while exponent % 3 != 0:
        amount *= 10
        exponent -= 1
    if fmt is Format.DECIMAL_EXPONENT:
        return f"{amount}e{exponent}" if exponent else str(amount)
    if exponent > 18:
        amount *= 10 ** (exponent - 18)
        exponent = 18
    return f"{amount}{_DECIMAL_BY_EXPONENT[exponent]}"


def _binary_string(value: int) -> str:
    exponent = 0
    while value % 1024 == 0 and exponent < 60:
        value //= 1024
        exponent += 10
    return f"{value}{_BINARY_BY_EXPONENT[exponent]}"


def canonical(value: object) -> str:
    """The canonical string of a wire quantity (string or number)."""
    return str(Quantity.of(value))


def parse_quantity(text: str | int | float) -> Decimal:
    """The value of a quantity as the API accepts it (a number is its own value);
    ``ValueError`` when it is not one."""
    if isinstance(text, int | float) and not isinstance(text, bool):
        return Decimal(str(text))
    if not isinstance(text, str):
        raise ValueError(f"quantity must be a string, got {type(text).__name__}")
    try:
        return _value_of(text.strip())
    except QuantityError as exc:
        if str(exc).startswith(OUT_OF_RANGE):
            raise
        raise QuantityError(f"{_FORMAT_MESSAGE}: {text[:64]!r}") from None


@functools.lru_cache(maxsize=8192)
def _value_of(text: str) -> Decimal:
    """The exact value of ``text`` (no rounding to nano, no BinarySI cap: a sum of these stays
    exact, and an exponent of any size costs nothing)."""
    if PATTERN.fullmatch(text) is None:
        raise QuantityError(_FORMAT_MESSAGE)
    negative, num, denom, suffix = _scan(text)
    base, exponent, _ = _interpret_suffix(suffix, text)
    number = Decimal(f"{'-' if negative else ''}{num}{'.' + denom if denom else ''}")
    if base == 2:
        binary: Decimal = number * 2**exponent
        return binary
    scaled: Decimal = number.scaleb(exponent)
    return scaled


def is_quantity(text: str) -> bool:
    """Whether ``text`` parses as a quantity."""
    try:
        parse_quantity(text)
    except ValueError:
        return False
    return True


__all__ = [
    "MAX_INT64", "PATTERN", "Format", "Quantity", "QuantityError", "canonical", "is_quantity",
    "parse_quantity",
]
