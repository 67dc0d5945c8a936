"""Shared pytest configuration."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=50, deadline=None)
settings.load_profile("ci")


@pytest.fixture(autouse=True)
def _collector_left_running() -> Iterator[None]:
    """Every test leaves Python's garbage collector as it found it (critical work pauses it)."""
    yield
    if not gc.isenabled():
        gc.enable()
        pytest.fail("the test left the garbage collector disabled")
