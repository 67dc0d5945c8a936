"""A workload that passed admission is not admitted in full again, and nothing invalid gets in.

The simulated API server remembers what full admission accepted (the body: all but metadata,
status and a valid replica count; and the body with the metadata but its server-stamped fields),
so the same workload applied to another cluster has only its metadata checked, and re-applied
(rescaled) only its stamped fields. Whatever is changed to something invalid after a valid
apply is still refused, naming the field, as full admission refuses it."""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from fleetkeeper import errors
from fleetkeeper.api import admission
from fleetkeeper.api.builtin import BUILTIN
from fleetkeeper.clock import VirtualClock
from fleetkeeper.members.simulated import SimulatedCluster
from fleetkeeper.members.simulated.validate import ADMITTED, Remembered, check, digests

from .helpers import on_cluster, pod, ref, workload

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def changed(doc: dict[str, Any], change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    change(out)
    return out


def container(doc: dict[str, Any]) -> dict[str, Any]:
    spec = doc["spec"] if doc["kind"] == "Pod" else doc["spec"]["template"]["spec"]
    found: dict[str, Any] = spec["containers"][0]
    return found


Ways = tuple[int, int, int]


def ways() -> Ways:
    return ADMITTED.full, ADMITTED.metadata, ADMITTED.stamped


def test_the_same_workload_is_admitted_in_full_once() -> None:
    first = workload("Deployment", "admitted-once", replicas=1)
    # as a Work for another cluster: other labels, annotations and replica count, the same pods
    second = changed(first, lambda d: d["metadata"].update(labels={"cluster": "member2"},
                                                            annotations={"work": "member2"}))
    second["spec"]["replicas"] = 2

    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> tuple[list[Ways], list[Any]]:
        other = SimulatedCluster("member2", clock=clock)
        try:
            taken = [ways()]
            await cluster.apply(first)
            taken.append(ways())
            await other.apply(second)
            taken.append(ways())
            await clock.sleep(5)
            await cluster.apply(changed(first, lambda d: d["spec"].update(replicas=3)))  # rescaled
            taken.append(ways())
            return taken, [cluster.peek(ref(first)), other.peek(ref(second))]
        finally:
            await other.close()

    taken, stored = on_cluster(main)
    steps = [tuple(b - a for a, b in zip(before, after, strict=True))
             for before, after in itertools.pairwise(taken)]
    assert steps == [(1, 0, 0), (0, 1, 0), (0, 0, 1)], "full admission, then metadata, then stamped fields"
    assert [s["spec"]["replicas"] for s in stored] == [3, 2]


REFUSED_AFTER_VALID = [
    # (valid manifest, change, field named, whether the body is the one admitted before)
    pytest.param(workload("Deployment", "meta-web"), lambda d: d["metadata"].update(labels={"a": 1}),
                 "metadata.labels.a", True, id="a label that becomes a number"),
    pytest.param(workload("Deployment", "meta-web"), lambda d: d["metadata"].update(labels={"bad key!": "x"}),
                 "metadata.labels[bad key!]", True, id="a label key that becomes invalid"),
    pytest.param(workload("Deployment", "meta-web"), lambda d: d["metadata"].update(finalizers=["cleanup"]),
                 "metadata.finalizers[0]", True, id="a finalizer that is not qualified"),
    pytest.param(workload("Deployment", "meta-web"), lambda d: d["metadata"].update(ownerReferences=[None]),
                 "metadata.ownerReferences[0]", True, id="an owner reference that becomes null"),
    pytest.param(workload("Deployment", "count-web"), lambda d: d["spec"].update(replicas=-1),
                 "spec.replicas", False, id="replicas that become negative"),
    pytest.param(workload("Deployment", "count-web"), lambda d: d["spec"].update(replicas="2"),
                 "spec.replicas", False, id="replicas that become a string"),
    pytest.param(workload("StatefulSet", "count-db"), lambda d: d["spec"].update(replicas=2.5),
                 "spec.replicas", False, id="StatefulSet replicas that become a fraction"),
    pytest.param(workload("ReplicaSet", "count-rs", replicas=0), lambda d: d["spec"].update(replicas=True),
                 "spec.replicas", False, id="ReplicaSet replicas that become a boolean"),
    pytest.param(workload("Deployment", "body-web"), lambda d: container(d).update(name=1),
                 "spec.template.spec.containers[0].name", False, id="a container name that becomes a number"),
    pytest.param(workload("Deployment", "body-web"),
                 lambda d: d["spec"].update(selector={"matchLabels": {"app": "other"}}),
                 "spec.template.metadata.labels", False, id="a selector that stops matching"),
    pytest.param(workload("Job", "body-job"), lambda d: d["spec"]["template"]["spec"].update(containers=[]),
                 "spec.template.spec.containers", False, id="a Job whose containers go"),
    pytest.param(pod("body-pod"), lambda d: container(d).update(image=""),
                 "spec.containers[0].image", False, id="a bare Pod whose image goes"),
]


@pytest.mark.parametrize(("valid", "change", "field", "same_body"), REFUSED_AFTER_VALID)
def test_a_manifest_changed_to_something_invalid_after_a_valid_one_is_still_refused(
        valid: dict[str, Any], change: Callable[[dict[str, Any]], None], field: str, same_body: bool) -> None:
    invalid = changed(valid, change)

    Outcome = tuple[list[errors.Invalid], Any, Any, int]

    async def main(cluster: SimulatedCluster, clock: VirtualClock) -> Outcome:
        fresh = SimulatedCluster("member2", clock=clock)
        refusals = []
        try:
            await cluster.apply(valid)
            await clock.sleep(5)  # the workload runs: its status is written
            before = cluster.peek(ref(valid))
            full = ADMITTED.full
            for target in (cluster, fresh):  # over the valid object, and as a first apply
                with pytest.raises(errors.Invalid) as refused:
                    await target.apply(invalid)
                refusals.append(refused.value)
            stored = (cluster.peek(ref(valid)), fresh.peek(ref(invalid)))
            return refusals, before, stored, ADMITTED.full - full
        finally:
            await fresh.close()

    refusals, before, (after, stored), full = on_cluster(main)
    for refusal in refusals:
        assert field in [c.field for c in refusal.causes], refusal
    assert after == before and stored is None, "nothing invalid was stored"
    assert (full == 0) == same_body, "the remembered body was recalled, and did not let the change in"


@pytest.mark.parametrize(("valid", "change", "field", "same_body"), REFUSED_AFTER_VALID)
def test_a_refusal_after_a_remembered_body_is_the_one_full_admission_gives(
        valid: dict[str, Any], change: Callable[[dict[str, Any]], None], field: str, same_body: bool) -> None:
    invalid = changed(valid, change)
    check(valid, now=NOW)
    with pytest.raises(errors.Invalid) as remembered:
        check(invalid, now=NOW)
    with pytest.raises(errors.Invalid) as full:
        admission.admit(BUILTIN[invalid["kind"]].from_dict(copy.deepcopy(invalid)), None, operation="CREATE",
                        now=NOW)
    assert remembered.value.causes == full.value.causes
    assert str(remembered.value) == str(full.value)


STAMPED_INVALID = [
    pytest.param(lambda m: m.update(managedFields=[1]), "metadata.managedFields[0]", id="managedFields"),
    pytest.param(lambda m: m.update(generation="first"), "metadata.generation", id="generation"),
    pytest.param(lambda m: m.update(resourceVersion=7), "metadata.resourceVersion", id="resourceVersion"),
    pytest.param(lambda m: m.update(uid=["u"]), "metadata.uid", id="uid"),
    pytest.param(lambda m: m.update(creationTimestamp="yesterday"), "metadata.creationTimestamp",
                 id="creationTimestamp"),
]


@pytest.mark.parametrize(("change", "field"), STAMPED_INVALID)
def test_a_stamped_field_changed_to_something_invalid_is_still_refused(
        change: Callable[[dict[str, Any]], None], field: str) -> None:
    valid = workload("Deployment", "stamped-web")
    valid["metadata"].update(uid="u-1", resourceVersion="3", generation=2,
                             creationTimestamp="2026-01-01T00:00:00Z",
                             managedFields=[{"manager": "m", "operation": "Apply"}])
    check(valid, now=NOW)
    check(changed(valid, lambda d: d["metadata"].update(resourceVersion="4", generation=3)), now=NOW)
    stamped = ADMITTED.stamped
    invalid = changed(valid, lambda d: change(d["metadata"]))
    with pytest.raises(errors.Invalid) as refused:
        check(invalid, now=NOW)
    assert ADMITTED.stamped == stamped, "not passed on the stamped fields alone"
    assert field in [c.field for c in refused.value.causes], refused.value


def test_a_workload_is_identified_by_what_the_rules_read() -> None:
    base = workload("Deployment", "digest-web", replicas=1)
    seen = digests(base)
    assert seen is not None
    same_body = [
        changed(base, lambda d: d["metadata"].update(labels={"x": "y"}, namespace="other")),
        changed(base, lambda d: d.update(status={"readyReplicas": 1})),
        changed(base, lambda d: d["spec"].update(replicas=7)),
        changed(base, lambda d: d["spec"].pop("replicas")),
        {**base, "spec": dict(reversed(list(base["spec"].items())))},  # key order
    ]
    assert [d.body for d in map(digests, same_body) if d] == [seen.body] * len(same_body)
    stamped = changed(base, lambda d: d["metadata"].update(uid="u", resourceVersion="9", generation=4,
                                                           managedFields=[{"manager": "m"}]))
    assert digests(stamped) == seen, "the stamped fields are not part of either"
    assert [d.whole for d in map(digests, same_body[:1]) if d] != [seen.whole]
    other = [
        changed(base, lambda d: container(d).update(image="app:v2")),
        changed(base, lambda d: d.update(kind="StatefulSet")),
        changed(base, lambda d: d.update(apiVersion="apps/v2")),
        changed(base, lambda d: d["spec"].update(paused=True)),
        changed(base, lambda d: d["spec"].update(paused=1)),
    ]
    bodies = [d.body for d in map(digests, other) if d]
    assert len(set(bodies)) == len(other) and seen.body not in bodies
    # not remembered at all: an invalid count, values that are not plain JSON
    assert digests(changed(base, lambda d: d["spec"].update(replicas=-1))) is None
    assert digests(changed(base, lambda d: d["spec"].update(replicas=1.0))) is None
    assert digests(changed(base, lambda d: d["spec"].update(extra={1: "a"}))) is None
    assert digests(changed(base, lambda d: d["metadata"].update(labels={"a"}))) is None


def test_what_is_remembered_is_bounded() -> None:
    remembered = Remembered(2)
    remembered.add(b"a", b"b", b"c")
    assert len(remembered) == 2
    assert not remembered.recall(b"a") and remembered.recall(b"c") and remembered.recall(b"b")
    remembered.add(b"d")  # "c" is now the least recently used
    assert not remembered.recall(b"c") and remembered.recall(b"b") and remembered.recall(b"d")
