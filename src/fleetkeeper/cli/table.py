"""Tables for people: what ``fleetkeeper get`` and ``describe`` print.

A :class:`Column` turns one object (its wire dict) into a cell; :func:`render` lays rows
out with rich — kubectl's borderless layout, bold headers, and colour for the cells that
matter in a failover (``Ready``/``Healthy`` green, ``False``/``Unhealthy`` red,
``Unknown`` yellow) when the output is a terminal. Columns marked ``wide`` appear with
``-o wide`` only. Cells never fail: a missing field prints ``<none>``.

Ages follow Kubernetes' ``duration.HumanDuration`` (``42s``, ``5m3s``, ``3h``, ``9d``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from fleetkeeper.api.base import human_duration, millisecond_time, parse_time

Cell = Callable[[dict[str, Any], datetime], str]
NONE = "<none>"
STYLES: dict[str, str] = {
    "True": "green", "Ready": "green", "Healthy": "green", "Applied": "green",
    "False": "red", "NotReady": "red", "Unhealthy": "red",
    "Unknown": "yellow",
}


@dataclass(frozen=True)
class Column:
    """One column: header, how to compute the cell, whether only ``-o wide`` shows it."""

    header: str
    cell: Cell
    wide: bool = False


def dig(obj: Any, *path: str | int) -> Any:
    """``obj[path[0]][path[1]]…``, or None where the path breaks."""
    for part in path:
        if isinstance(part, int):
            if not isinstance(obj, list) or not -len(obj) <= part < len(obj):
                return None
            obj = obj[part]
        elif isinstance(obj, dict):
            obj = obj.get(part)
        else:
            return None
    return obj


def text(value: Any) -> str:
    """A scalar as a cell (``<none>`` when missing or empty)."""
    if value is None or value == "" or value == [] or value == {}:
        return NONE
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def age(timestamp: Any, now: datetime) -> str:
    """How long ago an RFC 3339 ``timestamp`` was (``<unknown>`` when unreadable)."""
    if not isinstance(timestamp, str):
        return "<unknown>"
    try:
        return human_duration((now - parse_time(timestamp)).total_seconds())
    except ValueError:
        return "<unknown>"


def timestamp(value: Any) -> str:
    """An RFC 3339 time as ``2026-01-01 10:00:00.123`` (UTC, milliseconds)."""
    return millisecond_time(value, iso=False) if isinstance(value, str) else NONE


def condition(obj: dict[str, Any], kind: str) -> dict[str, Any] | None:
    """The condition of type ``kind`` in ``status.conditions``."""
    for item in dig(obj, "status", "conditions") or []:
        if isinstance(item, dict) and item.get("type") == kind:
            return item
    return None


def field(*path: str | int) -> Cell:
    return lambda obj, now: text(dig(obj, *path))


def condition_status(kind: str) -> Cell:
    def cell(obj: dict[str, Any], now: datetime) -> str:
        found = condition(obj, kind)
        return text(found.get("status")) if found else "Unknown" if kind == "Ready" else NONE

    return cell


NAME = Column("NAME", field("metadata", "name"))
NAMESPACE = Column("NAMESPACE", field("metadata", "namespace"))
AGE = Column("AGE", lambda obj, now: age(dig(obj, "metadata", "creationTimestamp"), now))


def console(*, stderr: bool = False) -> Console:
    """A console for tables: colour on terminals only, no wrapping of long cells when piped."""
    stream = sys.stderr if stderr else sys.stdout
    width = None if stream.isatty() else 250
    return Console(file=stream, highlight=False, soft_wrap=not stream.isatty(), width=width)


def styled(cell: str) -> Text:
    return Text(cell, style=STYLES.get(cell, ""))


def render(columns: Sequence[Column], objects: Iterable[dict[str, Any]], *, now: datetime,
           wide: bool = False, out: Console | None = None, title: str | None = None,
           header: bool = True) -> None:
    """Print ``objects`` as a table of ``columns`` (without the header row when ``header`` is false)."""
    shown = [c for c in columns if wide or not c.wide]
    table = Table(box=None, show_edge=False, pad_edge=False, header_style="bold", title=title,
                  title_justify="left", title_style="bold", show_header=header)
    for column in shown:
        table.add_column(column.header, no_wrap=True)
    for obj in objects:
        table.add_row(*(styled(column.cell(obj, now)) for column in shown))
    (out or console()).print(table)


def rows(headers: Sequence[str], values: Iterable[Sequence[str]], *, out: Console,
         title: str | None = None) -> None:
    """Print plain rows under ``headers`` (``describe`` sections)."""
    table = Table(box=None, show_edge=False, pad_edge=False, header_style="bold", title=title,
                  title_justify="left", title_style="bold")
    for header in headers:
        table.add_column(header, overflow="fold")
    for value in values:
        table.add_row(*(styled(v) for v in value))
    out.print(table)


__all__ = [
    "AGE", "NAME", "NAMESPACE", "NONE", "Cell", "Column", "age", "condition", "condition_status", "console",
    "dig", "field", "human_duration", "render", "rows", "text", "timestamp",
]
