"""The resource interpreter façade: one object the controllers, scheduler and CLI call.

Every operation asks the layers in Karmada's fixed order and the first layer with a hook answers
— its result, or its error, is final (no fall-through on error):

1. **customization** — a ResourceInterpreterCustomization script for the object's exact
   ``apiVersion`` and ``kind`` (:mod:`.customization`, run by :mod:`.declarative` in :mod:`.lua`);
2. **native** — the built-in rules for Kubernetes kinds (:mod:`.native`);
3. **default** — what callers get when no layer has a hook. Karmada's callers check
   ``HookEnabled`` first and skip the call; this façade answers the same thing directly:
   health is *healthy*, replicas are ``(0, None)``, revise/retain/aggregate return the object
   unchanged, dependencies are ``[]``. ReflectStatus never reaches the default: the native layer
   reflects the whole status of any kind.

``hook_enabled`` is the OR over the layers, as in Karmada. ``has_health_rule`` exists for
admission: application failover can never fire for a kind whose health nobody interprets.

The API is synchronous and pure apart from the Lua runtime it owns (thread-safe). Objects are
wire dicts (or models with ``to_dict()``); inputs are never modified. Failures raise
:class:`fleetkeeper.errors.InterpreterError` (:class:`~fleetkeeper.errors.ScriptError` for Lua).

Code on the event loop awaits the same operations through :meth:`Interpreter.aio`: on the
system clock a customization's scripts then run in that customization's own worker thread and
Lua runtime (:mod:`.lanes`), so a script spinning to its limits stalls neither the loop nor the
other customizations; native rules always run inline. Results are bounded: a script's value
larger than ``Limits.result_bytes`` encoded (``Limits.object_bytes`` for a whole object) is a
ScriptError naming the limit.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from fleetkeeper import errors
from fleetkeeper.clock import Clock, SystemClock
from fleetkeeper.interpreter import fields, native
from fleetkeeper.interpreter.aio import AsyncInterpreter, Waiting
from fleetkeeper.interpreter.customization import Customization, Registry, Script
from fleetkeeper.interpreter.declarative import Declarative
from fleetkeeper.interpreter.lanes import Lanes
from fleetkeeper.interpreter.lua import Limits, LuaSandbox
from fleetkeeper.interpreter.native.replicas import check_replicas
from fleetkeeper.interpreter.operation import Operation

Obj = dict[str, Any]
Key = tuple[str, str]


def _key(obj: Obj) -> Key:
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str) or not kind:
        raise errors.InterpreterError("object has no apiVersion/kind")
    return api_version, kind


class Interpreter:
    """Customization (Lua) → native → default, for every interpreter operation."""

    def __init__(self, customizations: Iterable[Any] = (), *, clock: Clock | None = None,
                 limits: Limits | None = None, threads: bool | None = None) -> None:
        """``threads``: whether :meth:`aio` runs customization calls in worker threads (default:
        on the system clock only; on any other clock they run inline, deterministically)."""
        self.clock: Clock = clock or SystemClock()
        self.sandbox = LuaSandbox(clock=self.clock, limits=limits)
        self._declarative = Declarative(self.sandbox)
        self._registry = Registry()
        if threads is None:
            threads = isinstance(self.clock, SystemClock)
        self._lanes = Lanes(clock=self.clock, limits=limits) if threads else None
        self.set_customizations(customizations)

    def aio(self, waiting: Waiting | None = None) -> AsyncInterpreter:
        """The operations as coroutines; a call waiting for a customization's thread waits inside
        ``waiting()`` (see :mod:`.aio`)."""
        return AsyncInterpreter(self, self._lanes, waiting)

    def close(self) -> None:
        """Stop the customizations' worker threads (each ends after the calls it holds)."""
        if self._lanes is not None:
            self._lanes.close()

    # ------------------------------------------------------------------ customizations
    def set_customizations(self, customizations: Iterable[Any]) -> None:
        """Replace every customization (wire dicts or models); scripts are syntax-checked."""
        parsed = [self._parse(c) for c in customizations]
        self._registry = Registry(parsed)
        self._retire_lanes()

    def add_customization(self, customization: Any) -> None:
        """Add one customization, replacing any with the same name."""
        self._registry.put(self._parse(customization))

    def remove_customization(self, name: str) -> bool:
        """Remove a customization by name; False when there was none."""
        found = self._registry.remove(name)
        self._retire_lanes()
        return found

    def _retire_lanes(self) -> None:
        if self._lanes is not None:
            self._lanes.keep(c.name for c in self._registry.customizations)

    @property
    def customizations(self) -> list[Customization]:
        return self._registry.customizations

    def _parse(self, customization: Any) -> Customization:
        parsed = Customization.parse(customization)
        for operation, text in parsed.scripts.items():
            self.sandbox.check(text, name=f"{parsed.name}.{operation.field}")
        return parsed

    # ------------------------------------------------------------------ hooks
    def scripts(self, obj: Any, operation: Operation | str) -> list[Script]:
        """The customization scripts that answer ``operation`` for ``obj``'s kind, in the order they
        run (several only for InterpretDependency; none when a native rule or the default answers)."""
        op = Operation.parse(operation)
        key = _key(obj if isinstance(obj, dict) else fields.wire(obj))
        if op is Operation.INTERPRET_DEPENDENCY:
            return self._registry.dependency_scripts(key)
        script = self._registry.script(key, op)
        return [] if script is None else [script]

    def has_customization(self, api_version: str, kind: str, operation: Operation | str) -> bool:
        """Whether a customization script handles ``operation`` for the kind."""
        return self._registry.has((api_version, kind), Operation.parse(operation))

    def hook_enabled(self, api_version: str, kind: str, operation: Operation | str) -> bool:
        """``HookEnabled``: whether some layer (customization or native) handles ``operation``."""
        op = Operation.parse(operation)
        key = (api_version, kind)
        return self._registry.has(key, op) or native.has_hook(key, op)

    def has_health_rule(self, api_version: str, kind: str) -> bool:
        """Whether health is interpreted for the kind (else it always counts as healthy)."""
        return self.hook_enabled(api_version, kind, Operation.INTERPRET_HEALTH)

    # ------------------------------------------------------------------ operations
    def get_replicas(self, obj: Any) -> tuple[int, Obj | None]:
        """InterpretReplica: the replica count and what each replica needs (or None)."""
        data = fields.wire(obj)
        key = _key(data)
        script = self._registry.script(key, Operation.INTERPRET_REPLICA)
        if script is not None:
            return self._declarative.get_replicas(script, data)
        if native.has_hook(key, Operation.INTERPRET_REPLICA):
            replicas, requirements = native.get_replicas(key, data)
            return check_replicas(replicas), requirements
        return 0, None

    interpret_replica = get_replicas

    def get_components(self, obj: Any) -> list[Obj] | None:
        """InterpretComponent (multi-template workloads): customization only, else None."""
        data = fields.wire(obj)
        script = self._registry.script(_key(data), Operation.INTERPRET_COMPONENT)
        return None if script is None else self._declarative.get_components(script, data)

    interpret_component = get_components

    def revise_replica(self, obj: Any, replicas: int) -> Obj:
        """ReviseReplica: the object with its replica field set to ``replicas``."""
        data = fields.wire(obj)
        key = _key(data)
        script = self._registry.script(key, Operation.REVISE_REPLICA)
        if script is not None:
            return self._declarative.revise_replica(script, data, int(replicas))
        if native.has_hook(key, Operation.REVISE_REPLICA):
            return native.revise_replica(key, data, int(replicas))
        return fields.deep(data)

    def retain(self, desired: Any, observed: Any) -> Obj:
        """Retain: ``desired`` with the member-owned fields of ``observed`` kept."""
        want, have = fields.wire(desired), fields.wire(observed)
        key = _key(want)
        script = self._registry.script(key, Operation.RETAIN)
        if script is not None:
            return self._declarative.retain(script, want, have)
        if native.has_hook(key, Operation.RETAIN):
            return native.retain(key, want, have)
        return fields.deep(want)

    def aggregate_status(self, obj: Any, items: Sequence[Any] | None) -> Obj:
        """AggregateStatus: the template with its status built from the members' statuses."""
        data = fields.wire(obj)
        key = _key(data)
        wire_items = None if items is None else [fields.wire(item) for item in items]
        script = self._registry.script(key, Operation.AGGREGATE_STATUS)
        if script is not None:
            return self._declarative.aggregate_status(script, data, wire_items)
        if native.has_hook(key, Operation.AGGREGATE_STATUS):
            return fields.deep(native.aggregate_status(key, data, wire_items, self.clock.now()))
        return fields.deep(data)

    def reflect_status(self, obj: Any) -> Obj | None:
        """InterpretStatus (ReflectStatus): the status to record for a member object, or None."""
        data = fields.wire(obj)
        key = _key(data)
        script = self._registry.script(key, Operation.INTERPRET_STATUS)
        if script is not None:
            return self._declarative.reflect_status(script, data)
        return native.reflect_status(key, data)

    interpret_status = reflect_status

    def interpret_health(self, obj: Any) -> bool:
        """InterpretHealth: whether the member object is healthy (True when no rule exists)."""
        data = fields.wire(obj)
        key = _key(data)
        script = self._registry.script(key, Operation.INTERPRET_HEALTH)
        if script is not None:
            return self._declarative.interpret_health(script, data)
        if native.has_hook(key, Operation.INTERPRET_HEALTH):
            return native.interpret_health(key, data)
        return True

    def get_dependencies(self, obj: Any) -> list[Obj]:
        """InterpretDependency: the objects that must be propagated along with this one."""
        data = fields.wire(obj)
        key = _key(data)
        scripts = self._registry.dependency_scripts(key)
        if scripts:
            return self._declarative.get_dependencies(scripts, data)
        if native.has_hook(key, Operation.INTERPRET_DEPENDENCY):
            return native.get_dependencies(key, data)
        return []

    interpret_dependency = get_dependencies

    def prune(self, obj: Any, *, remove_job_ttl: bool = False) -> Obj:
        """Prune: the template without the fields that must not reach a member cluster."""
        return native.prune(fields.wire(obj), remove_job_ttl=remove_job_ttl)
