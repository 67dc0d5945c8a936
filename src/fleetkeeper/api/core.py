"""``core/v1`` pieces fleetkeeper models: Taint, Toleration, node selectors, Namespace, Event.

Taint and Toleration are shared by Cluster (``spec.taints``), placements
(``clusterTolerations``) and replica requirements (``nodeClaim.tolerations``); their
matching rules live in :mod:`fleetkeeper.api.rules`. Namespace and Event are the two
built-in kinds the control plane itself writes (execution namespaces, decision events),
so they are typed; every other core kind is :class:`~fleetkeeper.api.meta.Unstructured`
(see :mod:`fleetkeeper.api.builtin`).

Resource quantities are kept as their Kubernetes strings (``"4"``, ``"16Gi"``); plain
numbers in YAML are accepted and stored as strings. Arithmetic on them belongs to the
scheduler's estimator, not to the API types.

Enum-like strings the Kubernetes API does not enumerate in its schema (toleration
operators) stay ``str`` here and are checked by admission, which can name the rule.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BeforeValidator, Field

from fleetkeeper.api.base import Model, Time
from fleetkeeper.api.meta import Resource
from fleetkeeper.api.scheme import register

_QUANTITY = re.compile(
    r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+|Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$")


def _quantity(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, str) and not _QUANTITY.match(value):
        raise ValueError(f"quantities must match the regular expression "
                         f"'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$' (e.g. 500m, 2Gi): {value!r}")
    return value


#: ``resource.Quantity`` as its string (``"500m"``, ``"2Gi"``); numbers become strings, the format is checked.
Quantity = Annotated[str, BeforeValidator(_quantity)]
#: ``corev1.ResourceList``: resource name → quantity.
ResourceList = dict[str, Quantity]
TaintEffect = Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]
#: ``metav1.MicroTime`` renders like ``Time`` but keeps microseconds.
MicroTime = Time


class Taint(Model):
    """``corev1.Taint``: identity is ``key`` + ``effect`` (the value is ignored)."""

    key: str
    """Key of the taint, a qualified name."""
    value: str | None = None
    """Value of the taint, optional."""
    effect: TaintEffect
    """What the taint does to workloads that do not tolerate it: NoSchedule keeps new ones off the cluster,
    NoExecute also moves running ones away. A Cluster accepts only these two."""
    time_added: Time | None = None
    """When a NoExecute taint was added; admission sets it when empty."""


class Toleration(Model):
    """``corev1.Toleration``; ``operator`` empty means ``Equal``, ``effect`` empty means all."""

    key: str | None = None
    """Taint key the toleration matches. Empty with operator Exists matches every taint."""
    operator: str | None = None
    """How the key's value is compared: Equal (the default when empty) or Exists."""
    value: str | None = None
    """Value that must equal the taint's with operator Equal. Must be empty with Exists."""
    effect: TaintEffect | None = None
    """Taint effect matched: NoSchedule, PreferNoSchedule or NoExecute. Empty matches all effects."""
    toleration_seconds: int | None = None
    """For a NoExecute taint, seconds the workload stays before it is evicted. Empty tolerates the taint for
    ever."""


class NodeSelectorRequirement(Model):
    key: str
    """The key (or field) the requirement is about."""
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]
    """How the values are compared: In, NotIn, Exists, DoesNotExist, Gt or Lt."""
    values: list[str] | None = None
    """Values to compare with. Empty for Exists and DoesNotExist; one integer for Gt and Lt."""


class NodeSelectorTerm(Model):
    match_expressions: list[NodeSelectorRequirement] | None = None
    """Requirements on node labels, all of which must hold."""
    match_fields: list[NodeSelectorRequirement] | None = None
    """Requirements on node fields, all of which must hold."""


class NodeSelector(Model):
    node_selector_terms: list[NodeSelectorTerm]
    """Terms of which at least one must hold."""


class ObjectReference(Model):
    """``corev1.ObjectReference`` (an Event's ``involvedObject``)."""

    kind: str | None = None
    """Kind of the object referred to."""
    namespace: str | None = None
    """Namespace of the object referred to; empty for a cluster-scoped one."""
    name: str | None = None
    """Name of the object referred to."""
    uid: str | None = None
    """UID of the object referred to."""
    api_version: str | None = Field(default=None, alias="apiVersion")
    """API version of the object referred to."""
    resource_version: str | None = None
    """Resource version of the object when it was referred to."""
    field_path: str | None = None
    """Part of the object referred to, when the reference is to a piece of it."""


# --- Namespace -----------------------------------------------------------------------------------


class NamespaceSpec(Model):
    finalizers: list[str] | None = None


class NamespaceStatus(Model):
    phase: Literal["Active", "Terminating"] | None = None
    conditions: list[dict[str, Any]] | None = None


@register
class Namespace(Resource):
    """``v1`` Namespace (cluster-scoped); execution namespaces are Namespaces."""

    API_VERSION: ClassVar[str] = "v1"
    KIND: ClassVar[str] = "Namespace"
    PLURAL: ClassVar[str] = "namespaces"
    NAMESPACED: ClassVar[bool] = False
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("ns",)

    spec: NamespaceSpec = Field(default_factory=NamespaceSpec)
    status: NamespaceStatus = Field(default_factory=NamespaceStatus)


# --- Event ---------------------------------------------------------------------------------------


class EventSource(Model):
    component: str | None = None
    host: str | None = None


class EventSeries(Model):
    count: int | None = None
    last_observed_time: MicroTime | None = None


@register
class Event(Resource):
    """``v1`` Event: what happened to ``involvedObject`` and why (``reason``, ``message``)."""

    API_VERSION: ClassVar[str] = "v1"
    KIND: ClassVar[str] = "Event"
    PLURAL: ClassVar[str] = "events"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("ev",)
    HAS_STATUS: ClassVar[bool] = False

    involved_object: ObjectReference = Field(default_factory=ObjectReference)
    reason: str | None = None
    message: str | None = None
    source: EventSource | None = None
    first_timestamp: Time | None = None
    last_timestamp: Time | None = None
    count: int | None = None
    type: Literal["Normal", "Warning"] | None = None
    event_time: MicroTime | None = None
    series: EventSeries | None = None
    action: str | None = None
    related: ObjectReference | None = None
    reporting_component: str | None = None
    reporting_instance: str | None = None


__all__ = [
    "Event", "EventSeries", "EventSource", "MicroTime", "Namespace", "NamespaceSpec", "NamespaceStatus",
    "NodeSelector", "NodeSelectorRequirement", "NodeSelectorTerm", "ObjectReference", "Quantity",
    "ResourceList", "Taint", "TaintEffect", "Toleration",
]
