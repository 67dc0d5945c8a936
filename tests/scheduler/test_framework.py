"""Results and fit errors: Karmada's ``interface_test.go`` (Merge, AsError) and
``types_test.go`` (FitError message) cases, and the framework running plugins in order."""

from __future__ import annotations

from collections.abc import Hashable

import pytest

from fleetkeeper.scheduler.framework import (
    SUCCESS,
    BindingView,
    Code,
    FitError,
    Framework,
    Result,
    error,
    merge,
    unschedulable,
    view_of,
)
from fleetkeeper.scheduler.snapshot import ClusterFacts, Snapshot

from .builders import NOW, binding, facts


@pytest.mark.parametrize(("results", "expected"), [
    pytest.param([], None, id="nothing to merge gives nothing"),
    pytest.param([SUCCESS, SUCCESS], Result(Code.SUCCESS), id="all successes give success"),
    pytest.param([SUCCESS, unschedulable("reason1"), SUCCESS], Result(Code.UNSCHEDULABLE, ("reason1",)),
                 id="an unschedulable verdict wins over success"),
    pytest.param([SUCCESS, unschedulable("reason1"), error("error occurred")],
                 Result(Code.ERROR, ("reason1", "error occurred")), id="an error wins over unschedulable"),
])
def test_merge(results: list[Result], expected: Result | None) -> None:
    assert merge(results) == expected


@pytest.mark.parametrize(("result", "success", "message"), [
    pytest.param(SUCCESS, True, "", id="success has no message"),
    pytest.param(unschedulable("reason1", "reason2"), False, "reason1, reason2",
                 id="reasons join with commas"),
    pytest.param(error("error occurred"), False, "error occurred", id="an error reads as its reason"),
])
def test_result(result: Result, success: bool, message: str) -> None:
    assert (result.is_success, result.message) == (success, message)


@pytest.mark.parametrize(("num_all", "diagnosis", "message"), [
    pytest.param(0, {}, "0/0 clusters are available: no cluster exists.", id="no cluster"),
    pytest.param(3, {"cluster1": unschedulable("insufficient CPU", "insufficient memory"),
                     "cluster2": unschedulable("insufficient CPU"),
                         "cluster3": unschedulable("taint mismatch")},
                 "0/3 clusters are available: 1 insufficient memory, 1 taint mismatch, 2 insufficient CPU.",
                 id="reasons are counted and sorted as strings"),
])
def test_fit_error_message(num_all: int, diagnosis: dict[str, Result], message: str) -> None:
    assert str(FitError(num_all, diagnosis)) == message


class Refuse:
    """A test filter that rejects the clusters it is told to, and counts its calls."""

    def __init__(self, name: str, rejects: set[str]) -> None:
        self._name, self.rejects, self.calls = name, rejects, 0

    @property
    def name(self) -> str:
        return self._name

    def filter(self, binding: BindingView, cluster: ClusterFacts) -> Result:
        self.calls += 1
        return unschedulable(f"refused by {self._name}") if cluster.name in self.rejects else SUCCESS

    def equivalence(self, binding: BindingView, snapshot: Snapshot) -> Hashable:
        return binding.spec.replicas


def test_the_first_failing_filter_in_registry_order_names_the_reason() -> None:
    first, second = Refuse("First", {"a"}), Refuse("Second", {"a", "b"})
    fit = Framework([first, second]).find_fit(view(), Snapshot([facts("a"), facts("b"), facts("c")]))
    assert [c.name for c in fit.feasible] == ["c"]
    assert {n: (r.plugin, r.message) for n, r in fit.diagnosis.items()} == {
        "a": ("First", "refused by First"), "b": ("Second", "refused by Second")}


def test_equivalent_bindings_ask_each_plugin_once_per_snapshot() -> None:
    plugin = Refuse("Only", {"a"})
    framework = Framework([plugin])
    snapshot = Snapshot([facts("a"), facts("b")])
    framework.find_fit(view(replicas=1), snapshot)
    framework.find_fit(view(replicas=1), snapshot)
    assert plugin.calls == 2  # two clusters, asked once
    framework.find_fit(view(replicas=2), snapshot)
    assert plugin.calls == 4  # a different key asks again


def view(replicas: int = 1) -> BindingView:
    rb = binding({}, replicas=replicas)
    return view_of(rb.spec, rb.status, NOW)
