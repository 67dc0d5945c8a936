"""A controller meeting an object it cannot handle says so once and does not retry forever.

Admission keeps broken objects out, but one stored before a rule existed (written here straight
into the store, past admission) or a Work whose manifest a member refuses must not keep a
controller retrying: the reconcile is tried once, one error names the object and the field, and
everything else goes on."""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Iterator, MutableMapping
from contextlib import contextmanager
from typing import Any

import pytest
import structlog.testing

from fleetkeeper.api import constants
from fleetkeeper.api.conditions import get_condition
from fleetkeeper.api.work import Work
from fleetkeeper.clock import VirtualClock

from .propagation_world import World, deployment, propagation_policy, running

#: virtual time left for retries: the backoff would have retried a failing key some twenty times by then
HOUR = 3600.0
GIVE_UP = "reconcile cannot succeed with the objects as they are"


@contextmanager
def every_log() -> Iterator[list[MutableMapping[str, Any]]]:
    """What is logged at any level meanwhile (whatever level an earlier test configured)."""
    before = structlog.get_config()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.DEBUG),
                        cache_logger_on_first_use=False)
    try:
        with structlog.testing.capture_logs() as logs:
            yield logs
    finally:
        structlog.configure(**before)


def broken(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    doc = deployment("broken", replicas=1)
    change(doc)
    return doc


def _pod(doc: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = doc["spec"]["template"]["spec"]
    return spec


async def on_member(world: World, name: str) -> dict[str, Any] | None:
    return await world.member_object("member1", "apps/v1", "Deployment", "default", name)


def complaints(logs: list[MutableMapping[str, Any]], name: str) -> list[MutableMapping[str, Any]]:
    """The warnings and errors about the object (or the detector's key of it) named ``name``."""
    return [e for e in logs if str(e.get("name")).rpartition("/")[2] == name
            and e.get("log_level") in ("warning", "error")]


@pytest.mark.parametrize(("template", "field"), [
    pytest.param(broken(lambda d: _pod(d).update(containers=[None])), "spec.template.spec.containers[0]",
                 id="containers: [null]"),
    pytest.param(broken(lambda d: d.update(status="Running")), "status", id="a status that is a string"),
    pytest.param(broken(lambda d: d.update(spec="web")), "spec", id="a spec that is a string"),
    pytest.param(broken(lambda d: _pod(d)["containers"][0].update(resources={"requests": {"cpu": "lots"}})),
                 "spec.template.spec.containers[0].resources.requests[cpu]",
                 id="a quantity that does not parse"),
])
def test_a_template_stored_broken_is_tried_once_and_said_once(template: dict[str, Any], field: str) -> None:
    async def main(clock: VirtualClock) -> tuple[list[MutableMapping[str, Any]], Any, Any]:
        with every_log() as logs:
            async with running(clock, "member1") as world:
                await world.plane.store.create(copy.deepcopy(template))  # stored before the rules existed
                await world.apply(propagation_policy("broken", "member1"))
                await world.apply(deployment("good", replicas=1))
                await world.apply(propagation_policy("good", "member1"))
                await world.wait_for(lambda: on_member(world, "good"))
                await world.settle(HOUR)
                return logs, await on_member(world, "broken"), await on_member(world, "good")

    logs, kept_back, propagated = run_virtual(main)
    (said,) = complaints(logs, "broken")
    assert said["event"].startswith(GIVE_UP) and said["controller"] == "resource-detector"
    assert f'Deployment "broken" is invalid: {field}' in said["error"]
    assert kept_back is None and propagated is not None, "the broken template held up nothing else"
    assert complaints(logs, "good") == []


def test_a_work_whose_manifest_the_member_refuses_is_said_once() -> None:
    manifest = broken(lambda d: _pod(d)["containers"][0].update(name=1))
    manifest["metadata"]["namespace"] = "default"
    namespace = constants.execution_namespace("member1")
    work = Work.from_dict({"metadata": {"name": "broken", "namespace": namespace},
                           "spec": {"workload": {"manifests": [manifest]}}})

    async def main(clock: VirtualClock) -> tuple[list[MutableMapping[str, Any]], Work, Any]:
        with every_log() as logs:
            async with running(clock, "member1") as world:
                await world.client.create(work)
                await world.settle(HOUR)
                stored = await world.get(Work, work.name, work.namespace)
                assert stored is not None
                return logs, stored, await on_member(world, "broken")

    logs, stored, applied = run_virtual(main)
    assert applied is None
    applied_condition = get_condition(stored.status.conditions, constants.COND_WORK_APPLIED)
    assert applied_condition is not None and applied_condition.status == "False"
    says = "spec.template.spec.containers[0].name: Invalid value: 1: must be a string"
    assert says in applied_condition.message
    (said,) = complaints(logs, "broken")
    assert said["controller"] == "execution-controller"
    assert said["event"].startswith("reconcile failed terminally")
    assert "containers[0].name" in said["error"]


def run_virtual(main: Callable[[VirtualClock], Any]) -> Any:
    clock = VirtualClock()
    return clock.run(main(clock))

