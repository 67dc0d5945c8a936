"""Shared pytest configuration."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

from fleetkeeper.api.crd import CUSTOM_KINDS
from fleetkeeper.runtime.informer import guard_cache

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


@pytest.fixture(autouse=True)
def _cached_objects_left_unchanged() -> Iterator[None]:
    """No code changes an object an informer cache holds (callers copy first)."""
    changed = guard_cache(True)
    yield
    guard_cache(False)
    if changed:
        pytest.fail("cached objects changed in place:\n" + "\n".join(changed[:20]))


@pytest.fixture
def forget_crds() -> Iterator[None]:
    """Take the kinds the test's CustomResourceDefinitions defined out of the process's scheme again."""
    before = set(CUSTOM_KINDS.names())
    try:
        yield
    finally:
        for name in set(CUSTOM_KINDS.names()) - before:
            CUSTOM_KINDS.unregister(name)
