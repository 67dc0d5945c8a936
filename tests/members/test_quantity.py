"""Quantities: milli-units in, Kubernetes' canonical strings out."""

from __future__ import annotations

import pytest

from fleetkeeper.members.simulated import quantity


@pytest.mark.parametrize("text, milli", [
    ("2", 2000), ("500m", 500), ("0.1m", 1), ("1.5", 1500), ("1k", 1_000_000), ("2M", 2_000_000_000),
    ("1Ki", 1_024_000), ("32Gi", 32 * 2**30 * 1000), ("1e3", 1_000_000), ("2E-3", 2), ("1E", 10**21),
    (110, 110_000), (0.25, 250),
], ids=[
    "a plain integer", "millis", "a finer value rounds up to a milli", "a decimal fraction", "kilo", "mega",
    "kibi", "gibi", "a decimal exponent", "a negative exponent", "a lone E is exa", "an int", "a float",
])
def test_to_milli(text: str | int | float, milli: int) -> None:
    assert quantity.to_milli(text) == milli


@pytest.mark.parametrize("text", ["", "abc", "1Xi", "1.2.3", "--1"],
                         ids=["empty", "letters", "an unknown suffix", "two points", "two signs"])
def test_malformed_quantities_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        quantity.to_milli(text)


@pytest.mark.parametrize("name, milli, text", [
    ("cpu", 24_000, "24"), ("cpu", 1_500, "1500m"), ("cpu", 0, "0"), ("pods", 330_000, "330"),
    ("pods", 3_000_000, "3k"), ("memory", 96 * 2**30 * 1000, "96Gi"),
    ("memory", 1536 * 2**20 * 1000, "1536Mi"),
    ("memory", 1000 * 1000, "1k"), ("memory", 1500 * 1000, "1500"), ("memory", 500, "500m"),
    ("ephemeral-storage", 2**40 * 1000, "1Ti"),
], ids=[
    "whole cpus", "fractional cpus in millis", "zero", "a pod count", "a round thousand gets k",
    "memory in Gi", "memory that is not whole Gi", "bytes under 1Ki print in decimal form",
    "bytes that are no power of two print plainly", "a fraction of a byte", "storage is a byte amount too",
])
def test_format_is_canonical(name: str, milli: int, text: str) -> None:
    assert quantity.format_list({name: milli}) == {name: text}


@pytest.mark.parametrize("request_, free, expected", [
    ({"cpu": 500}, {"cpu": 500}, True), ({"cpu": 501}, {"cpu": 500}, False),
    ({"nvidia.com/gpu": 1000}, {"cpu": 8000}, False), ({"cpu": 0, "pods": 1000}, {"pods": 1000}, True),
], ids=["an exact fit fits", "one milli too many does not", "a resource the node lacks does not",
        "a zero request needs nothing"])
def test_fits(request_: dict[str, int], free: dict[str, int], expected: bool) -> None:
    assert quantity.fits(request_, free) is expected
