"""The cluster fan-out finds the bindings a cluster change concerns through an index, and
queues only those a scheduling pass would move (or that wait for a cluster change)."""

from __future__ import annotations

from typing import Any

import pytest

from fleetkeeper.api.constants import APPLIED_PLACEMENT_ANNOTATION, PP_PERMANENT_ID_LABEL
from fleetkeeper.api.work import Binding, ResourceBinding
from fleetkeeper.runtime.reconcile import Request
from fleetkeeper.scheduler.controller import is_ours
from fleetkeeper.scheduler.fanout import ANY, ClusterFanOut, index_values
from fleetkeeper.scheduler.placement import placement_info

from .builders import DUPLICATED, cluster, static_weights

NAMED = {
    "clusterAffinity": {"clusterNames": ["member1", "member2"]},
    "replicaScheduling": static_weights(("member1", 1), ("member2", 1)),
}


def rb(
    placement: dict[str, Any],
    *,
    clusters: dict[str, int] | None = None,
    scheduled: bool = False,
    labels: dict[str, str] | None = None,
) -> ResourceBinding:
    """A binding with ``placement``; ``scheduled``: the scheduler's last pass is recorded on it."""
    meta: dict[str, Any] = {
        "name": "web-deployment",
        "namespace": "default",
        "generation": 2,
        "labels": {PP_PERMANENT_ID_LABEL: "pp-1"} if labels is None else labels,
    }
    binding = ResourceBinding.from_dict(
        {
            "metadata": meta,
            "spec": {
                "resource": {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "namespace": "default",
                    "name": "web",
                },
                "replicas": 2,
                "placement": placement,
                "clusters": [{"name": n, "replicas": r} for n, r in (clusters or {}).items()],
            },
            "status": {"schedulerObservedGeneration": 2 if scheduled else 0},
        }
    )
    if scheduled:
        assert binding.spec.placement is not None
        binding.metadata.annotations = {
            APPLIED_PLACEMENT_ANNOTATION: placement_info(binding.spec.placement).json
        }
    return binding


@pytest.mark.parametrize(
    ("binding", "values"),
    [
        pytest.param(
            rb(NAMED), ["member1", "member2"], id="an affinity naming clusters is found under each name"
        ),
        pytest.param(rb({}), [ANY], id="no affinity concerns every cluster"),
        pytest.param(
            rb({"clusterAffinity": {"labelSelector": {"matchLabels": {"env": "prod"}}}}),
            [ANY],
            id="a label selector concerns every cluster",
        ),
        pytest.param(
            rb(NAMED, clusters={"member3": 1}),
            ["member1", "member2", "member3"],
            id="the clusters a binding is placed on are found too",
        ),
        pytest.param(
            rb(
                {
                    "clusterAffinities": [
                        {"affinityName": "a", "clusterNames": ["member1"]},
                        {"affinityName": "b"},
                    ]
                }
            ),
            [ANY, "member1"],
            id="affinity terms: every term's names, and any term without names concerns all",
        ),
    ],
)
def test_bindings_are_indexed_by_the_clusters_that_concern_them(
    binding: ResourceBinding, values: list[str]
) -> None:
    assert index_values(binding) == values


class _Target:
    def __init__(self, parked: set[Request] | None = None) -> None:
        self.parked = parked or set()

    def enqueue(self, request: Request) -> None:  # pragma: no cover - not called by ``wanted``
        raise AssertionError(request)

    def is_ours(self, binding: Binding) -> bool:
        return is_ours(binding)


@pytest.mark.parametrize(
    ("binding", "parked", "woken"),
    [
        pytest.param(
            rb(NAMED, clusters={"member1": 1, "member2": 1}, scheduled=True),
            False,
            False,
            id="a scheduled Divided binding nothing would move is left alone",
        ),
        pytest.param(
            rb(NAMED, clusters={"member2": 1}, scheduled=True),
            False,
            True,
            id="a Divided binding missing replicas (an eviction) is woken",
        ),
        pytest.param(
            rb(
                {"clusterAffinity": {"clusterNames": ["member1"]}, "replicaScheduling": DUPLICATED},
                clusters={"member1": 2},
                scheduled=True,
            ),
            False,
            True,
            id="a Duplicated binding is always woken",
        ),
        pytest.param(
            rb(NAMED, clusters={"member1": 1, "member2": 1}, scheduled=True),
            True,
            True,
            id="a parked binding is woken",
        ),
        pytest.param(rb(NAMED), False, True, id="a binding never scheduled is woken"),
        pytest.param(
            rb({"clusterAffinity": {"clusterNames": ["member2"]}}),
            False,
            False,
            id="a binding whose affinity names other clusters and is not placed here is not",
        ),
        pytest.param(rb(NAMED, labels={}), False, False, id="a binding no policy claims is never woken"),
    ],
)
def test_only_bindings_a_pass_would_move_are_woken(
    binding: ResourceBinding, parked: bool, woken: bool
) -> None:
    target = _Target({Request("default", binding.name)} if parked else None)
    fan_out = ClusterFanOut(target, None, ())  # type: ignore[arg-type]  # ``wanted`` needs no informer
    assert fan_out.wanted(binding, cluster("member1"), []) is woken
