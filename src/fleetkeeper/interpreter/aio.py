"""The interpreter's operations as coroutines, for code running on the event loop (the controllers).

``await interpreter.aio(waiting).retain(desired, observed)`` answers what
``interpreter.retain(desired, observed)`` answers, but a customization (Lua) call runs in its
customization's lane (:mod:`.lanes`) while the caller awaits, inside the ``waiting`` context
(a controller passes the runtime's ``awaiting_io``, so meanwhile its reconcile holds nobody's
turn). Native rules run inline, synchronously, as before: no thread hop on the common path.

When the interpreter has no lanes (its clock is not the system clock: a VirtualClock, a test
clock) every call runs inline too, exactly as the synchronous API runs it — on virtual time the
same scenario then gives the same timeline on every machine and every run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from fleetkeeper.interpreter import fields
from fleetkeeper.interpreter.customization import Script
from fleetkeeper.interpreter.declarative import Declarative, merge_dependencies
from fleetkeeper.interpreter.lanes import Lanes
from fleetkeeper.interpreter.operation import Operation

if TYPE_CHECKING:
    from fleetkeeper.interpreter.core import Interpreter

Obj = dict[str, Any]
T = TypeVar("T")
#: what a call awaiting a lane runs inside (e.g. the runtime's ``awaiting_io``)
Waiting = Callable[[], AbstractContextManager[object]]


class AsyncInterpreter:
    """The operations of an :class:`~fleetkeeper.interpreter.Interpreter`, awaitable (module notes)."""

    def __init__(self, interpreter: Interpreter, lanes: Lanes | None, waiting: Waiting | None = None) -> None:
        self._interp = interpreter
        self._lanes = lanes
        self._waiting: Waiting = waiting or nullcontext

    def _scripts(self, data: Obj, operation: Operation) -> list[Script]:
        """The scripts to run in lanes for ``operation`` on ``data`` ([] when it runs inline)."""
        if self._lanes is None:
            return []
        return self._interp.scripts(data, operation)

    def _script(self, data: Obj, operation: Operation) -> Script | None:
        """The one script to run in a lane for ``operation`` on ``data`` (None: inline)."""
        scripts = self._scripts(data, operation)
        return scripts[0] if scripts else None

    async def _run(self, script: Script, work: Callable[[Declarative], T]) -> T:
        assert self._lanes is not None
        lane = self._lanes.lane(script.customization)
        with self._waiting():
            return await lane.run(work)

    async def get_replicas(self, obj: Any) -> tuple[int, Obj | None]:
        """InterpretReplica (see :meth:`Interpreter.get_replicas`)."""
        data = fields.wire(obj)
        script = self._script(data, Operation.INTERPRET_REPLICA)
        if script is not None:
            return await self._run(script, lambda d: d.get_replicas(script, data))
        return self._interp.get_replicas(data)

    async def revise_replica(self, obj: Any, replicas: int) -> Obj:
        """ReviseReplica (see :meth:`Interpreter.revise_replica`)."""
        data = fields.wire(obj)
        script = self._script(data, Operation.REVISE_REPLICA)
        if script is not None:
            return await self._run(script, lambda d: d.revise_replica(script, data, int(replicas)))
        return self._interp.revise_replica(data, replicas)

    async def retain(self, desired: Any, observed: Any) -> Obj:
        """Retain (see :meth:`Interpreter.retain`)."""
        want, have = fields.wire(desired), fields.wire(observed)
        script = self._script(want, Operation.RETAIN)
        if script is not None:
            return await self._run(script, lambda d: d.retain(script, want, have))
        return self._interp.retain(want, have)

    async def aggregate_status(self, obj: Any, items: Sequence[Any] | None) -> Obj:
        """AggregateStatus (see :meth:`Interpreter.aggregate_status`)."""
        data = fields.wire(obj)
        script = self._script(data, Operation.AGGREGATE_STATUS)
        if script is not None:
            wire_items = None if items is None else [fields.wire(item) for item in items]
            return await self._run(script, lambda d: d.aggregate_status(script, data, wire_items))
        return self._interp.aggregate_status(data, items)

    async def reflect_status(self, obj: Any) -> Obj | None:
        """InterpretStatus (see :meth:`Interpreter.reflect_status`)."""
        data = fields.wire(obj)
        script = self._script(data, Operation.INTERPRET_STATUS)
        if script is not None:
            return await self._run(script, lambda d: d.reflect_status(script, data))
        return self._interp.reflect_status(data)

    async def interpret_health(self, obj: Any) -> bool:
        """InterpretHealth (see :meth:`Interpreter.interpret_health`)."""
        data = fields.wire(obj)
        script = self._script(data, Operation.INTERPRET_HEALTH)
        if script is not None:
            return await self._run(script, lambda d: d.interpret_health(script, data))
        return self._interp.interpret_health(data)

    async def get_dependencies(self, obj: Any) -> list[Obj]:
        """InterpretDependency (see :meth:`Interpreter.get_dependencies`): each customization's
        script in its own lane, one after the other, merged as the synchronous call merges them."""
        data = fields.wire(obj)
        scripts = self._scripts(data, Operation.INTERPRET_DEPENDENCY)
        if not scripts:
            return self._interp.get_dependencies(data)
        results = [await self._run(script, partial(Declarative.dependencies_of, script=script, obj=data))
                   for script in scripts]
        return merge_dependencies(results)


__all__ = ["AsyncInterpreter", "Waiting"]
