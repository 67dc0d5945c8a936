"""ResourceInterpreterCustomization (``config.karmada.io/v1alpha1``, cluster-scoped, short ``ric``).

Per-kind Lua hooks that teach the interpreter how to read replicas, revise them,
retain member-side fields, reflect and aggregate status, judge health and find
dependencies. Each hook is ``{luaScript}``; the script must define the global function
named in :data:`OPERATIONS`. The scripts are text here; compiling and running them is
the interpreter's job.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import ClassVar, Final

from pydantic import Field

from fleetkeeper.api import constants
from fleetkeeper.api.base import Model
from fleetkeeper.api.meta import Resource
from fleetkeeper.api.scheme import register


class CustomizationTarget(Model):
    api_version: str = Field(alias="apiVersion")
    """API version of the kind the rules are for. Required."""
    kind: str
    """The kind the rules are for. Required."""


class LuaScript(Model):
    lua_script: str
    """Lua source that defines the rule's function."""


class CustomizationRules(Model):
    retention: LuaScript | None = None
    """Keeps fields the member cluster changed when the plane updates the resource; the script defines Retain.
    """
    replica_resource: LuaScript | None = None
    """Reads the replica count and what one replica needs; the script defines GetReplicas."""
    component_resource: LuaScript | None = None
    """Reads the pod templates of a workload that has several; the script defines GetComponents."""
    replica_revision: LuaScript | None = None
    """Writes a cluster's share of the replicas into the resource; the script defines ReviseReplica."""
    status_reflection: LuaScript | None = None
    """Picks the status fields collected from the member cluster; the script defines ReflectStatus."""
    status_aggregation: LuaScript | None = None
    """Merges the members' statuses into the template's status; the script defines AggregateStatus."""
    health_interpretation: LuaScript | None = None
    """Says whether the resource in a member is healthy; the script defines InterpretHealth."""
    dependency_interpretation: LuaScript | None = None
    """Lists the objects the resource refers to, which follow it to its clusters; the script defines
    GetDependencies."""

    def script(self, rule: str) -> str:
        """The script of one rule by its wire name (``healthInterpretation``), ``""`` when unset."""
        entry = getattr(self, _PY_NAMES[rule])
        return entry.lua_script if isinstance(entry, LuaScript) else ""


class ResourceInterpreterCustomizationSpec(Model):
    target: CustomizationTarget
    """The kind the rules are for."""
    customizations: CustomizationRules
    """The rules, each a Lua script; a rule left out keeps the built-in behaviour."""


@register
class ResourceInterpreterCustomization(Resource):
    """Lua rules that teach the plane how to read replicas, status, health and dependencies of one kind."""

    API_VERSION: ClassVar[str] = constants.CONFIG_API_VERSION
    KIND: ClassVar[str] = "ResourceInterpreterCustomization"
    PLURAL: ClassVar[str] = "resourceinterpretercustomizations"
    NAMESPACED: ClassVar[bool] = False
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("ric",)
    CATEGORIES: ClassVar[tuple[str, ...]] = ("karmada-io",)
    HAS_STATUS: ClassVar[bool] = False

    spec: ResourceInterpreterCustomizationSpec
    """Lua rules that teach the plane how to read and change one kind."""


#: rule (wire name) → the global Lua function its script must define
OPERATIONS: Final = MappingProxyType({
    "retention": "Retain",
    "replicaResource": "GetReplicas",
    "componentResource": "GetComponents",
    "replicaRevision": "ReviseReplica",
    "statusReflection": "ReflectStatus",
    "statusAggregation": "AggregateStatus",
    "healthInterpretation": "InterpretHealth",
    "dependencyInterpretation": "GetDependencies",
})

_PY_NAMES: Final = MappingProxyType({
    field.alias or name: name for name, field in CustomizationRules.model_fields.items()
})

__all__ = [
    "OPERATIONS", "CustomizationRules", "CustomizationTarget", "LuaScript",
    "ResourceInterpreterCustomization", "ResourceInterpreterCustomizationSpec",
]
