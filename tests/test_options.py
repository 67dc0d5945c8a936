"""Options: durations and scenario settings."""

from __future__ import annotations

import pytest

from fleetkeeper.options import Options, format_duration, options_from_settings, parse_duration


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        pytest.param("250ms", 0.25, id="milliseconds are thousandths"),
        pytest.param("10s", 10.0, id="seconds are seconds"),
        pytest.param("5m", 300.0, id="minutes are sixty seconds"),
        pytest.param("1h", 3600.0, id="hours are 3600 seconds"),
        pytest.param("1h30m", 5400.0, id="units can be combined"),
        pytest.param(45, 45.0, id="a bare number is seconds"),
    ],
)
def test_parse_duration(text: object, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("bad", ["10", "ten seconds", "-5s", "5d", True, -1, "1h 30m"])
def test_parse_duration_rejects(bad: object) -> None:
    with pytest.raises(ValueError, match="duration"):
        parse_duration(bad)


def test_format_duration_round_trips() -> None:
    for seconds in (0.25, 10, 90, 3600, 5400, 3661):
        assert parse_duration(format_duration(seconds)) == seconds


def test_settings_override_defaults_by_camel_case_name() -> None:
    opts = options_from_settings(
        {
            "clusterFailureThreshold": "45s",
            "gracefulEvictionTimeout": "2m",
            "defaultClusterTaintPolicy": False,
        }
    )
    assert opts.cluster_failure_threshold == 45.0
    assert opts.graceful_eviction_timeout == 120.0
    assert opts.default_cluster_taint_policy is False
    assert opts.cluster_success_threshold == Options().cluster_success_threshold


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        pytest.param({"clusterFailureTreshold": "1s"}, "settings.clusterFailureTreshold: unknown", id="typo"),
        pytest.param({"defaultClusterTaintPolicy": "yes"}, "expected true or false", id="bool as text"),
        pytest.param(
            {"clusterFailureThreshold": "soon"}, "settings.clusterFailureThreshold", id="bad duration"
        ),
        pytest.param({"concurrentSyncs": -1}, "non-negative integer", id="negative workers"),
        pytest.param({"skippedPropagatingNamespaces": "kube-.*,team-("},
                     r"settings.skippedPropagatingNamespaces: 'team-\(' is not a regular expression",
                     id="a skipped-namespace pattern that does not compile"),
    ],
)
def test_settings_errors_name_the_field(settings: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        options_from_settings(settings)
