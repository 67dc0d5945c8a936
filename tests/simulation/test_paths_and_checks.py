"""Expectation paths and checks of the scenario format."""

from __future__ import annotations

from typing import Any

import pytest

from fleetkeeper.simulation import checks, paths

OBJ: dict[str, Any] = {
    "metadata": {"labels": {"app": "nginx", "app.kubernetes.io/name": "web"}},
    "spec": {
        "clusters": [{"name": "member1", "replicas": 1}, {"name": "member2", "replicas": 2}],
        "gracefulEvictionTasks": [{"fromCluster": "member1", "replicas": 1}],
    },
    "status": {"conditions": [{"type": "Scheduled", "status": "True"}, {"type": "Ready", "status": "False"}]},
}


@pytest.mark.parametrize(
    ("path", "found", "value"),
    [
        pytest.param("metadata.labels.app", True, "nginx", id="dotted keys walk maps"),
        pytest.param('metadata.labels["app.kubernetes.io/name"]', True, "web", id="quoted key with dots"),
        pytest.param("spec.clusters[1].replicas", True, 2, id="index selects a list item"),
        pytest.param("spec.clusters[-1].name", True, "member2", id="negative index counts from the end"),
        pytest.param("status.conditions[type=Ready].status", True, "False", id="key=value selects an item"),
        pytest.param("spec.gracefulEvictionTasks[0].fromCluster", True, "member1", id="the format's example"),
        pytest.param("spec.clusters[5]", False, None, id="index out of range is not found"),
        pytest.param("status.conditions[type=Healthy]", False, None, id="no item matches the selector"),
        pytest.param("spec.nothing.here", False, None, id="missing key is not found"),
    ],
)
def test_resolve(path: str, found: bool, value: Any) -> None:
    assert paths.resolve(OBJ, path) == (found, value)


@pytest.mark.parametrize("bad", ["", "spec..clusters", "spec.clusters[", "spec.clusters[x]", "[=1]"])
def test_bad_paths_are_rejected(bad: str) -> None:
    with pytest.raises(ValueError):
        paths.parse_path(bad)


@pytest.mark.parametrize(
    ("check", "expected", "found", "actual", "holds"),
    [
        pytest.param("equals", 3, True, 3.0, True, id="numbers compare by value"),
        pytest.param("equals", 1, True, True, False, id="a boolean never equals a number"),
        pytest.param("equals", "3", True, 3, False, id="a string never equals a number"),
        pytest.param("equals", 3, False, None, False, id="equals fails on a missing path"),
        pytest.param(
            "equalsUnordered",
            [{"name": "b"}, {"name": "a"}],
            True,
            [{"name": "a"}, {"name": "b"}],
            True,
            id="unordered ignores order",
        ),
        pytest.param(
            "equalsUnordered",
            [{"name": "a"}],
            True,
            [{"name": "a"}, {"name": "b"}],
            False,
            id="unordered needs exactly these items",
        ),
        pytest.param("equalsUnordered", [1, 1], True, [1, 2], False, id="unordered counts duplicates"),
        pytest.param(
            "contains",
            {"a": {"b": 1}},
            True,
            {"a": {"b": 1, "c": 2}, "d": 3},
            True,
            id="contains is a recursive subset",
        ),
        pytest.param(
            "contains",
            [{"name": "m2"}],
            True,
            [{"name": "m1", "r": 1}, {"name": "m2", "r": 2}],
            True,
            id="contains finds list items by subset",
        ),
        pytest.param("contains", {"a": 2}, True, {"a": 1}, False, id="contains compares leaves"),
        pytest.param("count", 2, True, [1, 2], True, id="count counts list items"),
        pytest.param("count", 0, False, None, True, id="an absent list counts as empty"),
        pytest.param("count", 1, True, "x", False, id="count needs a list"),
        pytest.param("exists", True, True, None, True, id="exists holds for a present value"),
        pytest.param("absent", True, False, None, True, id="absent holds for a missing value"),
        pytest.param("absent", True, True, 1, False, id="absent fails for a present value"),
    ],
)
def test_checks(check: str, expected: Any, found: bool, actual: Any, holds: bool) -> None:
    assert (checks.evaluate(check, expected, found=found, actual=actual) is None) is holds
