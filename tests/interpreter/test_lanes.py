"""Customization calls off the event loop: each customization in its own lane (thread and Lua
runtime) on the system clock, so a spinning one holds only itself up; inline on a virtual clock,
where time must not move while a script runs."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from fleetkeeper import errors
from fleetkeeper.clock import VIRTUAL_EPOCH, SystemClock, VirtualClock
from fleetkeeper.interpreter import Interpreter, Limits
from fleetkeeper.interpreter.lanes import Busy

SPIN = "function InterpretHealth(o) while true do end end"
QUICK = "function InterpretHealth(o) return o.spec.ready == true end"
#: a second is far more than any call here needs; only the deadline stops the spinner
LIMITS = Limits(instructions=10**13, seconds=1.0)


class ManualClock:
    """A clock the test moves by hand (the lanes' threads read it)."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def now(self) -> Any:
        return VIRTUAL_EPOCH + timedelta(seconds=self.seconds)

    def monotonic(self) -> float:
        return self.seconds

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


def ric(name: str, kind: str, health: str, *, dependencies: str | None = None) -> dict[str, Any]:
    customizations: dict[str, Any] = {"healthInterpretation": {"luaScript": health}}
    if dependencies is not None:
        customizations = {"dependencyInterpretation": {"luaScript": dependencies}}
    return {"apiVersion": "config.karmada.io/v1alpha1", "kind": "ResourceInterpreterCustomization",
            "metadata": {"name": name},
            "spec": {"target": {"apiVersion": "apps/v1", "kind": kind}, "customizations": customizations}}


def workload(kind: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": "w", "namespace": "default"},
            "spec": spec}


def lua_threads() -> set[str]:
    return {t.name for t in threading.enumerate() if t.name.startswith("lua-")}


async def test_a_spinning_customization_holds_up_neither_the_others_nor_native_rules() -> None:
    clock = ManualClock()
    interp = Interpreter([ric("spinner", "StatefulSet", SPIN), ric("quick", "DaemonSet", QUICK)],
                         clock=clock, limits=LIMITS, threads=True)
    aio = interp.aio()
    spinning = asyncio.create_task(aio.interpret_health(workload("StatefulSet")))
    try:
        await asyncio.sleep(0)  # the spinner takes its lane
        clock.seconds = 0.5  # half way to its deadline: it spins on
        with pytest.raises(Busy, match="'spinner' is busy"):
            await aio.interpret_health(workload("StatefulSet"))
        assert await aio.interpret_health(workload("DaemonSet", ready=True)) is True
        assert await aio.interpret_health(workload("DaemonSet", ready=False)) is False
        assert await aio.interpret_health(workload("Deployment")) is True  # native, inline
        assert not spinning.done(), "the spinner is still running all along"
    finally:
        async with asyncio.timeout(30):
            while not spinning.done():  # past its deadline (again, if its thread started late)
                clock.seconds += 10
                await asyncio.sleep(0.01)
        interp.close()
    with pytest.raises(errors.ScriptError, match=r"spinner\.healthInterpretation: time limit of 1\.0 s"):
        spinning.result()


async def test_a_lane_that_was_busy_takes_calls_again_once_free() -> None:
    clock = ManualClock()
    interp = Interpreter([ric("spinner", "StatefulSet", SPIN)], clock=clock, limits=LIMITS, threads=True)
    aio = interp.aio()
    first = asyncio.create_task(aio.interpret_health(workload("StatefulSet")))
    await asyncio.sleep(0)
    with pytest.raises(Busy):
        await aio.interpret_health(workload("StatefulSet"))  # waits WAIT seconds for the lane, then gives up
    async with asyncio.timeout(30):
        while not first.done():
            clock.seconds += 10
            await asyncio.sleep(0.01)
    interp.set_customizations([ric("spinner", "StatefulSet", QUICK)])  # same name: same lane
    assert await aio.interpret_health(workload("StatefulSet", ready=True)) is True
    interp.close()


async def test_the_waiting_context_wraps_only_calls_that_go_to_a_lane() -> None:
    entered: list[str] = []

    @contextlib.contextmanager
    def waiting() -> Iterator[None]:
        entered.append("in")
        yield

    interp = Interpreter([ric("quick", "DaemonSet", QUICK)], clock=SystemClock())
    aio = interp.aio(waiting)
    assert await aio.interpret_health(workload("Deployment")) is True
    assert entered == []
    assert await aio.interpret_health(workload("DaemonSet", ready=True)) is True
    assert entered == ["in"]
    interp.close()


async def test_on_the_system_clock_a_customization_gets_a_thread_that_goes_with_it() -> None:
    interp = Interpreter([ric("quick", "DaemonSet", QUICK)], clock=SystemClock())
    assert await interp.aio().interpret_health(workload("DaemonSet", ready=True)) is True
    (thread,) = [t for t in threading.enumerate() if t.name == "lua-quick_0"]
    interp.set_customizations([])
    await asyncio.to_thread(thread.join, 10)
    assert not thread.is_alive()


DEPENDS = """
function GetDependencies(o)
  return {{apiVersion = "v1", kind = "ConfigMap", namespace = "default", name = "%s"},
          {apiVersion = "v1", kind = "Secret", namespace = "default", name = "shared"}}
end"""


async def test_dependencies_of_several_customizations_merge_as_the_synchronous_call_merges_them() -> None:
    interp = Interpreter([ric("a", "StatefulSet", "", dependencies=DEPENDS % "a"),
                          ric("b", "StatefulSet", "", dependencies=DEPENDS % "b")], clock=SystemClock())
    obj = workload("StatefulSet")
    assert await interp.aio().get_dependencies(obj) == interp.get_dependencies(obj)
    assert [d["name"] for d in interp.get_dependencies(obj)] == ["a", "b", "shared"]
    interp.close()


def test_on_a_virtual_clock_scripts_run_inline_and_virtual_time_stands_still() -> None:
    clock = VirtualClock()
    busy = "function InterpretHealth(o) local n = 0 for i = 1, 2000000 do n = n + i end return n > 0 end"
    interp = Interpreter([ric("busy", "StatefulSet", busy)], clock=clock)
    fired: list[float] = []

    async def main() -> tuple[float, bool]:
        asyncio.get_running_loop().call_later(0.001, lambda: fired.append(clock.monotonic()))
        started = clock.monotonic()
        healthy = await interp.aio().interpret_health(workload("StatefulSet"))
        return clock.monotonic() - started, healthy

    assert clock.run(main()) == (0.0, True)
    assert fired == [], "no timer ran while the script did"
    assert not {name for name in lua_threads() if name.startswith("lua-busy")}
