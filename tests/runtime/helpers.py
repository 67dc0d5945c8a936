"""Shared helpers for runtime tests: everything runs on a fresh VirtualClock."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from fleetkeeper.clock import VirtualClock

T = TypeVar("T")


def run_virtual(main: Callable[[VirtualClock], Coroutine[Any, Any, T]]) -> T:
    """Run ``main(clock)`` to completion on a fresh virtual clock."""
    clock = VirtualClock()
    return clock.run(main(clock))
