"""Logging setup: structured key/value lines on stderr, stamped by the injected Clock.

Controllers log through structlog. Without configuration structlog would print every
debug line to stdout with wall-clock times; the CLI configures it once, so
``simulate`` output stays clean and log times are virtual in virtual-time runs.

Two formats (``--log-format``): ``text``, key=value lines for a person, and ``json``,
one JSON object per line for a log pipeline — ``event``, ``level``, ``ts`` and the bound
context (``controller``, ``reconcile_id``, …); a traceback, which only a bug has, is
then the ``exception`` string of its line.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import MutableMapping
from typing import Any

import structlog
from structlog.typing import Processor

from fleetkeeper.api.base import format_time
from fleetkeeper.clock import Clock

LEVELS = ("debug", "info", "warning", "error")
FORMATS = ("text", "json")


class _Stderr:
    """Whatever ``sys.stderr`` is at write time (a test runner may swap and close it)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


def configure(*, level: str = "warning", clock: Clock | None = None, fmt: str = "text") -> None:
    """Route fleetkeeper's logs to stderr at ``level`` in format ``fmt``, timestamps from ``clock``."""
    if level not in LEVELS:
        raise ValueError(f"log level must be one of {', '.join(LEVELS)}, got {level!r}")
    if fmt not in FORMATS:
        raise ValueError(f"log format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    renderer: Processor = (structlog.processors.JSONRenderer() if fmt == "json"
                           else structlog.dev.ConsoleRenderer(colors=False))

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
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(getattr(logging, level.upper())),
        logger_factory=structlog.PrintLoggerFactory(_Stderr()),  # type: ignore[arg-type]
        cache_logger_on_first_use=False,
    )
