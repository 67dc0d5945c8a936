"""Logging setup: structured key/value lines on stderr, stamped by the injected Clock.

Controllers log through structlog. Without configuration structlog would print every
debug line to stdout with wall-clock times; the CLI configures it once, so
``simulate`` output stays clean and log times are virtual in virtual-time runs.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import MutableMapping
from typing import Any

import structlog

from fleetkeeper.api.base import format_time
from fleetkeeper.clock import Clock

LEVELS = ("debug", "info", "warning", "error")


class _Stderr:
    """Whatever ``sys.stderr`` is at write time (a test runner may swap and close it)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


def configure(*, level: str = "warning", clock: Clock | None = None) -> None:
    """Route fleetkeeper's logs to stderr at ``level``, timestamps from ``clock``."""
    if level not in LEVELS:
        raise ValueError(f"log level must be one of {', '.join(LEVELS)}, got {level!r}")

    def stamp(_: Any, __: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
        if clock is not None:
            event["ts"] = format_time(clock.now())
        return event

    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            stamp,
            structlog.processors.format_exc_info,
            structlog.dev.ConsoleRenderer(colors=False),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(getattr(logging, level.upper())),
        logger_factory=structlog.PrintLoggerFactory(_Stderr()),  # type: ignore[arg-type]
        cache_logger_on_first_use=False,
    )
