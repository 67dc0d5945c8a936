"""ResourceInterpreterCustomization objects, merged per target kind (spec B.4.1).

Users teach the interpreter about their kinds with ``config.karmada.io/v1alpha1``
``ResourceInterpreterCustomization`` objects: a target ``{apiVersion, kind}`` and one Lua script
per operation. Several objects may target the same kind; Karmada merges them so:

* objects are taken in ``metadata.name`` order;
* for each operation the first object with a **non-empty** script wins (an empty script does not
  block a later one);
* ``dependencyInterpretation`` is the exception: every script is kept, in name order, and all run.

Input is the wire form (a dict, or a model with ``to_dict()``). A malformed object raises
:class:`InvalidCustomization`, which names the field.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from fleetkeeper import errors
from fleetkeeper.interpreter.operation import Operation

API_VERSION = "config.karmada.io/v1alpha1"
KIND = "ResourceInterpreterCustomization"
Key = tuple[str, str]

_OPERATIONS = {op.field: op for op in Operation if op not in (Operation.PRUNE,)}


class InvalidCustomization(errors.InterpreterError):
    """A customization object is malformed; ``field`` is the path of the offending field."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message


@dataclass(frozen=True)
class Script:
    """One operation's Lua script, and where it came from."""

    customization: str
    operation: Operation
    text: str

    @property
    def name(self) -> str:
        """The chunk name errors are reported under: ``<customization>.<field>``."""
        return f"{self.customization}.{self.operation.field}"


@dataclass(frozen=True)
class Customization:
    """One parsed ResourceInterpreterCustomization."""

    name: str
    target: Key
    scripts: dict[Operation, str]

    @classmethod
    def parse(cls, obj: object) -> Customization:
        """Parse the wire form; raise :class:`InvalidCustomization` naming the bad field."""
        if isinstance(obj, Customization):
            return obj
        data = _wire(obj)
        for field, expected in (("apiVersion", API_VERSION), ("kind", KIND)):
            if data.get(field) not in (None, expected):
                raise InvalidCustomization(field, f"must be {expected!r}, got {data.get(field)!r}")
        name = _string(_mapping(data.get("metadata"), "metadata"), "name", "metadata.name")
        spec = _mapping(data.get("spec"), "spec")
        target = _mapping(spec.get("target"), "spec.target")
        key = (_string(target, "apiVersion", "spec.target.apiVersion"),
               _string(target, "kind", "spec.target.kind"))
        scripts: dict[Operation, str] = {}
        for field, rule in _mapping(spec.get("customizations") or {}, "spec.customizations").items():
            where = f"spec.customizations.{field}"
            if field not in _OPERATIONS:
                raise InvalidCustomization(where, f"unknown field; expected one of {', '.join(_OPERATIONS)}")
            if rule is None:
                continue
            body = _mapping(rule, where)
            unknown = set(body) - {"luaScript"}
            if unknown:
                raise InvalidCustomization(f"{where}.{sorted(unknown)[0]}",
                                           "unknown field; expected luaScript")
            script = body.get("luaScript")
            if script is not None and not isinstance(script, str):
                raise InvalidCustomization(f"{where}.luaScript", "must be a string")
            if script:
                scripts[_OPERATIONS[field]] = script
        return cls(name=name, target=key, scripts=scripts)


class Registry:
    """The effective scripts per target kind, merged as Karmada merges them."""

    def __init__(self, customizations: Iterable[Customization] = ()) -> None:
        self._items: dict[str, Customization] = {c.name: c for c in customizations}
        self._merge()

    def _merge(self) -> None:
        self._scripts: dict[tuple[Key, Operation], Script] = {}
        self._dependencies: dict[Key, list[Script]] = {}
        for name in sorted(self._items):
            item = self._items[name]
            for operation, text in item.scripts.items():
                script = Script(name, operation, text)
                if operation is Operation.INTERPRET_DEPENDENCY:
                    self._dependencies.setdefault(item.target, []).append(script)
                else:
                    self._scripts.setdefault((item.target, operation), script)

    @property
    def customizations(self) -> list[Customization]:
        return [self._items[name] for name in sorted(self._items)]

    def put(self, customization: Customization) -> None:
        """Add or replace (by name) one customization."""
        self._items[customization.name] = customization
        self._merge()

    def remove(self, name: str) -> bool:
        """Remove a customization by name; False when there was none."""
        found = self._items.pop(name, None) is not None
        self._merge()
        return found

    def script(self, key: Key, operation: Operation) -> Script | None:
        """The winning script for ``operation`` on ``key``, or None."""
        return self._scripts.get((key, operation))

    def dependency_scripts(self, key: Key) -> list[Script]:
        """Every dependencyInterpretation script for ``key``, in customization-name order."""
        return list(self._dependencies.get(key, []))

    def has(self, key: Key, operation: Operation) -> bool:
        if operation is Operation.INTERPRET_DEPENDENCY:
            return bool(self._dependencies.get(key))
        return (key, operation) in self._scripts


def conflicts(customization: Customization, others: Iterable[Customization]) -> list[str]:
    """Why ``customization`` clashes with existing ones (Karmada's admission rule), if it does.

    Two customizations of the same target may not both define an operation, except
    ``dependencyInterpretation``.
    """
    problems = []
    for other in others:
        if other.name == customization.name or other.target != customization.target:
            continue
        for operation in sorted(set(other.scripts) & set(customization.scripts)):
            if operation is not Operation.INTERPRET_DEPENDENCY:
                problems.append(f"conflicting with InterpreterOperation({operation.value}) of existing "
                                f"ResourceInterpreterCustomization({other.name})")
    return problems


def _wire(obj: object) -> dict[str, Any]:
    to_dict = getattr(obj, "to_dict", None)
    if callable(to_dict):
        obj = to_dict()
    if not isinstance(obj, Mapping):
        raise InvalidCustomization("", f"a {KIND} must be an object, got {type(obj).__name__}")
    return dict(obj)


def _mapping(value: object, where: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        problem = "required object is missing" if value is None else "must be an object"
        raise InvalidCustomization(where, problem)
    return dict(value)


def _string(data: Mapping[str, Any], key: str, where: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value:
        problem = "required value is missing" if value in (None, "") else "must be a string"
        raise InvalidCustomization(where, problem)
    return value
