"""Event handlers: changes become requests in a controller's queue."""

from __future__ import annotations

import pytest

from fleetkeeper.api import builtin
from fleetkeeper.api.meta import Resource
from fleetkeeper.clock import VirtualClock
from fleetkeeper.runtime.controller import Controller
from fleetkeeper.runtime.handler import EnqueueMapped, FuncHandler, MapFunc, Predicate, generation_changed
from fleetkeeper.runtime.metrics import NoMetrics
from fleetkeeper.runtime.reconcile import FuncReconciler, Request, Result

from .helpers import run_virtual

Events = list[tuple[str, Resource | None, Resource | None]]
Mapper = MapFunc[Resource] | None
Filter = Predicate[Resource] | None


def cm(name: str, *, owner: str = "", generation: int = 1) -> Resource:
    labels = {"owner": owner} if owner else {}
    return builtin.ConfigMap.model_validate(
        {"metadata": {"name": name, "namespace": "ns", "generation": generation, "labels": labels}}
    )


def owner_of(obj: Resource) -> list[Request]:
    owner = obj.labels().get("owner")
    return [Request("ns", owner)] if owner else []


async def nothing(request: Request) -> Result:
    return Result()


async def queued_after(
    clock: VirtualClock, events: Events, map_to: Mapper, predicate: Filter
) -> list[str]:
    controller = Controller("h", FuncReconciler(nothing), clock=clock, metrics=NoMetrics())
    handler: EnqueueMapped[Resource] = EnqueueMapped(controller, map_to, predicate=predicate)
    for kind, old, new in events:
        if kind == "add" and new is not None:
            handler.on_add(new)
        elif kind == "update" and old is not None and new is not None:
            handler.on_update(old, new)
        elif kind == "delete" and old is not None:
            handler.on_delete(old)
    out = []
    while len(controller.queue):
        out.append(str(await controller.queue.get()))
    return out


@pytest.mark.parametrize(
    ("events", "map_to", "predicate", "expected"),
    [
        pytest.param(
            [("add", None, cm("a")), ("update", cm("a"), cm("a")), ("delete", cm("a"), None)], None, None,
            ["ns/a"], id="by default an object enqueues its own key and repeats coalesce",
        ),
        pytest.param(
            [("add", None, cm("w1", owner="b1")), ("add", None, cm("w2", owner="b2"))], owner_of, None,
            ["ns/b1", "ns/b2"], id="a map function enqueues the owner instead",
        ),
        pytest.param(
            [("update", cm("w", owner="old"), cm("w", owner="new"))], owner_of, None,
            ["ns/old", "ns/new"], id="an update wakes both the old and the new owner",
        ),
        pytest.param(
            [("update", cm("a"), cm("a")), ("update", cm("b"), cm("b", generation=2))],
            None, generation_changed, ["ns/b"], id="the generation predicate ignores status-only updates",
        ),
        pytest.param(
            [("add", None, cm("a")), ("delete", cm("b"), None)], None, generation_changed,
            ["ns/a", "ns/b"], id="the generation predicate lets adds and deletes through",
        ),
    ],
)
def test_enqueue_mapped(
    events: Events, map_to: Mapper, predicate: Filter, expected: list[str]
) -> None:
    async def main(clock: VirtualClock) -> list[str]:
        return await queued_after(clock, events, map_to, predicate)

    assert run_virtual(main) == expected


def test_func_handler_sees_old_and_new() -> None:
    seen: list[tuple[str | None, str | None]] = []
    handler: FuncHandler[Resource] = FuncHandler(
        lambda old, new: seen.append((old.name if old else None, new.name if new else None))
    )
    handler.on_add(cm("a"))
    handler.on_update(cm("a"), cm("b"))
    handler.on_delete(cm("b"))
    assert seen == [(None, "a"), ("a", "b"), ("b", None)]
