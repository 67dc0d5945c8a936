"""The customizations controller keeps the interpreter's Lua rules equal to the objects."""

from __future__ import annotations

from typing import Any

from fleetkeeper.api.config import ResourceInterpreterCustomization
from fleetkeeper.api.core import Event
from fleetkeeper.clock import VirtualClock
from fleetkeeper.controllers.customizations import REASON_INVALID

from .propagation_world import run, running

HEALTH = "function InterpretHealth(obj) return obj.status ~= nil and obj.status.ok == true end"


def ric(name: str, script: str, kind: str = "Widget") -> dict[str, Any]:
    return {"apiVersion": "config.karmada.io/v1alpha1", "kind": "ResourceInterpreterCustomization",
            "metadata": {"name": name},
            "spec": {"target": {"apiVersion": "example.io/v1", "kind": kind},
                     "customizations": {"healthInterpretation": {"luaScript": script}}}}


def test_customizations_follow_the_objects_and_a_broken_one_is_reported_not_used() -> None:
    async def main(clock: VirtualClock) -> None:
        async def before_start(client: Any) -> None:  # present at start: in place before any work
            await client.create(ResourceInterpreterCustomization.from_dict(ric("widget", HEALTH)))

        async with running(clock, "member1", before_start=before_start) as world:
            interpreter = world.plane.interpreter
            assert interpreter is not None
            widget = {"apiVersion": "example.io/v1", "kind": "Widget", "metadata": {"name": "w"}}
            assert interpreter.has_health_rule("example.io/v1", "Widget")
            assert interpreter.interpret_health({**widget, "status": {"ok": True}}) is True
            assert interpreter.interpret_health({**widget, "status": {"ok": False}}) is False

            await world.apply(ric("gadget", "function InterpretHealth(obj) return ( end", kind="Gadget"))

            async def reported() -> list[Event]:
                events = (await world.client.list(Event)).items
                return [e for e in events
                        if e.reason == REASON_INVALID and e.involved_object.name == "gadget"]

            events = await world.wait_for(reported)
            assert events[0].type == "Warning"
            assert not interpreter.has_health_rule("example.io/v1", "Gadget")
            assert interpreter.has_health_rule("example.io/v1", "Widget"), "the others keep working"

            await world.client.delete(ResourceInterpreterCustomization, "widget")
            await world.settle(1)
            assert not interpreter.has_health_rule("example.io/v1", "Widget")

    run(main)
