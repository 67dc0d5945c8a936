"""Replicas per cluster over time, as an SVG drawn from the failover timeline.

``fleetkeeper simulate FILE --chart out.svg`` and ``fleetkeeper describe binding NAME --chart
out.svg`` draw the story a timeline tells: one step line per cluster (the replicas the
scheduler gave it, summed over the bindings the entries are about), and the failover's
marks — a cluster going **down** (Ready turns False or Unknown), **tainted** (a NoExecute
taint added), a binding **evicted** from it, the eviction completed once the replacement was
**healthy**.

The module is pure: :func:`build` turns timeline events into a :class:`Chart`,
:func:`render` turns a chart into SVG text; same events, same bytes. The SVG carries its
values for programs too: each series is a ``<g class="series" data-cluster=…>`` whose
``<circle class="point">`` children hold ``data-t`` (seconds) and ``data-replicas``; each
mark is a ``<g class="mark" data-kind=… data-cluster=… data-t=…>``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from fleetkeeper.api import timeline as tl

#: the entries a chart reads: the schedule results and the marks' actions
MARK_KINDS = ("down", "tainted", "evicted", "healthy")
_RESULT = re.compile(r"scheduled to \{([^}]*)\}(?: \(was \{([^}]*)\}\))?")
_PAIR = re.compile(r"\s*([^:,\s]+):(\d+)\s*")
_FROM = re.compile(r"from (\S+?)[\s:,)]")
_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
            "#bcbd22", "#17becf")
_MARK_COLOURS = {"down": "#d62728", "tainted": "#ff7f0e", "evicted": "#9467bd", "healthy": "#2ca02c"}
_WIDTH, _HEIGHT = 760, 360
_LEFT, _RIGHT, _TOP, _BOTTOM = 48, 140, 36, 40


@dataclass(frozen=True)
class Event:
    """One timeline entry: ``t`` seconds from the start, its subject as ``kind/[ns/]name``
    (``cluster/member1``, ``rb/default/nginx-deployment``), the action and the message."""

    t: float
    subject: str
    action: str
    message: str


@dataclass(frozen=True)
class Series:
    """A cluster's replicas: ``(t, replicas)`` from each change on."""

    cluster: str
    points: tuple[tuple[float, int], ...]


@dataclass(frozen=True)
class Mark:
    """A failover moment on a cluster: one of :data:`MARK_KINDS`."""

    t: float
    cluster: str
    kind: str


@dataclass(frozen=True)
class Chart:
    title: str
    series: tuple[Series, ...]
    marks: tuple[Mark, ...]
    end: float


def parse_result(text: str) -> dict[str, int]:
    """``member1:1, member2:2`` → ``{"member1": 1, "member2": 2}`` (malformed pairs skipped)."""
    found: dict[str, int] = {}
    for part in text.split(","):
        match = _PAIR.fullmatch(part)
        if match:
            found[match.group(1)] = int(match.group(2))
    return found


def _mark(event: Event) -> Mark | None:
    kind, _, name = event.subject.partition("/")
    if kind == "cluster" and event.action == tl.CONDITION_CHANGED and \
            re.match(r"Ready=(False|Unknown)\b", event.message):
        return Mark(event.t, name, "down")
    if kind == "cluster" and event.action == tl.TAINT_ADDED and ":NoExecute" in event.message:
        return Mark(event.t, name, "tainted")
    where = _FROM.search(event.message + " ")
    if event.action == tl.EVICTION_STARTED and where:
        return Mark(event.t, where.group(1), "evicted")
    if event.action == tl.EVICTION_COMPLETED and where:
        return Mark(event.t, where.group(1), "healthy")
    return None


def build(events: list[Event], *, title: str, end: float | None = None) -> Chart:
    """The chart of ``events`` (any order); clusters named by a schedule result or as a subject
    each get a series, from 0 replicas until a result gives them some. A binding's replicas are
    where its first result says they ``(was {…})`` until then."""
    ordered = sorted(events, key=lambda e: e.t)
    start = ordered[0].t if ordered else 0.0
    placed: dict[str, dict[str, int]] = {}  # each binding's result; its first "was" until then
    for event in ordered:
        first = _RESULT.search(event.message) if event.action == tl.SCHEDULED else None
        if first is not None and event.subject not in placed:
            placed[event.subject] = parse_result(first.group(2) or "")
    totals = {c: [(start, sum(p.get(c, 0) for p in placed.values()))] for p in placed.values() for c in p}
    marks: list[Mark] = []
    for event in ordered:
        kind, _, name = event.subject.partition("/")
        mark = _mark(event)
        if mark is not None:
            marks.append(mark)
        for cluster in (name if kind == "cluster" else None, mark.cluster if mark else None):
            if cluster is not None:
                totals.setdefault(cluster, [(start, 0)])
        result = _RESULT.search(event.message) if event.action == tl.SCHEDULED else None
        if result is None:
            continue
        placed[event.subject] = parse_result(result.group(1))
        for cluster in {c for p in placed.values() for c in p}:
            totals.setdefault(cluster, [(start, 0)])
        for cluster, points in totals.items():
            value = sum(p.get(cluster, 0) for p in placed.values())
            if points[-1][0] == event.t:
                points[-1] = (event.t, value)
            elif points[-1][1] != value:
                points.append((event.t, value))
    last = ordered[-1].t if ordered else 0.0
    series = tuple(Series(c, tuple(p)) for c, p in sorted(totals.items()))
    return Chart(title, series, tuple(marks), max(end if end is not None else last, last, 1.0))


def from_entries(entries: list[dict[str, Any]], *, title: str) -> Chart:
    """The chart of ``TimelineEntry`` objects (as dicts, as the API serves them), with time counted
    from the first of them; entries without a readable time are left out."""
    timed: list[tuple[datetime, dict[str, Any]]] = []
    for entry in entries:
        try:
            timed.append((datetime.fromisoformat(str(entry.get("time"))), entry))
        except ValueError:
            continue
    start = min((when for when, _ in timed), default=None)
    events = []
    for when, entry in timed:
        found = entry.get("subject")
        subject: dict[str, Any] = found if isinstance(found, dict) else {}
        kind, name = str(subject.get("kind") or ""), str(subject.get("name") or "")
        label = f"cluster/{name}" if kind == "Cluster" else f"{kind}/{subject.get('namespace') or ''}/{name}"
        seconds = (when - start).total_seconds() if start is not None else 0.0
        events.append(Event(seconds, label, str(entry.get("action") or ""), str(entry.get("message") or "")))
    return build(events, title=title)


def _fmt(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def _axes(chart: Chart, top: int) -> list[str]:
    plot_w, plot_h = _WIDTH - _LEFT - _RIGHT, _HEIGHT - _TOP - _BOTTOM
    out = [f'<rect x="{_LEFT}" y="{_TOP}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#999"/>']
    step = max(1, -(-top // 5))
    for value in range(0, top + 1, step):
        y = _TOP + plot_h - plot_h * value / top
        out.append(f'<text x="{_LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{value}</text>')
        out.append(f'<line x1="{_LEFT}" y1="{y:.1f}" x2="{_LEFT + plot_w}" y2="{y:.1f}" stroke="#eee"/>')
    for i in range(6):
        t = chart.end * i / 5
        x = _LEFT + plot_w * i / 5
        out.append(f'<text x="{x:.1f}" y="{_HEIGHT - _BOTTOM + 16}" text-anchor="middle">{_fmt(t)}s</text>')
    out.append(f'<text x="{_LEFT + plot_w / 2:.1f}" y="{_HEIGHT - 6}" text-anchor="middle">'
               'seconds</text>')
    out.append(f'<text x="12" y="{_TOP + plot_h / 2:.1f}" transform="rotate(-90 12 {_TOP + plot_h / 2:.1f})" '
               'text-anchor="middle">replicas</text>')
    return out


def render(chart: Chart) -> str:
    """The chart as a standalone SVG document."""
    plot_w, plot_h = _WIDTH - _LEFT - _RIGHT, _HEIGHT - _TOP - _BOTTOM
    top = max([1, *(v for s in chart.series for _, v in s.points)])

    def x(t: float) -> float:
        return _LEFT + plot_w * t / chart.end

    def y(v: int) -> float:
        return _TOP + plot_h - plot_h * v / top

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{_WIDTH}" height="{_HEIGHT}" '
           f'viewBox="0 0 {_WIDTH} {_HEIGHT}" font-family="sans-serif" font-size="11">',
           f'<title>{escape(chart.title)}</title>',
           f'<text x="{_LEFT}" y="20" font-size="14">{escape(chart.title)}</text>', *_axes(chart, top)]
    for mark in chart.marks:
        colour = _MARK_COLOURS[mark.kind]
        label = escape(f"{mark.cluster} {mark.kind} at {_fmt(mark.t)}s")
        out.append(f'<g class="mark" data-kind="{mark.kind}" data-cluster={quoteattr(mark.cluster)} '
                   f'data-t="{_fmt(mark.t)}"><title>{label}'
                   f'</title><line x1="{x(mark.t):.1f}" y1="{_TOP}" x2="{x(mark.t):.1f}" '
                   f'y2="{_TOP + plot_h}" stroke="{colour}" stroke-dasharray="4 3"/></g>')
    for i, series in enumerate(chart.series):
        colour = _PALETTE[i % len(_PALETTE)]
        coords: list[str] = []
        for j, (t, value) in enumerate(series.points):
            if j:
                coords.append(f"{x(t):.1f},{y(series.points[j - 1][1]):.1f}")
            coords.append(f"{x(t):.1f},{y(value):.1f}")
        coords.append(f"{x(chart.end):.1f},{y(series.points[-1][1]):.1f}")
        out.append(f'<g class="series" data-cluster={quoteattr(series.cluster)}>'
                   f'<title>{escape(series.cluster)}</title>')
        out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{" ".join(coords)}"/>')
        out.extend(f'<circle class="point" cx="{x(t):.1f}" cy="{y(v):.1f}" r="3" fill="{colour}" '
                   f'data-t="{_fmt(t)}" data-replicas="{v}"/>' for t, v in series.points)
        out.append("</g>")
        legend_y = _TOP + 14 + 16 * i
        out.append(f'<rect x="{_WIDTH - _RIGHT + 12}" y="{legend_y - 9}" width="10" height="10" '
                   f'fill="{colour}"/>'
                   f'<text x="{_WIDTH - _RIGHT + 26}" y="{legend_y}">{escape(series.cluster)}</text>')
    base = _TOP + 24 + 16 * len(chart.series)
    for i, kind in enumerate(MARK_KINDS):
        out.append(f'<line x1="{_WIDTH - _RIGHT + 12}" y1="{base + 16 * i - 4}" x2="{_WIDTH - _RIGHT + 22}" '
                   f'y2="{base + 16 * i - 4}" stroke="{_MARK_COLOURS[kind]}" stroke-dasharray="4 3"/>'
                   f'<text x="{_WIDTH - _RIGHT + 26}" y="{base + 16 * i}">{kind}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


__all__ = ["MARK_KINDS", "Chart", "Event", "Mark", "Series", "build", "from_entries", "parse_result",
           "render"]
