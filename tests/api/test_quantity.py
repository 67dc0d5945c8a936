"""Resource quantities parse to exact decimals."""

from __future__ import annotations

from decimal import Decimal

import pytest

from fleetkeeper.api.quantity import MAX_INT64, is_quantity, parse_quantity


@pytest.mark.parametrize(("text", "value"), [
    pytest.param("4", Decimal(4), id="a plain integer"),
    pytest.param("500m", Decimal("0.5"), id="milli"),
    pytest.param("2Gi", Decimal(2 * 1024**3), id="binary gibi"),
    pytest.param("1Ti", Decimal(1024**4), id="binary tebi"),
    pytest.param("3k", Decimal(3000), id="decimal kilo"),
    pytest.param("1E", Decimal(10**18), id="a lone E is exa"),
    pytest.param("1e3", Decimal(1000), id="an exponent"),
    pytest.param("1.5", Decimal("1.5"), id="a decimal fraction"),
    pytest.param(".5", Decimal("0.5"), id="a fraction without its leading zero"),
    pytest.param("9223372036854775807", Decimal(MAX_INT64), id="MaxInt64 is exact"),
    pytest.param(2, Decimal(2), id="a number given as a number"),
])
def test_parse_quantity(text: str, value: Decimal) -> None:
    assert parse_quantity(text) == value


@pytest.mark.parametrize("text", [
    pytest.param("x", id="a word"),
    pytest.param("1Kb", id="an unknown suffix"),
    pytest.param("", id="the empty string"),
    pytest.param("1 Gi", id="a space before the suffix"),
])
def test_invalid_quantities_are_rejected(text: str) -> None:
    assert not is_quantity(text)
    with pytest.raises(ValueError, match="quantities must match"):
        parse_quantity(text)


@pytest.mark.parametrize("text", ["1e9999999", "1e-9999999", "1E1001", "5e" + "9" * 5000],
                         ids=["huge exponent", "tiny exponent", "just past the bound", "5000 digits"])
def test_an_exponent_beyond_the_bound_is_out_of_range_not_seconds_of_arithmetic(text: str) -> None:
    from fleetkeeper.api.quantity import MAX_EXPONENT, Quantity, QuantityError, parse_quantity

    for parse in (Quantity.parse, parse_quantity):
        with pytest.raises(QuantityError, match="quantity is out of range"):
            parse(text)
    assert Quantity.parse(f"1e{MAX_EXPONENT}").value == 10**MAX_EXPONENT
