"""The interpreter operations, with every name Karmada gives them.

One operation is known by four names: the ``InterpreterOperation`` enum value
(``InterpretHealth``), the ResourceInterpreterCustomization field that holds its script
(``healthInterpretation``), the global Lua function that script defines (``InterpretHealth``) and
the karmadactl ``--operation`` spelling (``interpretHealth``, matched case-insensitively).
"""

from __future__ import annotations

from enum import StrEnum

from fleetkeeper import errors


class Operation(StrEnum):
    """``InterpreterOperation``: what a rule answers."""

    INTERPRET_REPLICA = "InterpretReplica"
    INTERPRET_COMPONENT = "InterpretComponent"
    REVISE_REPLICA = "ReviseReplica"
    RETAIN = "Retain"
    AGGREGATE_STATUS = "AggregateStatus"
    INTERPRET_STATUS = "InterpretStatus"
    INTERPRET_HEALTH = "InterpretHealth"
    INTERPRET_DEPENDENCY = "InterpretDependency"
    PRUNE = "Prune"

    @property
    def field(self) -> str:
        """The ``spec.customizations`` field holding this operation's Lua script (``""`` for Prune)."""
        return _FIELDS.get(self, "")

    @property
    def function(self) -> str:
        """The global Lua function a customization script must define (``""`` for Prune)."""
        return _FUNCTIONS.get(self, "")

    @classmethod
    def parse(cls, name: str | Operation) -> Operation:
        """An operation by enum value, customization field or Lua function name, any case."""
        if isinstance(name, Operation):
            return name
        wanted = name.strip().lower()
        for op in cls:
            if wanted and wanted in (op.value.lower(), op.field.lower(), op.function.lower()):
                return op
        choices = ", ".join(op.value[0].lower() + op.value[1:] for op in cls if op in _FIELDS)
        raise errors.InterpreterError(f"operation {name!r} is not supported; use one of: {choices}")


_FIELDS = {
    Operation.RETAIN: "retention",
    Operation.INTERPRET_REPLICA: "replicaResource",
    Operation.INTERPRET_COMPONENT: "componentResource",
    Operation.REVISE_REPLICA: "replicaRevision",
    Operation.INTERPRET_STATUS: "statusReflection",
    Operation.AGGREGATE_STATUS: "statusAggregation",
    Operation.INTERPRET_HEALTH: "healthInterpretation",
    Operation.INTERPRET_DEPENDENCY: "dependencyInterpretation",
}

_FUNCTIONS = {
    Operation.RETAIN: "Retain",
    Operation.INTERPRET_REPLICA: "GetReplicas",
    Operation.INTERPRET_COMPONENT: "GetComponents",
    Operation.REVISE_REPLICA: "ReviseReplica",
    Operation.INTERPRET_STATUS: "ReflectStatus",
    Operation.AGGREGATE_STATUS: "AggregateStatus",
    Operation.INTERPRET_HEALTH: "InterpretHealth",
    Operation.INTERPRET_DEPENDENCY: "GetDependencies",
}
