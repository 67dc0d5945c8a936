"""Taint identity and the "tolerates" rule (spec §2.1.2, §2.1.3)."""

from __future__ import annotations

import pytest

from fleetkeeper.api import taints
from fleetkeeper.api.core import Taint, Toleration
from fleetkeeper.api.taintpolicy import PolicyTaint

NOT_READY_EXEC = Taint(key="cluster.karmada.io/not-ready", effect="NoExecute")
ZONE_A = Taint(key="zone", value="a", effect="NoSchedule")


@pytest.mark.parametrize(("toleration", "taint", "tolerated"), [
    pytest.param(Toleration(key="cluster.karmada.io/not-ready", operator="Exists", effect="NoExecute"),
                 NOT_READY_EXEC, True, id="Exists with the same key and effect tolerates"),
    pytest.param(Toleration(operator="Exists"), NOT_READY_EXEC, True,
                 id="Exists with no key and no effect tolerates everything"),
    pytest.param(Toleration(key="cluster.karmada.io/not-ready", operator="Exists", effect="NoSchedule"),
                 NOT_READY_EXEC, False, id="a different effect does not tolerate"),
    pytest.param(Toleration(key="other", operator="Exists"), NOT_READY_EXEC, False,
                 id="a different key does not tolerate"),
    pytest.param(Toleration(key="zone", operator="Equal", value="a"), ZONE_A, True,
                 id="Equal with the same value tolerates"),
    pytest.param(Toleration(key="zone", value="a"), ZONE_A, True, id="an empty operator means Equal"),
    pytest.param(Toleration(key="zone", operator="Equal", value="b"), ZONE_A, False,
                 id="Equal with another value does not tolerate"),
    pytest.param(Toleration(key="zone", operator="Equal"), ZONE_A, False,
                 id="Equal without a value does not tolerate a taint with a value"),
    pytest.param(Toleration(key="cluster.karmada.io/not-ready"), NOT_READY_EXEC, True,
                 id="Equal without a value tolerates a taint without a value"),
    pytest.param(Toleration(key="zone", operator="Gt", value="1"), ZONE_A, False,
                 id="the disabled comparison operator Gt never tolerates"),
    pytest.param(Toleration(key="zone", operator="Whatever", value="a"), ZONE_A, False,
                 id="an unknown operator never tolerates"),
])
def test_tolerates(toleration: Toleration, taint: Taint, tolerated: bool) -> None:
    assert taints.tolerates(toleration, taint) is tolerated


@pytest.mark.parametrize(("a", "b", "same"), [
    pytest.param(Taint(key="k", value="1", effect="NoSchedule"),
                 Taint(key="k", value="2", effect="NoSchedule"), True,
                 id="taints with the same key and effect are the same whatever their values"),
    pytest.param(Taint(key="k", effect="NoSchedule"), Taint(key="k", effect="NoExecute"), False,
                 id="taints with different effects differ"),
    pytest.param(Taint(key="k", effect="NoExecute"), PolicyTaint(key="k", effect="NoExecute"), True,
                 id="a policy taint and a cluster taint compare by key and effect"),
])
def test_same_taint(a: Taint, b: Taint, same: bool) -> None:
    assert taints.same_taint(a, b) is same
    assert taints.taint_exists([b], a) is same


@pytest.mark.parametrize(("a", "b", "same"), [
    pytest.param(Toleration(key="k", operator="Exists", toleration_seconds=1),
                 Toleration(key="k", operator="Exists", toleration_seconds=2), True,
                 id="tolerationSeconds does not matter for identity"),
    pytest.param(Toleration(key="k", value="v"), Toleration(key="k", value="w"), False,
                 id="values matter for identity"),
])
def test_same_toleration(a: Toleration, b: Toleration, same: bool) -> None:
    assert taints.same_toleration(a, b) is same


def test_untolerated_taints_filters_by_effect_and_keeps_order() -> None:
    cluster_taints = [ZONE_A, NOT_READY_EXEC, Taint(key="x", effect="NoExecute")]
    tolerations = [Toleration(key="x", operator="Exists")]
    assert taints.untolerated_taints(cluster_taints, tolerations) == [ZONE_A, NOT_READY_EXEC]
    assert taints.untolerated_taints(cluster_taints, tolerations, effects=["NoExecute"]) == [NOT_READY_EXEC]
    assert taints.tolerations_tolerate_taint(None, ZONE_A) is False
