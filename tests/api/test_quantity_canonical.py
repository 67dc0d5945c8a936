"""Kubernetes quantities: parsing, canonical form and sums (apimachinery's behaviour)."""

from __future__ import annotations

import pytest

from fleetkeeper.api.quantity import Format, Quantity, QuantityError


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        pytest.param("0", "0", id="zero is 0"),
        pytest.param("100m", "100m", id="milli stays milli"),
        pytest.param("1.5", "1500m", id="a fraction prints in milli"),
        pytest.param("1000", "1k", id="thousands take the k suffix"),
        pytest.param("1000m", "1", id="a whole number of milli prints without suffix"),
        pytest.param("0.1m", "100u", id="micro values print in micro"),
        pytest.param("1n", "1n", id="nano is the finest unit"),
        pytest.param("0.1n", "1n", id="anything finer than nano rounds up to one nano"),
        pytest.param("1.5Gi", "1536Mi", id="fractional binary values move to a smaller binary suffix"),
        pytest.param("1Ki", "1Ki", id="binary suffixes are kept"),
        pytest.param("1024Mi", "1Gi", id="binary values take the largest exact suffix"),
        pytest.param(
            "1000Ki", "1000Ki", id="binary values that are not a power multiple keep the smaller suffix"
        ),
        pytest.param("0.5Ki", "512", id="binary values below 1024 print as decimal"),
        pytest.param("1e3", "1e3", id="decimal exponents are kept"),
        pytest.param("1E6", "1e6", id="an upper-case exponent prints lower-case"),
        pytest.param("12e-3", "12e-3", id="negative exponents are kept"),
        pytest.param("-100m", "-100m", id="negative values keep their sign"),
        pytest.param("+1", "1", id="a plus sign is dropped"),
        pytest.param("1.G", "1G", id="a trailing decimal point is accepted"),
        pytest.param("0.5E", "500P", id="exa fractions move down a suffix"),
    ],
)
def test_canonical_form(text: str, canonical: str) -> None:
    assert str(Quantity.parse(text)) == canonical


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("", id="empty"),
        pytest.param("abc", id="no digits"),
        pytest.param("1x", id="unknown suffix"),
        pytest.param("1ki", id="lower-case binary suffix"),
        pytest.param("1.5.5", id="two decimal points"),
        pytest.param("1e", id="exponent without digits"),
    ],
)
def test_malformed_quantities_are_refused(text: str) -> None:
    with pytest.raises(QuantityError):
        Quantity.parse(text)


@pytest.mark.parametrize(
    ("parts", "total"),
    [
        pytest.param(("100m", "1.2"), "1300m", id="milli plus a fraction is milli"),
        pytest.param(("100M", "1.2G"), "1300M", id="mega plus giga prints in the first operand's format"),
        pytest.param(("0", "1Gi"), "1Gi", id="a zero first operand takes the second operand's format"),
        pytest.param(("1Gi", "512Mi"), "1536Mi", id="binary sums stay binary"),
        pytest.param(("1", "-1"), "0", id="a zero sum is 0"),
    ],
)
def test_sums_keep_the_format_of_the_first_non_zero_operand(parts: tuple[str, ...], total: str) -> None:
    result = Quantity.parse("0")
    for part in parts:
        result = result + Quantity.parse(part)
    assert str(result) == total


@pytest.mark.parametrize(
    ("value", "milli", "whole"),
    [
        pytest.param("1.5", 1500, 2, id="whole units round up"),
        pytest.param("1n", 1, 1, id="tiny values round up to one milli and one unit"),
        pytest.param("2Ki", 2048000, 2048, id="binary values are exact"),
    ],
)
def test_milli_and_whole_values(value: str, milli: int, whole: int) -> None:
    quantity = Quantity.parse(value)
    assert (quantity.milli_value(), quantity.int_value()) == (milli, whole)


def test_numbers_from_json_are_quantities() -> None:
    assert str(Quantity.of(2)) == "2"
    assert str(Quantity.of(0.5)) == "500m"
    assert str(Quantity.of(3.0)) == "3"


def test_constructors_print_in_their_format() -> None:
    assert str(Quantity.from_milli(1300, Format.DECIMAL_SI)) == "1300m"
    assert str(Quantity.from_int(1300000000, Format.BINARY_SI)) == "1300000000"
    assert str(Quantity.from_int(2 * 1024**3, Format.BINARY_SI)) == "2Gi"
