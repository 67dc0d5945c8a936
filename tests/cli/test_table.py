"""Cells of ``fleetkeeper get`` and their rendering."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from typing import Any

import pytest
from rich.console import Console

from fleetkeeper.cli import table as t
from fleetkeeper.cli.get import health, scheduled

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(("seconds", "shown"), [
    (5, "5s"), (119, "119s"), (150, "2m30s"), (600, "10m"), (3 * 3600 + 60, "3h1m"), (10 * 3600, "10h"),
    (3 * 86400, "3d"), (800 * 86400, "2y70d"), (3000 * 86400, "8y"),
], ids=lambda v: str(v))
def test_ages_read_like_kubectl(seconds: int, shown: str) -> None:
    assert t.human_duration(seconds) == shown


def test_a_timestamp_is_shown_in_utc_to_the_millisecond() -> None:
    assert t.timestamp("2026-01-01T10:00:00.123456Z") == "2026-01-01 10:00:00.123"
    assert t.timestamp(None) == t.NONE


@pytest.mark.parametrize(("binding", "where", "how"), [
    ({"spec": {"clusters": [{"name": "member1", "replicas": 1}, {"name": "member2", "replicas": 2}]},
      "status": {"aggregatedStatus": [{"clusterName": "member1", "health": "Healthy"},
                                      {"clusterName": "member2", "health": "Healthy"}]}},
     "member1:1,member2:2", "Healthy"),
    ({"spec": {"clusters": [{"name": "member2", "replicas": 3}]},
      "status": {"aggregatedStatus": [{"clusterName": "member1", "health": "Unhealthy"},
                                      {"clusterName": "member2"}]}},
     "member2:3", "member1:Unhealthy,member2:Unknown"),
    ({"spec": {}}, t.NONE, t.NONE),
], ids=["scheduled and healthy everywhere", "one copy unhealthy, one unknown", "not scheduled yet"])
def test_binding_cells(binding: dict[str, Any], where: str, how: str) -> None:
    assert scheduled(binding) == where and health(binding) == how


def test_a_table_prints_headers_and_rows_and_hides_wide_columns() -> None:
    out = io.StringIO()
    console = Console(file=out, width=200, highlight=False)
    columns = [t.NAME, t.Column("READY", t.condition_status("Ready")),
               t.Column("ENDPOINT", t.field("spec", "apiEndpoint"), wide=True), t.AGE]
    objects: list[dict[str, Any]] = [
        {"metadata": {"name": "member1", "creationTimestamp": "2026-01-01T11:59:00Z"},
         "spec": {"apiEndpoint": "simulated://member1"},
         "status": {"conditions": [{"type": "Ready", "status": "True"}]}},
        {"metadata": {"name": "member2"}, "spec": {}}]
    t.render(columns, objects, now=NOW, out=console)
    lines = [line.split() for line in out.getvalue().splitlines()]
    assert lines == [["NAME", "READY", "AGE"], ["member1", "True", "60s"],
                     ["member2", "Unknown", "<unknown>"]]
    out.truncate(0)
    out.seek(0)
    t.render(columns, objects, now=NOW, out=console, wide=True)
    assert out.getvalue().splitlines()[1].split()[2] == "simulated://member1"
