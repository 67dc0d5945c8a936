"""Table columns and Kubernetes' human durations."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from fleetkeeper.apiserver.tables import human_duration, table

NOW = datetime(2026, 1, 2, tzinfo=UTC)


@pytest.mark.parametrize(("seconds", "text"), [
    (-5, "<invalid>"), (-1, "0s"), (0, "0s"), (119, "119s"), (120, "2m"), (185, "3m5s"), (600, "10m"),
    (3 * 3600 + 60, "3h1m"), (8 * 3600, "8h"), (50 * 3600, "2d2h"), (10 * 86400, "10d"),
    (800 * 86400, "2y70d"), (9 * 365 * 86400, "9y"),
], ids=lambda v: str(v))
def test_human_duration(seconds: int, text: str) -> None:
    assert human_duration(seconds) == text


def test_binding_rows_show_scheduled_and_fully_applied() -> None:
    binding = {"metadata": {"name": "nginx-deployment", "namespace": "default",
                            "creationTimestamp": "2026-01-01T23:59:00Z"},
               "status": {"conditions": [{"type": "Scheduled", "status": "True"},
                                         {"type": "FullyApplied", "status": "False"}]}}
    rendered = table("work.karmada.io", "ResourceBinding", [binding], now=NOW, resource_version="9")
    assert [c["name"] for c in rendered["columnDefinitions"]] == ["Name", "Scheduled", "FullyApplied", "Age"]
    assert rendered["rows"][0]["cells"] == ["nginx-deployment", "True", "False", "60s"]
    assert rendered["metadata"] == {"resourceVersion": "9"}


def test_unknown_kinds_get_name_and_age_and_missing_fields_print_none() -> None:
    rendered = table("example.com", "Widget", [{"metadata": {"name": "w"}}], now=NOW)
    assert rendered["rows"][0]["cells"] == ["w", "<unknown>"]
    work = table("work.karmada.io", "Work", [{"metadata": {"name": "w"}}], now=NOW)
    assert work["rows"][0]["cells"][1:3] == [None, None]
